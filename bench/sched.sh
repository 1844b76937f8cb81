#!/usr/bin/env bash
# Scheduler benchmark (issue 7): for each graph, profiles it, writes 16- and
# 32-job Poisson streams with `plexus mix`, runs each through
# `plexus batch --scheduler congra|congra-nobypass|all|fifo` here, and
# replays the same stream with `plexus simulate` on bench/machines/this.toml
# (calibration: predicted vs measured throughput) and a stream with the
# arrival rate scaled by the core ratio on bench/machines/two-socket-16.toml.
# Prints one table per graph; JSON reports are kept under bench/out/sched/.
#
#   bench/sched.sh [GRAPH...] [--jobs "16 32"] [--seed S] [--load L]
#                  [--reps R] [--data-dir DIR] [--no-chrt] [--sim-only]
#                  [--policies "congra congra-fixed congra-nobypass all fifo"]
#
# --sim-only: no batch runs (nothing timed here except a missing profile,
# made once with `plexus profile`); prints the simulated columns only.
# Each batch runs R times (default 3) under `chrt -r 50` (round-robin real
# time: less noise from other work; SCHED_FIFO would stop the `all` policy's
# threads from time-sharing); the run of median throughput is reported.
#
# GRAPH: a stored graph, or kron20/kron22 (generated when missing, weighted),
# or cnr-2000, soc-Slashdot0902, USA-road-FLA (imported from ../shared/data
# when missing; skipped with a message when it is absent). Default: kron22
# if stored, else kron20; then the three real graphs.
#
# Arrival rate: λ = L / (mean profiled time of the mix's algorithms alone
# with every core); L = 1 (default) offers as much work as fifo can serve.
# The modelled machine's stream uses λ × 8 (16 cores ÷ 2).
set -euo pipefail
cd "$(dirname "$0")/.."

graphs=()
counts="16 32"
seed=1
load=1
data_dir=plexus-data
chrt_cmd=(chrt -r 50)
reps=3
sim_only=0
policies="congra congra-fixed congra-nobypass all fifo"
while [ $# -gt 0 ]; do
    case "$1" in
        --jobs) counts="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --load) load="$2"; shift 2 ;;
        --reps) reps="$2"; shift 2 ;;
        --data-dir) data_dir="$2"; shift 2 ;;
        --no-chrt) chrt_cmd=(); shift ;;
        --sim-only) sim_only=1; shift ;;
        --policies) policies="$2"; shift 2 ;;
        -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
        -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) graphs+=("$1"); shift ;;
    esac
