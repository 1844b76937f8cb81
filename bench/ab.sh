#!/usr/bin/env bash
# Side by side: two plexus binaries on the same stored graphs, every kernel
# the registry benchmarks, alternated (A B A B ...), each run the median of
# --repeat timed runs after a warm-up; prints per kernel the median of the
# rounds' medians for A and B and B/A. Equal work: the same graph, the same
# options and sources, the same stopping rules.
#
#   [KERNELS=a,b] [JOBS="a.toml b.toml"] bench/ab.sh A_BIN B_BIN DATA_DIR "GRAPH[,GRAPH...]" [ROUNDS] [REPEAT]
#
# Graphs must already be stored in DATA_DIR (plexus import / generate).
set -euo pipefail
A=$1 B=$2 DATA=$3 GRAPHS=$4 ROUNDS=${5:-3} REPEAT=${6:-5}
kernels=$("$B" algorithms --json | python3 -c '
import json, sys
for e in json.load(sys.stdin)["algorithms"]:
    if e.get("bench_graphs"):
        print(e["name"], e["bench_graphs"])')
opts() { # kernel -> extra options (the harness's stopping rules)
  case $1 in
    pagerank) echo "--tolerance 1e-10";;
    ppr) echo "--tolerance 1e-10";;
    betweenness) echo "--samples 4";;
    cdlp) echo "--iterations 10";;
    *) echo "";;
  esac
}
median() { python3 -c 'import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
printf "%-14s %-12s %10s %10s %7s\n" graph kernel A_ms B_ms B/A
for g in ${GRAPHS//,/ }; do
  directed=$("$B" --data-dir "$DATA" info "$g" --json | python3 -c 'import json,sys; print("directed" if json.load(sys.stdin)["directed"] else "undirected")')
  weighted=$("$B" --data-dir "$DATA" info "$g" --json | python3 -c 'import json,sys; print(json.load(sys.stdin).get("weights") not in (None, False, "none"))')
  while read -r k scope; do
    [ "$scope" = any ] || [ "$scope" = "$directed" ] || continue
    [ "$k" = sssp ] && [ "$weighted" != True ] && continue
    [ -n "${KERNELS:-}" ] && [[ ",$KERNELS," != *",$k,"* ]] && continue
    a=() b=()
    for r in $(seq "$ROUNDS"); do
      for which in A B; do
        bin=$A; [ $which = B ] && bin=$B
        t=$("$bin" --data-dir "$DATA" -q run "$k" "$g" $(opts "$k") --repeat "$REPEAT" --warmup 0.3 --json \
            | python3 -c 'import json,sys; print(json.load(sys.stdin)["compute_seconds"]*1e3)')
        if [ $which = A ]; then a+=("$t"); else b+=("$t"); fi
      done
    done
    ma=$(median "${a[@]}") mb=$(median "${b[@]}")
    printf "%-14s %-12s %10.2f %10.2f %7.3f\n" "$g" "$k" "$ma" "$mb" "$(python3 -c "print($mb/$ma)")"
  done <<< "$kernels"
done
# JOBS="a.toml b.toml": also each job file through `batch --mode shared`
# (wall seconds of the whole batch, alternated the same way).
for jobs in ${JOBS:-}; do
  a=() b=()
  for r in $(seq "$ROUNDS"); do
    for which in A B; do
      bin=$A; [ $which = B ] && bin=$B
      t=$("$bin" --data-dir "$DATA" batch "$jobs" --mode shared --json --quiet \
          | python3 -c 'import json,sys; print(json.load(sys.stdin)["wall_seconds"]*1e3)')
      if [ $which = A ]; then a+=("$t"); else b+=("$t"); fi
    done
  done
  ma=$(median "${a[@]}") mb=$(median "${b[@]}")
  printf "%-14s %-12s %10.2f %10.2f %7.3f\n" "batch" "$(basename "$jobs" .toml)" "$ma" "$mb" "$(python3 -c "print($mb/$ma)")"
done
