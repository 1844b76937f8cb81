#!/usr/bin/env bash
# Load test of `plexus serve` (issue 51): the same job mix through
# `plexus batch` (one process, shared mode) and through the server from
# N client threads of a second process on loopback (bench/serve_load.py),
# checking every server result against batch's; prints both throughputs and
# the p50/p99 latency of GET /api/jobs/{id} while the jobs run.
#
#   bench/serve.sh GRAPH [--jobs 1000] [--clients 64] [--seed 1] [--threads T]
#                        [--port 7979] [--data-dir DIR] [--debug] [--no-results]
#                        [--check K] [--scheduler POLICY] [--poll SECONDS] [--submit-all]
#
# --no-results: the clients only submit and poll (no result download or check).
# --check K: download and check every K-th job's result only (big graphs:
#   the checked jobs' batch results are written by a second, untimed batch).
# --scheduler: the server runs its jobs through that scheduler.
# --poll: seconds between a client's status requests (default 0.02).
# --submit-all: each client submits all its jobs, then waits for them (open
#   loop; default: a client submits its next job when the last has ended).
# Each client forgets its job once it has read it (the server keeps results
# in memory until then). The timed batch writes no files.
#
# GRAPH is a stored graph (`plexus generate kron --scale 20 --weighted --name kron20`).
set -euo pipefail
cd "$(dirname "$0")/.."

graph=""; jobs=1000; clients=64; seed=1; threads=0; port=7979; profile=release; extra=()
check=1; sched=(); poll=0.02; loop=()
data=()
while [ $# -gt 0 ]; do
    case "$1" in
        --jobs) jobs="$2"; shift 2 ;;
        --clients) clients="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --port) port="$2"; shift 2 ;;
        --data-dir) data=(--data-dir "$2"); shift 2 ;;
        --debug) profile=debug; shift ;;
        --no-results) extra=(--no-results); shift ;;
        --check) check="$2"; shift 2 ;;
        --poll) poll="$2"; shift 2 ;;
        --submit-all) loop=(--submit-all); shift ;;
        --scheduler) sched=(--scheduler "$2"); shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) graph="$1"; shift ;;
    esac
done
[ -n "$graph" ] || { echo "error: give a stored graph name (see --help)" >&2; exit 2; }

if [ "$profile" = release ]; then
    cargo build --release --quiet -p plexus-cli
else
    cargo build --quiet -p plexus-cli
fi
plexus="target/$profile/plexus"
out="bench/out/serve/$graph-$jobs-$seed"
rm -rf "$out" && mkdir -p "$out/batch"

"$plexus" "${data[@]}" mix --graph "$graph" --jobs "$jobs" --seed "$seed" > "$out/jobs.toml"

t0=$(date +%s.%N)
/usr/bin/time -f "%U %S" -o "$out/batch.cpu" \
    "$plexus" "${data[@]}" --threads "$threads" -q batch "$out/jobs.toml" --json > "$out/batch.json"
t1=$(date +%s.%N)
batch_wall=$(echo "$t1 - $t0" | bc -l)
if [ ${#extra[@]} -eq 0 ]; then
    # The jobs whose results the clients check (every K-th), through batch again.
    python3 - "$out/jobs.toml" "$check" > "$out/checked.toml" <<'PY'
import sys
text, k = open(sys.argv[1]).read(), int(sys.argv[2])
head, *jobs = text.split("\n[[job]]\n")
print(head + "".join("\n[[job]]\n" + j for i, j in enumerate(jobs) if i % k == 0))
PY
    "$plexus" "${data[@]}" --threads "$threads" -q batch "$out/checked.toml" --out-dir "$out/batch" --json > /dev/null
fi

"$plexus" "${data[@]}" --threads "$threads" serve --bind "127.0.0.1:$port" --max-queued-per-client 100000 \
    --max-queued 100000 "${sched[@]}" 2> "$out/serve.log" &
server=$!
trap 'kill -TERM $server 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/api/health" >/dev/null 2>&1 && break
    sleep 0.1
done
status=0
python3 bench/serve_load.py --url "http://127.0.0.1:$port" --jobs "$out/jobs.toml" \
    --batch-dir "$out/batch" --clients "$clients" --check-every "$check" --poll "$poll" "${loop[@]}" "${extra[@]}" --json > "$out/load.json" || status=$?
curl -sf "http://127.0.0.1:$port/metrics" > "$out/metrics.txt" || true
# The server's CPU seconds (user + system, all threads) over its life.
server_cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$server/stat" 2>/dev/null || echo "?")
kill -TERM $server; wait $server || true
trap - EXIT

python3 -c "import json; b=json.load(open('$out/batch.json')); print('batch passes', b.get('passes', b.get('stats', {}).get('passes')))" || true
grep -E '^plexus_scan_(passes|task_chunks)_total|^plexus_topology_bytes_read_total' "$out/metrics.txt" || true
serve_wall=$(python3 -c "import json; print(json.load(open('$out/load.json'))['wall_seconds'])")
cat "$out/load.json"
echo "CPU seconds: batch $(awk '{print $1 + $2}' "$out/batch.cpu") (process), server $server_cpu (process, start and idle included), load generator $(python3 -c "import json; print(round(json.load(open('$out/load.json'))['client_cpu_seconds'], 2))")"
printf 'batch %s jobs: %.2f s (process, load included); server: %.2f s from first submit to last result; ratio %.2f\n' \
    "$jobs" "$batch_wall" "$serve_wall" "$(echo "$serve_wall / $batch_wall" | bc -l)"
exit $status
