#!/usr/bin/env bash
# bench/import_bounded.sh: bounded-memory import (issue 49 item 4).
#
#   bench/import_bounded.sh                 # kron24's edge list, 1 GiB cap
#   SCALE=20 CAP=256M bench/import_bounded.sh
#   SCALE=20 CAP=256M FORMAT=csv-strings bench/import_bounded.sh
#
# FORMAT: el (default), csv (the same edges as a CSV table with a header)
# or csv-strings (a CSV table whose ids are names "v<id>", imported with
# --ids string: the names are held in memory, the edges spooled).
#
# 1. Writes kron$SCALE's edge list (`plexus generate kron --out`, streamed
#    with --memory) unless $OUT/kron$SCALE.el exists.
# 2. Imports it cold (page cache dropped first) twice: unbounded, and with
#    `--memory $CAP` inside a cgroup v1 memory cgroup whose
#    memory.limit_in_bytes is the same cap (page cache charged to it too).
#    Both imports run inside the cgroup, the unbounded one with no limit,
#    so memory.max_usage_in_bytes is the peak of each.
# 3. Checks that the two graph.plx files are byte-identical (cmp), prints
#    time and peak of each and appends JSON lines to $OUT/import-runs.jsonl.
#
# Needs root (cgroups, drop_caches) and about 6 GB of disk per 2^24
# vertices beside the store (edge list, spool, runs). KEEP=1 keeps the
# files; otherwise the edge list and the graphs are removed at the end.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${PLEXUS:-$ROOT/target/release/plexus}
OUT=${OUT:-$ROOT/target/import-bench}
DATA=${DATA:-$OUT/data}
SCALE=${SCALE:-24}
CAP=${CAP:-1G}
FORMAT=${FORMAT:-el}
TIMEOUT=${TIMEOUT:-3600}
mkdir -p "$OUT" "$DATA"
RUNS=$OUT/import-runs.jsonl
EL=$OUT/kron$SCALE.el
cap_bytes=$(python3 -c 'import sys; s=sys.argv[1]; u={"K":1<<10,"M":1<<20,"G":1<<30,"T":1<<40}; print(int(float(s[:-1])*u[s[-1]]) if s[-1] in u else int(s))' "$CAP")

CG=/sys/fs/cgroup/memory/plexus-import-$$
HAVE_CG=0
if mkdir "$CG" 2>/dev/null; then
    HAVE_CG=1
    trap 'rmdir "$CG" 2>/dev/null || true' EXIT
else
    echo "note: cannot create $CG (no writable cgroup v1 memory controller): runs are uncapped, peak RSS only" >&2
fi

drop_caches() {
    sync
    echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || echo "note: cannot drop the page cache; runs are not cold" >&2
}

if [ ! -s "$EL" ]; then
    echo "writing kron$SCALE's edge list to $EL"
    "$BIN" -q --data-dir "$DATA" generate kron --scale "$SCALE" --memory "$CAP" --out "$EL"
fi
IN=$EL
EXTRA=()
case "$FORMAT" in
    el) ;;
    csv)
        IN=$OUT/kron$SCALE.csv
        [ -s "$IN" ] || { echo "src,dst"; tr ' ' ','; } < "$EL" > "$IN"
        ;;
    csv-strings)
        IN=$OUT/kron$SCALE-names.csv
        [ -s "$IN" ] || awk 'BEGIN { print "src,dst" } { print "v" $1 ",v" $2 }' "$EL" > "$IN"
        EXTRA=(--ids string)
        ;;
    *) echo "error: FORMAT must be el, csv or csv-strings, got $FORMAT" >&2; exit 2 ;;
esac
ls -l "$IN"

# run LABEL LIMIT -- COMMAND...: one cold run in the cgroup, limited to LIMIT bytes (-1: none).
run() {
    local label=$1 limit=$2
    shift 3
    drop_caches
    if [ $HAVE_CG = 1 ]; then
        echo "$limit" > "$CG/memory.limit_in_bytes"
        echo 0 > "$CG/memory.max_usage_in_bytes"
        echo 0 > "$CG/memory.failcnt"
    fi
    local t0 t1 rc=0
    t0=$(date +%s.%N)
    if [ $HAVE_CG = 1 ]; then
        timeout "$TIMEOUT" sh -c 'echo $$ > "$0/cgroup.procs"; exec "$@"' "$CG" /usr/bin/time -v "$@" > "$OUT/last.out" 2> "$OUT/last.err" || rc=$?
    else
        timeout "$TIMEOUT" /usr/bin/time -v "$@" > "$OUT/last.out" 2> "$OUT/last.err" || rc=$?
    fi
    t1=$(date +%s.%N)
    local maxu=null
    [ $HAVE_CG = 1 ] && maxu=$(cat "$CG/memory.max_usage_in_bytes")
    local rss
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$OUT/last.err")
    python3 - "$label" "$limit" "$rc" "$t0" "$t1" "$maxu" "${rss:-0}" "$OUT/last.out" "$OUT/last.err" >> "$RUNS" <<'PY'
import json, sys
label, limit, rc, t0, t1, maxu, rss, out, err = sys.argv[1:]
rec = {"label": label, "limit": int(limit), "rc": int(rc), "wall_s": round(float(t1) - float(t0), 1),
       "cgroup_max_usage": None if maxu == "null" else int(maxu), "max_rss": int(rss) * 1024,
       "stdout": open(out).read().strip()[-300:],
       "error": None if int(rc) == 0 else open(err).read().strip()[-300:]}
print(json.dumps(rec))
PY
    tail -1 "$RUNS" | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); m=r["cgroup_max_usage"]; print("  %-10s rc %d, wall %.1f s, cgroup peak %s MiB, max RSS %d MiB" % (r["label"], r["rc"], r["wall_s"], "-" if m is None else m >> 20, r["max_rss"] >> 20))'
}

echo "== kron$SCALE ($FORMAT): unbounded, then --memory $CAP under a $CAP cgroup cap"
run "unbounded-$FORMAT" -1 -- "$BIN" -q --data-dir "$DATA" import "$IN" "${EXTRA[@]}" --undirected --name unbounded --force
run "bounded-$FORMAT" "$cap_bytes" -- "$BIN" -q --data-dir "$DATA" import "$IN" "${EXTRA[@]}" --undirected --name bounded --force --memory "$CAP"
if [ -f "$DATA/unbounded/graph.plx" ] && [ -f "$DATA/bounded/graph.plx" ]; then
    if cmp -s "$DATA/unbounded/graph.plx" "$DATA/bounded/graph.plx"; then
        echo "graph.plx byte-identical ($(stat -c %s "$DATA/bounded/graph.plx") bytes)"
    else
        echo "graph.plx DIFFERS" >&2
        exit 1
    fi
fi
if [ "${KEEP:-0}" != 1 ]; then
    rm -rf "$EL" "$DATA/unbounded" "$DATA/bounded"
    [ "$IN" = "$EL" ] || rm -f "$IN"
fi
