#!/usr/bin/env bash
# bench/dist.sh: the distributed executor under mpirun (issue 50) against
# the in-memory executor on the same machine.
#
#   bench/dist.sh                          # kron20 (weighted) and USA-road-FLA
#   GRAPHS="kron22" SCALES=22 bench/dist.sh
#   NPS="1 2" ALGS="pagerank bfs" bench/dist.sh
#
# Needs a `--features mpi` build (PLEXUS=path, default target/release/plexus)
# and OpenMPI (crates/dist/tests/install-mpi.sh). For each graph and
# algorithm: `plexus run --executor memory` and `mpirun -np N plexus run
# --executor dist` for N in $NPS, each one process with `--repeat $REPEAT`
# (the median compute time); ranks × threads = the machine's cores
# (`--threads cores/N`, at least 1). PageRank runs 20 Jacobi iterations in
# double precision on both executors (`--method jacobi --precision double
# --iterations 20 --tolerance 1e-300`), so the work is equal. Writes one JSON
# object per run to $OUT/dist-runs.jsonl and prints a Markdown table:
# compute seconds, 1 rank ÷ memory (the issue's COST check), bytes sent per
# superstep by the busiest rank, and the share of rank time spent in the
# transport.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${PLEXUS:-$ROOT/target/release/plexus}
OUT=${OUT:-/tmp/plexus-dist-bench}
DATA=${DATA:-$OUT/data}
SCALES=${SCALES:-20}
GRAPHS=${GRAPHS:-"kron20 USA-road-FLA"}
ALGS=${ALGS:-pagerank bfs wcc sssp}
NPS=${NPS:-1 2 4}
REPEAT=${REPEAT:-3}
TIMEOUT=${TIMEOUT:-600}
SHARED=${SHARED:-$ROOT/../shared/data}
export PLEXUS_DATA=$DATA OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT" "$DATA"
RUNS=$OUT/dist-runs.jsonl
: >"$RUNS"
CORES=$(nproc)

for g in $GRAPHS; do
  if ! "$BIN" --quiet info "$g" >/dev/null 2>&1; then
    case $g in
      kron*) "$BIN" --quiet generate kron --scale "${g#kron}" --weighted --name "$g" >/dev/null ;;
      *) "$BIN" --quiet import "$SHARED/$g.el.gz" --name "$g" --undirected >/dev/null ;;
    esac
  fi
done

run() { # GRAPH ALG EXECUTOR NP
  local g=$1 alg=$2 ex=$3 np=$4 extra=()
  [ "$alg" = pagerank ] && extra=(--iterations 20 --tolerance 1e-300)
  [ "$alg" = pagerank ] && [ "$ex" = memory ] && extra+=(--method jacobi --precision double)
  local threads=$((CORES / np)); [ "$threads" -ge 1 ] || threads=1
  local cmd=("$BIN" --quiet --threads "$threads" run "$alg" "$g" --executor "$ex" --json --repeat "$REPEAT" "${extra[@]}")
  if [ "$ex" = dist ]; then
    cmd=(mpirun --oversubscribe --bind-to none --mca btl self,tcp -np "$np" "${cmd[@]}")
  fi
  timeout "$TIMEOUT" "${cmd[@]}" | python3 -c '
import json, sys
o = json.load(sys.stdin)
o["np"] = int(sys.argv[1])
print(json.dumps(o))' "$np" >>"$RUNS"
}

for g in $GRAPHS; do
  for alg in $ALGS; do
    if [ "$alg" = sssp ] && "$BIN" --quiet info "$g" --json 2>/dev/null | grep -q '"weights": "none"'; then
      continue
    fi
    run "$g" "$alg" memory 1
    for np in $NPS; do run "$g" "$alg" dist "$np"; done
  done
done

python3 - "$RUNS" <<'EOF'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
keys = []
for r in runs:
    k = (r["graph"], r["algorithm"])
    if k not in keys:
        keys.append(k)
nps = sorted({r["np"] for r in runs if r["executor"] == "dist"})
print("| graph | kernel | memory s | " + " | ".join(f"dist {n} rank{'s' if n > 1 else ''} s" for n in nps)
      + " | 1 rank ÷ memory | busiest rank's bytes sent per superstep (" + ", ".join(f"{n}r" for n in nps)
      + ") | transport share of rank time (" + ", ".join(f"{n}r" for n in nps) + ") |")
print("|---" * (4 + len(nps)) + "|---|---|")
for g, a in keys:
    mem = [r for r in runs if (r["graph"], r["algorithm"], r["executor"]) == (g, a, "memory")]
    dist = {r["np"]: r for r in runs if (r["graph"], r["algorithm"], r["executor"]) == (g, a, "dist")}
    m = mem[0]["compute_seconds"] if mem else float("nan")
    cells, per_step, share = [], [], []
    for n in nps:
        d = dist.get(n)
        if d is None:
            cells.append("–"); per_step.append("–"); share.append("–"); continue
        cells.append(f"{d['compute_seconds']:.3f}")
        ranks = d["per_rank"]
        steps = max(len(x["supersteps"]) for x in ranks) or 1
        busiest = max(sum(s["bytes_sent"] for s in x["supersteps"]) for x in ranks)
        per_step.append(f"{busiest / steps / 1e6:.2f} MB")
        comm = sum(s["comm_ms"] for x in ranks for s in x["supersteps"])
        comp = sum(s["compute_ms"] for x in ranks for s in x["supersteps"])
        share.append(f"{100 * comm / max(comm + comp, 1e-9):.0f} %")
    one = dist.get(1)
    ratio = f"{one['compute_seconds'] / m:.2f}" if one and m == m else "–"
    print(f"| {g} | {a} | {m:.3f} | " + " | ".join(cells) + f" | {ratio} | " + ", ".join(per_step) + " | " + ", ".join(share) + " |")
EOF
