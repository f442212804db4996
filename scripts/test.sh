#!/usr/bin/env bash
# Sets up .venv (scripts/setup.sh) and runs the whole test suite: unit, Ray and e2e tiers.
# pytest's exit code 5 ("no tests collected") is turned into a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
export RAY_USAGE_STATS_ENABLED=0 RAY_AUTH_MODE=disabled
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
rc=$?
# Leave no Ray processes behind, whatever happened.
.venv/bin/ray stop --force >/dev/null 2>&1 || true
if [ "$rc" -eq 5 ]; then
  echo "test.sh: pytest collected no tests; that is a failure" >&2
  exit 1
fi
exit "$rc"
