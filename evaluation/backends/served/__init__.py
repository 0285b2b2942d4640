"""The ``served`` backend: score through an OpenAI-compatible completion server (vLLM, SGLang,
llama.cpp) that echoes prompt log-probabilities, after checking the engine with a probe."""
