#!/usr/bin/env bash
# Runs NetworkX's own test suite through the plexus backend
# (NETWORKX_TEST_BACKEND=plexus: every dispatchable call goes to plexus when
# can_run allows, NetworkX runs the rest: NETWORKX_FALLBACK_TO_NX=True) and
# prints the counts. Tests the backend cannot match are marked xfail, with
# their reasons, by plexus.backend.on_start_tests (XFAIL_TESTS).
#
# Usage: python/tests/run_networkx_suite.sh [extra pytest args]
#   PYTHON=/path/to/python (default: /work/pyenv/bin/python if present, else python3)
# Exit status: pytest's (0 when nothing failed).
set -uo pipefail
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x /work/pyenv/bin/python ]; then PY=/work/pyenv/bin/python; else PY=python3; fi
fi
log="$(mktemp "${TMPDIR:-/tmp}/nx-suite.XXXXXX")"
cd "$(mktemp -d "${TMPDIR:-/tmp}/nx-suite-cwd.XXXXXX")" || exit 2  # not inside the repo: test the installed networkx
version="$("$PY" -c 'import networkx; print(networkx.__version__)')"
echo "networkx $version, backend plexus ($("$PY" -c 'import plexus; print(plexus.__file__)'))"
stats="$log.stats"
NETWORKX_TEST_BACKEND=plexus NETWORKX_FALLBACK_TO_NX=True PLEXUS_NX_STATS="$stats" \
  "$PY" -m pytest --pyargs networkx -p no:cacheprovider -q --no-header \
  -rfE "$@" 2>&1 | tee "$log" | grep -E "^(FAILED|ERROR)|passed|failed" 
rc=${PIPESTATUS[0]}
summary="$(grep -E "[0-9]+ (passed|failed)" "$log" | tail -1)"
count() { echo "$summary" | grep -oE "[0-9]+ $1" | grep -oE "[0-9]+" || echo 0; }
echo "networkx=$version passed=$(count passed) failed=$(count failed) errors=$(count error) skipped=$(count skipped) xfailed=$(count xfailed) xpassed=$(count xpassed)"
# Which functions plexus served (calls that ran on the engine) and how
# often can_run sent a call back to NetworkX, summed over the processes.
"$PY" - "$stats" <<'PYEOF'
import collections, glob, json, sys
served, refused = collections.Counter(), collections.Counter()
for f in glob.glob(sys.argv[1] + ".*"):
    d = json.load(open(f))
    served.update(d["served"]); refused.update(d["refused"])
print("calls served by plexus:", sum(served.values()), "refused by can_run:", sum(refused.values()))
for name in sorted(set(served) | set(refused)):
    print(f"  {name:40s} served={served[name]:6d} refused={refused[name]:6d}")
PYEOF
echo "full log: $log"
exit "$rc"
