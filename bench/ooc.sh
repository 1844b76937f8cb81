#!/usr/bin/env bash
# bench/ooc.sh: the out-of-core executor (issue 49) under a memory cap.
#
#   bench/ooc.sh                      # kron22 (generated if missing), BFS and PageRank
#   GRAPHS="kron22 cnr-2000" bench/ooc.sh
#   SCALE=20 TIMEOUT=120 bench/ooc.sh
#   GRAPHS=kron22w ALGS=sssp bench/ooc.sh   # weighted kron22 (GAP weights 1..255)
#
# 1. Measures the disk under the data directory: sequential MB/s (dd with
#    O_DIRECT over the graph file) and random 16 KiB reads per second (cold
#    page cache, readahead off, queue depth 1, as the executor reads).
# 2. Makes a cgroup v1 memory cgroup /sys/fs/cgroup/memory/plexus-ooc-PID
#    with memory.limit_in_bytes = CAP (default: an eighth of the stored
#    graph, raised to what the executor's per-vertex arrays need, see
#    bench/NOTES.md), runs every command inside it (its PID written to
#    cgroup.procs), and reads memory.max_usage_in_bytes and memory.failcnt
#    after each run. Where no cgroup can be made it says so and runs
#    uncapped (peak RSS only).
# 3. Drops the page cache before every run (all runs are cold) and compares
#    --executor ooc --io active, --io full and the in-memory executor
#    (the fast kernel over the mapped store) under the same cap, for BFS and
#    PageRank (10 Jacobi iterations).
#
# Writes one JSON line per run to $OUT/ooc-runs.jsonl and prints a
# Markdown table. Needs root (cgroups, drop_caches).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${PLEXUS:-$ROOT/target/release/plexus}
OUT=${OUT:-$ROOT/target/ooc-bench}
DATA=${DATA:-$OUT/data}
SCALE=${SCALE:-22}
GRAPHS=${GRAPHS:-kron$SCALE}
ALGS=${ALGS:-bfs pagerank}
TIMEOUT=${TIMEOUT:-300}
SHARED=${SHARED:-$ROOT/../shared/data}
export PLEXUS_DATA=$DATA
mkdir -p "$OUT" "$DATA"
RUNS=$OUT/ooc-runs.jsonl
: > "$RUNS"

CG=/sys/fs/cgroup/memory/plexus-ooc-$$
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

# The graph's directory; imports a shared real graph or generates kron on demand.
ensure_graph() {
    local g=$1
    [ -f "$DATA/$g/graph.plx" ] && return 0
    case $g in
        kron*w) local sc=${g#kron}; "$BIN" -q generate kron --scale "${sc%w}" --weighted --name "$g" ;;
        kron*) "$BIN" -q generate kron --scale "${g#kron}" --name "$g" ;;
        USA-road-*) "$BIN" -q import "$SHARED/$g.el.gz" --undirected --name "$g" ;;
        *) "$BIN" -q import "$SHARED/$g.el.gz" --name "$g" ;;
    esac
}