done
command -v jq >/dev/null || { echo "error: bench/sched.sh needs jq" >&2; exit 2; }
if [ ${#chrt_cmd[@]} -gt 0 ] && ! chrt -r 50 true 2>/dev/null; then chrt_cmd=(); fi

nice -n 10 cargo build --release --quiet -p plexus-cli
plexus=(target/release/plexus --data-dir "$data_dir")
out=bench/out/sched
mkdir -p "$out"
shared=../shared/data

if [ ${#graphs[@]} -eq 0 ]; then
    if "${plexus[@]}" info kron22 >/dev/null 2>&1; then graphs=(kron22); else graphs=(kron20); fi
    graphs+=(cnr-2000 soc-Slashdot0902 USA-road-FLA)
fi

ensure_graph() {
    local g="$1"
    "${plexus[@]}" info "$g" >/dev/null 2>&1 && return 0
    case "$g" in
        kron*) nice -n 10 "${plexus[@]}" -q generate kron --scale "${g#kron}" --weighted --name "$g" ;;
        *)
            if [ ! -f "$shared/$g.el.gz" ]; then
                echo "skip $g: $shared/$g.el.gz is absent"
                return 1
            fi
            nice -n 10 "${plexus[@]}" -q import "$shared/$g.el.gz" --name "$g" --duplicates min ;;
    esac
}

[ -f "$data_dir/machine.json" ] || "${plexus[@]}" probe --array-mib 256 --repetitions 3 >/dev/null
sim_policies=$(echo $policies | tr ' ' ',')
echo "machine: $(nproc) cores, $(ls -d /sys/devices/system/node/node* 2>/dev/null | wc -l) NUMA node(s), triad $(jq .triad_gbs "$data_dir/machine.json") GB/s; $(date -u +%Y-%m-%dT%H:%MZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
for g in "${graphs[@]}"; do
    ensure_graph "$g" || continue
    # Reuses a profile that is up to date (a fresh one is made otherwise).
    "${chrt_cmd[@]}" "${plexus[@]}" -q profile "$g" --runs 3 > "$out/$g-profile.txt" 2>&1
    prof="$data_dir/$g/profile.json"
    # Mean solo time at every core over the algorithms the mix uses.
    mean=$(jq '[.algorithms | to_entries[] | .value.seconds[-1]] | add / length' "$prof")
    lambda=$(awk -v l="$load" -v m="$mean" 'BEGIN { printf "%.4f", l / m }')
    lambda_model=$(awk -v x="$lambda" 'BEGIN { printf "%.4f", x * 8 }')
    echo
    echo "graph $g: mean solo time $(printf '%.3f' "$mean") s, λ = $lambda jobs/s here, $lambda_model jobs/s on the modelled 16-core machine, seed $seed"
    if [ "$sim_only" = 1 ]; then
        printf '%4s %-21s | %10s %7s %7s | %10s %7s %7s %7s\n' \
            jobs policy "sim j/h" "QoS50" "QoS95" "2s16 j/h" "QoS50" "QoS95" "÷naive"
    else
        printf '%4s %-15s | %10s %7s %7s | %10s %7s | %10s %7s %7s\n' \
            jobs policy "meas j/h" "QoS50" "QoS95" "sim j/h" "err%" "2s16 j/h" "QoS50" "QoS95"
    fi
    for n in $counts; do
        jobs="$out/$g-$n.toml"
        jobs_model="$out/$g-$n-model.toml"
        "${plexus[@]}" mix --graph "$g" --jobs "$n" --seed "$seed" --poisson "$lambda" > "$jobs"
        "${plexus[@]}" mix --graph "$g" --jobs "$n" --seed "$seed" --poisson "$lambda_model" > "$jobs_model"
        "${plexus[@]}" simulate "$jobs" --machine bench/machines/this.toml --policies "$sim_policies" --json > "$out/$g-$n-sim-this.json"
        "${plexus[@]}" simulate "$jobs_model" --machine bench/machines/two-socket-16.toml --policies "$sim_policies" --json > "$out/$g-$n-sim-2s16.json"
        if [ "$sim_only" = 1 ]; then
            # ÷naive: the policy's modelled throughput over the better of all and fifo.
            naive=$(jq '[.policies.all.throughput_jobs_per_hour // 0, .policies.fifo.throughput_jobs_per_hour // 0] | max' "$out/$g-$n-sim-2s16.json")
            for p in $policies; do
                read -r st s50 s95 < <(jq -r --arg p "$p" '.policies[$p] | [.throughput_jobs_per_hour, .qos_p50, .qos_p95] | map(tostring) | join(" ")' "$out/$g-$n-sim-this.json")
                read -r xt x50 x95 < <(jq -r --arg p "$p" '.policies[$p] | [.throughput_jobs_per_hour, .qos_p50, .qos_p95] | map(tostring) | join(" ")' "$out/$g-$n-sim-2s16.json")
                ratio=$(awk -v x="$xt" -v n="$naive" 'BEGIN { printf "%.2f", (n > 0 ? x / n : 0) }')
                printf '%4s %-21s | %10.0f %7.2f %7.2f | %10.0f %7.2f %7.2f %7s\n' \
                    "$n" "$p" "$st" "$s50" "$s95" "$xt" "$x50" "$x95" "$ratio"
            done
            continue
        fi
        for p in $policies; do
            for r in $(seq 1 "$reps"); do
                rep="$out/$g-$n-$p-run$r.json"
                "${chrt_cmd[@]}" "${plexus[@]}" batch "$jobs" --scheduler "$p" --json --quiet > "$rep" || true
                jq -e .scheduler "$rep" >/dev/null 2>&1 || { echo "error: batch $jobs --scheduler $p gave no report" >&2; exit 1; }
            done
            # The run of median throughput.
            report="$out/$g-$n-$p.json"
            median_run=$(for r in $(seq 1 "$reps"); do echo "$(jq .throughput_jobs_per_hour "$out/$g-$n-$p-run$r.json") $r"; done \
                | sort -g | awk '{ a[NR] = $2 } END { print a[int((NR + 1) / 2)] }')
            cp "$out/$g-$n-$p-run$median_run.json" "$report"
            read -r mt m50 m95 < <(jq -r '[.throughput_jobs_per_hour, .qos_p50, .qos_p95] | map(tostring) | join(" ")' "$report")
            read -r st < <(jq -r --arg p "$p" '.policies[$p].throughput_jobs_per_hour' "$out/$g-$n-sim-this.json")
            read -r xt x50 x95 < <(jq -r --arg p "$p" '.policies[$p] | [.throughput_jobs_per_hour, .qos_p50, .qos_p95] | map(tostring) | join(" ")' "$out/$g-$n-sim-2s16.json")
            err=$(awk -v s="$st" -v m="$mt" 'BEGIN { printf "%+.1f", (s - m) / m * 100 }')
            printf '%4s %-15s | %10.0f %7.2f %7.2f | %10.0f %7s | %10.0f %7.2f %7.2f\n' \
                "$n" "$p" "$mt" "$m50" "$m95" "$st" "$err" "$xt" "$x50" "$x95"
        done
    done
done
