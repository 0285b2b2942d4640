#!/usr/bin/env bash
# Install a real inference engine for the `engine` tests: llama-cpp-python[server] 0.3.36 (built
# from source once, the wheel kept in $LLAMA_WHEEL_DIR if set) and gguf (the GGUF converter's
# library). The sdist stays beside the wheel: the tests take llama.cpp's converter from it.
# Usage (in the activated venv): . .ci/engine_setup.sh   (exports LLAMA_CPP_SDIST)
set -euo pipefail
VERSION=0.3.36
DIR="${LLAMA_WHEEL_DIR:-${TMPDIR:-/tmp}/llama-wheels}"
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
