#!/usr/bin/env bash
# bench/ooc.sh: the out-of-core executor (issue 49) under a memory cap.
#
#   bench/ooc.sh                      # kron22 (generated if missing), BFS and PageRank
#   GRAPHS="kron22 cnr-2000" bench/ooc.sh
#   SCALE=20 TIMEOUT=120 bench/ooc.sh
#   GRAPHS=kron22w ALGS=sssp bench/ooc.sh   # weighted kron22 (GAP weights 1..255)
#   BATCH=16 GRAPHS=kron20 bench/ooc.sh     # shared batch: N/2 PageRank + N/2 BFS
#
# With BATCH=N the script runs, per graph, N jobs (N/2 PageRank with 10
# Jacobi iterations at dampings 0.85, 0.84, ..., and N/2 BFS from the
# sources in $SOURCES) once as one shared out-of-core batch (`plexus batch
# --executor ooc`) and once one after another (`plexus run --executor ooc`
# per job), every run cold under the same cap: the batch's least budget
# (from its refusal) + 32 MiB for the process + 64 MiB, or CAP. It prints
# bytes read and wall time of both and the throughput ratio.
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

# batch_mode G N: N jobs shared against one after another (see the header).
batch_mode() {
    local g=$1 n=$2
    local jobs=$OUT/batch-$g.toml half=$((n / 2))
    local sources=(${SOURCES:-0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15})
    echo "graph = \"$g\"" > "$jobs"
    local i solo=()
    for ((i = 0; i < half; i++)); do
        local d
        d=$(python3 -c "print(f'{0.85 - 0.01 * $i:.2f}')")
        printf '[[job]]\nname = "pr-%d"\nalgorithm = "pagerank"\ndamping = %s\niterations = 10\n' "$i" "$d" >> "$jobs"
        solo+=("pagerank --damping $d --iterations 10")
    done
    for ((i = 0; i < n - half; i++)); do
        local s=${sources[$((i % ${#sources[@]}))]}
        printf '[[job]]\nname = "bfs-%d"\nalgorithm = "bfs"\nsource = %s\n' "$i" "$s" >> "$jobs"
        solo+=("bfs --source $s")
    done
    local least
    least=$("$BIN" -q batch "$jobs" --executor ooc --memory 1 2>&1 | sed -n 's/.*at least \([0-9]*\) bytes.*/\1/p' || true)
    local reserve=$((32 << 20))
    local cap=${CAP:-$((least + reserve + (64 << 20)))}
    local mem=$((cap - reserve))
    echo "-- $g: $n jobs, cap $cap bytes, --memory $mem (the batch's least: $least)"
    run_capped "$g batch-$n shared" "$cap" -- "$BIN" -q batch "$jobs" --executor ooc --memory "$mem" --json
    for ((i = 0; i < n; i++)); do
        local alg=${solo[$i]%% *} args=${solo[$i]#* }
        # shellcheck disable=SC2086
        run_capped "$g batch-$n solo $i" "$cap" -- "$BIN" -q run "$alg" "$g" $args --executor ooc --memory "$mem" --json
    done
    python3 - "$RUNS" "$g batch-$n" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"label"' in l]
pre = sys.argv[2]
sh = [r for r in rows if r["label"] == pre + " shared"][-1]
solo = [r for r in rows if r["label"].startswith(pre + " solo ")]
s = sh["summary"] or {}
sb = sum(x["bytes_read"] for x in s.get("shared", []))
ob = sum(((r["summary"] or {}).get("ooc") or {}).get("bytes_read", 0) for r in solo)
ow = sum(r["wall"] for r in solo)
mib = lambda x: f"{x / 2**20:,.1f}" if x is not None else "–"
print()
print("| run | rc | wall s | read MiB | cgroup max MiB | failcnt |")
print("|---|---|---|---|---|---|")
print(f"| shared batch | {sh['rc']} | {sh['wall']:.1f} | {mib(sb)} | {mib(sh['max_usage'])} | {sh['failcnt']} |")
mx = max((r["max_usage"] or 0) for r in solo) if solo else None
fails = sum((r["failcnt"] or 0) for r in solo)
rcs = max((r["rc"] for r in solo), default=0)
print(f"| {len(solo)} solo runs, one after another | {rcs} | {ow:.1f} | {mib(ob)} | {mib(mx)} | {fails} |")
for r in [sh] + solo:
    if r["rc"] != 0:
        print(f"  {r['label']}: exit {r['rc']}: {r['error']}")
if sh["wall"] > 0 and sb > 0:
    print(f"\nthroughput shared / one after another: {ow / sh['wall']:.2f}x; bytes read: {ob / sb:.2f}x fewer")
EOF
}

for g in $GRAPHS; do
    ensure_graph "$g"
    if [ -n "${BATCH:-}" ]; then
        batch_mode "$g" "$BATCH"
        continue
    fi
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