disk() {
    local f=$1
    drop_caches
    local seq
    seq=$(dd if="$f" of=/dev/null bs=4M iflag=direct 2>&1 | tail -1)
    drop_caches
    local rnd
    rnd=$(python3 - "$f" <<'EOF'
import mmap, os, random, sys, time
# O_DIRECT with a page-aligned buffer: every read goes to the device.
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
size = os.fstat(fd).st_size
buf = mmap.mmap(-1, 16384)
rng = random.Random(49)
n, t = 0, time.perf_counter()
while time.perf_counter() - t < 5.0:
    os.preadv(fd, [buf], rng.randrange(size // 16384) * 16384)
    n += 1
dt = time.perf_counter() - t
print(f"{n / dt:.0f} random 16 KiB reads/s ({n} reads, {n * 16384 / dt / 1e6:.1f} MB/s)")
EOF
)
    echo "disk: sequential $seq; $rnd"
    printf '{"disk": {"sequential": "%s", "random": "%s"}}\n' "$seq" "$rnd" >> "$RUNS"
}

# run LABEL CAP -- COMMAND...: one cold run inside the cgroup; appends a JSON line.
run_capped() {
    local label=$1 cap=$2
    shift 3
    drop_caches
    if [ $HAVE_CG = 1 ]; then
        echo "$cap" > "$CG/memory.limit_in_bytes"
        echo 0 > "$CG/memory.max_usage_in_bytes"
        echo 0 > "$CG/memory.failcnt"
    fi
    local t0 t1 rc=0
    t0=$(date +%s.%N)
    if [ $HAVE_CG = 1 ]; then
        timeout "$TIMEOUT" sh -c 'echo $$ > "$0/cgroup.procs"; exec "$@"' "$CG" "$@" > "$OUT/last.json" 2> "$OUT/last.err" || rc=$?
    else
        timeout "$TIMEOUT" "$@" > "$OUT/last.json" 2> "$OUT/last.err" || rc=$?
    fi
    t1=$(date +%s.%N)
    local maxu=null fail=null
    if [ $HAVE_CG = 1 ]; then
        maxu=$(cat "$CG/memory.max_usage_in_bytes")
        fail=$(cat "$CG/memory.failcnt")
    fi
    python3 - "$label" "$cap" "$rc" "$t0" "$t1" "$maxu" "$fail" "$OUT/last.json" "$OUT/last.err" >> "$RUNS" <<'EOF'
import json, sys
label, cap, rc, t0, t1, maxu, fail, out, err = sys.argv[1:]
try:
    summary = json.load(open(out))
except Exception:
    summary = None
rec = {"label": label, "cap": int(cap), "rc": int(rc), "wall": float(t1) - float(t0),
       "max_usage": None if maxu == "null" else int(maxu),
       "failcnt": None if fail == "null" else int(fail),
       "error": open(err).read().strip()[-300:] or None, "summary": summary}
print(json.dumps(rec))
EOF
    tail -1 "$RUNS" | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); print("  %s: rc %d, wall %.1f s, max usage %s, failcnt %s" % (r["label"], r["rc"], r["wall"], r["max_usage"], r["failcnt"]))'
}

for g in $GRAPHS; do
    ensure_graph "$g"
    file=$DATA/$g/graph.plx
    stored=$(du -sb "$DATA/$g" | cut -f1)
    echo "== $g: stored $stored bytes"
    disk "$file"
    for alg in $ALGS; do
        extra=()
        [ "$alg" = pagerank ] && extra=(--iterations 10)
        # The least budget the executor takes for this algorithm (its
        # per-vertex arrays and one interval's buffers), from its refusal.
        least=$("$BIN" -q run "$alg" "$g" --executor ooc --memory 1 2>&1 | sed -n 's/.*at least \([0-9]*\) bytes.*/\1/p' || true)
        # The process itself (binary, threads, allocator) takes ~16 MiB
        # beside the budget; see bench/NOTES.md.
        reserve=$((32 << 20))
        cap=${CAP:-$((stored / 8))}
        if [ "$cap" -lt $((least + reserve + (16 << 20))) ]; then
            cap=$((least + reserve + (16 << 20)))
            echo "note: $g $alg: an eighth of the stored size is below the executor's minimum $least + reserve; cap raised to $cap"
        fi
        mem=$((cap - reserve))
        echo "-- $alg, cap $cap bytes, --memory $mem"
        for io in active full; do
            run_capped "$g $alg ooc-$io" "$cap" -- "$BIN" -q run "$alg" "$g" "${extra[@]}" --executor ooc --memory "$mem" --io "$io" --json
        done
        mem_extra=()
        [ "$alg" = pagerank ] && mem_extra=(--method jacobi --precision double)
        run_capped "$g $alg memory" "$cap" -- "$BIN" -q run "$alg" "$g" "${extra[@]}" "${mem_extra[@]}" --json
        run_capped "$g $alg memory-uncapped" $((64 << 30)) -- "$BIN" -q run "$alg" "$g" "${extra[@]}" "${mem_extra[@]}" --json
    done
done

python3 - "$RUNS" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print()
print("| run | cap MiB | rc | wall s | compute s | max usage MiB | read MiB | pages | I/O s | logs w/r MiB | supersteps |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    if "label" not in r:
        continue
    s = r["summary"] or {}
    o = s.get("ooc") or {}
    mib = lambda x: f"{x / 2**20:.1f}" if isinstance(x, (int, float)) else "–"
    cap = "none" if r["cap"] >= 64 << 30 else mib(r["cap"])
    comp = s.get("compute_seconds")
    print(f"| {r['label']} | {cap} | {r['rc']} | {r['wall']:.1f} | "
          f"{comp:.2f} | " if comp is not None else f"| {r['label']} | {cap} | {r['rc']} | {r['wall']:.1f} | – | ", end="")
    print(f"{mib(r['max_usage'])} | {mib(o.get('bytes_read'))} | {o.get('pages_read', '–')} | "
          f"{o.get('io_seconds', 0):.2f} | {mib(o.get('log_bytes_written'))}/{mib(o.get('log_bytes_read'))} | "
          f"{len(o.get('supersteps', [])) or '–'} |")
EOF
