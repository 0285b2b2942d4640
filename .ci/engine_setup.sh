#!/usr/bin/env bash
# Install a real inference engine for the `engine` tests: llama-cpp-python[server] 0.3.36 (built
# from source once, the wheel kept in $LLAMA_WHEEL_DIR if set) and gguf (the GGUF converter's
# library). The sdist stays beside the wheel: the tests take llama.cpp's converter from it.
# Usage (in the activated venv): . .ci/engine_setup.sh   (exports LLAMA_CPP_SDIST)
set -euo pipefail
VERSION=0.3.36
# A portable AVX2 build, not -march=native: a virtual machine may advertise Intel AMX that it
# does not let a process use, and llama.cpp's native build then dies with SIGILL on its first
# AMX tile load (tileloadd, in ggml_backend_amx_mul_mat on a Q8_0 model). The flags name the
# wheel's folder, so a wheel built with other flags is never reused.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}"
FLAGS_TAG=$(printf '%s' "$CMAKE_ARGS" | sha256sum | cut -c1-12)
DIR="${LLAMA_WHEEL_DIR:-${TMPDIR:-/tmp}/llama-wheels}/$FLAGS_TAG"
mkdir -p "$DIR"
SDIST="$DIR/llama_cpp_python-$VERSION.tar.gz"
[ -f "$SDIST" ] || pip download -q --no-deps --no-binary llama-cpp-python "llama-cpp-python==$VERSION" -d "$DIR"
WHEEL=$(ls "$DIR"/llama_cpp_python-"$VERSION"-*.whl 2>/dev/null | head -n1 || true)
if [ -z "$WHEEL" ]; then
    pip wheel -q --no-deps "$SDIST" -w "$DIR"  # 6-10 minutes on 2 cores
    WHEEL=$(ls "$DIR"/llama_cpp_python-"$VERSION"-*.whl | head -n1)
fi
pip install -q "$WHEEL" "llama-cpp-python[server]==$VERSION" gguf
export LLAMA_CPP_SDIST="$SDIST"
echo "llama-cpp-python $VERSION installed; LLAMA_CPP_SDIST=$SDIST"
