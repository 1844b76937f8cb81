#!/usr/bin/env bash
# Concurrent-jobs benchmark (issue 6): for each job count, writes one mix with
# `plexus mix` and runs it in the three modes of `plexus batch`:
# S (sequential), C (independent) and M (shared scan, fused lanes); prints
# throughput, latency p50/p95, peak RSS, topology + peak job state, and the
# bytes of topology read. Every batch is a fresh process; JSON reports are
# kept under bench/out/jobs/.
#
#   bench/jobs.sh GRAPH [--jobs "1 4 8 16 32"] [--seed S] [--algos LIST]
#                       [--poisson LAMBDA] [--llc SIZE] [--threads T] [--data-dir DIR]
#                       [--pr-precision double|single]
#
# GRAPH is a stored graph (`plexus generate kron --scale 22 --weighted --name
# kron22`, or `plexus import ../shared/data/cnr-2000.el.gz --name cnr-2000`).
# SSSP needs a weighted graph; on an unweighted one `plexus mix` leaves it out.
set -euo pipefail
cd "$(dirname "$0")/.."

graph=""
counts="1 4 8 16 32"
seed=1
algos=""
poisson=""
llc=""
threads=2
precision=""
data=()
while [ $# -gt 0 ]; do
    case "$1" in
        --jobs) counts="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --algos) algos="$2"; shift 2 ;;
        --poisson) poisson="$2"; shift 2 ;;
        --llc) llc="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --pr-precision) precision="$2"; shift 2 ;;
        --data-dir) data=(--data-dir "$2"); shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) graph="$1"; shift ;;
    esac
done
if [ -z "$graph" ]; then
    echo "error: give a stored graph name (see --help)" >&2
    exit 2
fi
command -v jq >/dev/null || { echo "error: bench/jobs.sh needs jq" >&2; exit 2; }

cargo build --release --quiet -p plexus-cli
plexus=target/release/plexus
out=bench/out/jobs
mkdir -p "$out"

mix_args=(--graph "$graph" --seed "$seed")
[ -n "$algos" ] && mix_args+=(--algos "$algos")
[ -n "$poisson" ] && mix_args+=(--poisson "$poisson")
[ -n "$precision" ] && mix_args+=(--pr-precision "$precision")
batch_args=(--json --quiet --threads "$threads")
[ -n "$llc" ] && batch_args+=(--llc "$llc")

mib() { awk -v b="$1" 'BEGIN { if (b == "" || b == "null") print "-"; else printf "%.1f", b / 1048576 }'; }
sec() { awk -v s="$1" 'BEGIN { if (s == "" || s == "null") print "-"; else printf "%.3f", s }'; }

echo "graph $graph, threads $threads, seed $seed$( [ -n "$poisson" ] && echo ", Poisson arrivals λ=$poisson/s"), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%5s %-4s %9s %11s %9s %9s %10s %12s %12s %8s\n' \
    jobs mode wall_s jobs/hour p50_s p95_s rss_MiB model_MiB read_MiB failed
for n in $counts; do
    jobs="$out/$graph-$n.toml"
    "$plexus" "${data[@]}" mix "${mix_args[@]}" --jobs "$n" > "$jobs"
    for mode in sequential independent shared; do
        report="$out/$graph-$n-$mode.json"
        # A failing job makes batch exit 2 after printing its report.
        "$plexus" "${data[@]}" batch "$jobs" --mode "$mode" "${batch_args[@]}" > "$report" || true
        if ! jq -e .mode "$report" >/dev/null 2>&1; then
            echo "error: batch $jobs --mode $mode gave no report" >&2
            exit 1
        fi
        read -r wall tput p50 p95 rss model bytes failed < <(jq -r \
            '[.wall_seconds, .throughput_jobs_per_hour, .latency_p50_seconds, .latency_p95_seconds,
              .peak_rss_bytes, .memory_model_bytes, .topology_bytes_read, .jobs_failed] | map(tostring) | join(" ")' \
            "$report")
        letter=$(case $mode in sequential) echo S ;; independent) echo C ;; shared) echo M ;; esac)
        printf '%5s %-4s %9s %11.0f %9s %9s %10s %12s %12s %8s\n' \
            "$n" "$letter" "$(sec "$wall")" "$tput" "$(sec "$p50")" "$(sec "$p95")" \
            "$(mib "$rss")" "$(mib "$model")" "$(mib "$bytes")" "$failed"
    done
done
