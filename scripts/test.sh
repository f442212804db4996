#!/usr/bin/env bash
# Sets up .venv (scripts/setup.sh) and runs the whole test suite: unit, Ray and e2e tiers.
# With no arguments, in two runs: the unit tier (no Ray, no opencode) on every core with
# pytest-xdist, then the Ray, e2e and serial tiers in one process, sharing one local Ray instance
# (a serial test starts a cluster of its own and must not run beside other tests).
# With arguments (files, -k, -m ...), one serial pytest run with them.
# pytest's exit code 5 ("no tests collected") is turned into a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
export RAY_USAGE_STATS_ENABLED=0 RAY_AUTH_MODE=disabled
PYTEST=(.venv/bin/python -m pytest -q -p no:cacheprovider)

run() {
  "${PYTEST[@]}" "$@"
  local rc=$?
  if [ "$rc" -eq 5 ]; then
    echo "test.sh: pytest collected no tests; that is a failure" >&2
    return 1
  fi
  return "$rc"
}

if [ "$#" -gt 0 ]; then
  run "$@"
  rc=$?
else
  run -m "not ray and not e2e and not serial" -n "${DYNMEM_TEST_WORKERS:-auto}"
  unit=$?
  tiers=0
  case "$unit" in
    2|3|4) echo "test.sh: the unit tier was interrupted or could not run (exit $unit); Ray and e2e tiers skipped" >&2 ;;
    *) run -m "ray or e2e or serial"; tiers=$? ;;
  esac
  rc=$(( unit != 0 ? unit : tiers ))
  echo "test.sh: unit tier exit $unit, Ray and e2e tiers exit $tiers"
fi
# Leave no Ray processes behind, whatever happened.
.venv/bin/ray stop --force >/dev/null 2>&1 || true
exit "$rc"
