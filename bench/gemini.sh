#!/usr/bin/env bash
# bench/gemini.sh: Plexus's distributed executor beside GeminiGraph (issue 50)
# on the same graph, rank counts and sources.
#
#   GEMINI_DIR=/path/to/GeminiGraph PLEXUS=/path/to/plexus-with-mpi \
#     DATA=/work/qdata GRAPH=k20 bench/gemini.sh
#
# GEMINI_DIR  a GeminiGraph checkout (github thu-pacman/GeminiGraph) built by
#             hand with its own Makefile (toolkits/pagerank, cc, sssp, bfs);
#             nothing of it is kept in this repository.
# PLEXUS      a `--features mpi` build of plexus (default target/release/plexus)
# DATA GRAPH  the stored graph (undirected; weighted for sssp)
# NPS         rank counts (default "1 2"); ranks × threads = the machine's cores
# ROUNDS      processes per (system, kernel, ranks), alternated (default 3)
# ALGS        default "pagerank cc sssp bfs"
# PYTHON      a python3 with numpy, for the conversion (default python3)
# OUT         work directory (default /tmp/plexus-gemini): the graph in
#             Gemini's binary edge format, one JSON line per run
#
# Equal work: the stored graph is exported once (`plexus export`) and written
# as Gemini's binary edge list, both arcs of every edge (u32 source, u32
# target, f32 weight for sssp), so both read the same arcs; vertex count =
# the store's; BFS and SSSP start at the same vertex (the first vertex of the
# export, in external ids, which Plexus's `--source` takes and which are the
# file's ids for Gemini); PageRank runs 20 iterations on both (Plexus:
# Jacobi, double precision, no tolerance stop; Gemini: its 20 iterations);
# CC is Gemini's label propagation against Plexus's WCC (same components).
# Times are each system's own kernel time, one run a process, medians over
# ROUNDS processes: Gemini's first `exec_time` (its toolkits run a kernel 6
# times, but with current glibc the first run's clean-up crashes or, in cc,
# the later runs loop, so the script stops it after the first), Plexus's
# `compute_seconds`. Gemini sizes its OpenMP team to every
# configured CPU whatever the rank count (its source), so at 2 ranks on 2
# cores it runs 4 threads; Plexus runs cores/ranks threads a rank.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${PLEXUS:-$ROOT/target/release/plexus}
GEMINI_DIR=${GEMINI_DIR:?set GEMINI_DIR to a built GeminiGraph checkout}
DATA=${DATA:?set DATA to the data directory}
GRAPH=${GRAPH:?set GRAPH to a stored graph}
NPS=${NPS:-1 2}
ROUNDS=${ROUNDS:-3}
ALGS=${ALGS:-pagerank cc sssp bfs}
OUT=${OUT:-/tmp/plexus-gemini}
TIMEOUT=${TIMEOUT:-600}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT"
RUNS=$OUT/gemini-runs.jsonl
: >"$RUNS"
CORES=$(nproc)
MPI=(mpirun --oversubscribe --bind-to none --mca btl self,tcp)

for t in pagerank cc sssp bfs; do
  [ -x "$GEMINI_DIR/toolkits/$t" ] || { echo "error: $GEMINI_DIR/toolkits/$t missing (build GeminiGraph with its Makefile)" >&2; exit 2; }
done
N=$("$BIN" --quiet --data-dir "$DATA" info "$GRAPH" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["vertices"])')
EL=$OUT/$GRAPH.el
if [ ! -s "$OUT/$GRAPH.w.bin" ]; then
  "$BIN" --quiet --data-dir "$DATA" export "$GRAPH" --out "$EL"
  "${PYTHON:-python3}" - "$EL" "$OUT/$GRAPH" <<'EOF'
import sys
import numpy as np
el, stem = sys.argv[1], sys.argv[2]
# "u v [w]" lines; the width is the first line's field count.
with open(el) as f:
    width = len(f.readline().split())
a = np.fromfile(el, dtype=np.float64, sep=" ").reshape(-1, width)
u = a[:, 0].astype("<u4"); v = a[:, 1].astype("<u4")
w = a[:, 2].astype("<f4") if a.shape[1] == 3 else np.ones(len(u), "<f4")
both = np.empty(2 * len(u), dtype=[("s", "<u4"), ("d", "<u4"), ("w", "<f4")])
both["s"] = np.concatenate([u, v]); both["d"] = np.concatenate([v, u]); both["w"] = np.concatenate([w, w])
both.tofile(stem + ".w.bin")
plain = np.empty(2 * len(u), dtype=[("s", "<u4"), ("d", "<u4")])
plain["s"] = both["s"]; plain["d"] = both["d"]
plain.tofile(stem + ".bin")
half = np.empty(len(u), dtype=[("s", "<u4"), ("d", "<u4")])
half["s"] = u; half["d"] = v
half.tofile(stem + ".half.bin")
EOF
fi
SOURCE=$(head -1 "$EL" | cut -d' ' -f1)
echo "graph $GRAPH: $N vertices, source $SOURCE, cores $CORES" >&2

gemini() { # ALG NP
  local alg=$1 np=$2 file=$OUT/$GRAPH.bin args
  case $alg in
    pagerank) args=("$file" "$N" 20) ;;
    cc) args=("$OUT/$GRAPH.half.bin" "$N") ;;
    sssp) args=("$OUT/$GRAPH.w.bin" "$N" "$SOURCE") ;;
    bfs) args=("$file" "$N" "$SOURCE") ;;
  esac
  local log=$OUT/gemini-$alg-$np.log
  # Its first run only: see the header. The process is stopped once that
  # run's lines are out.
  "${MPI[@]}" -np "$np" stdbuf -oL "$GEMINI_DIR/toolkits/$alg" "${args[@]}" >"$log" 2>&1 &
  local pid=$! waited=0
  while ! grep -qs '^exec_time=' "$log" && kill -0 "$pid" 2>/dev/null && [ $waited -lt $((TIMEOUT * 10)) ]; do
    sleep 0.1; waited=$((waited + 1))
  done
  sleep 1
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pkill -f "$GEMINI_DIR/toolkits/$alg " 2>/dev/null || true
  python3 - "$log" "$alg" "$np" >>"$RUNS" <<'EOF'
import json, re, sys
log, alg, np_ = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = open(log, errors="replace").read()
t = re.findall(r"exec_time=([0-9.]+)", text)
extra = re.findall(r"^(components = \d+|found_vertices = \d+|distance\[\d+\]=[0-9.]+|pr\[\d+\]=[0-9.]+)", text, re.M)
print(json.dumps({"system": "gemini", "algorithm": alg, "np": np_,
                  "seconds": float(t[0]) if t else None, "result": extra[:2]}))
EOF
}

plexus() { # ALG NP
  local alg=$1 np=$2 extra=() name=$1
  case $alg in
    pagerank) extra=(--iterations 20 --tolerance 1e-300) ;;
    cc) name=wcc ;;
    sssp | bfs) extra=(--source "$SOURCE") ;;
  esac
  local threads=$((CORES / np)); [ "$threads" -ge 1 ] || threads=1
  timeout "$TIMEOUT" "${MPI[@]}" -np "$np" "$BIN" --quiet --data-dir "$DATA" --threads "$threads" \
    run "$name" "$GRAPH" --executor dist --json "${extra[@]}" |
    python3 -c '
import json, sys
o = json.load(sys.stdin)
print(json.dumps({"system": "plexus", "algorithm": sys.argv[1], "np": int(sys.argv[2]),
                  "seconds": o["compute_seconds"],
                  "result": {k: o[k] for k in ("components", "reached", "iterations") if k in o}}))' "$alg" "$np" >>"$RUNS"
}

for _ in $(seq "$ROUNDS"); do
  for alg in $ALGS; do
    for np in $NPS; do
      gemini "$alg" "$np"
      plexus "$alg" "$np"
    done
  done
done

python3 - "$RUNS" "$ROUNDS" <<'EOF'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
print(f"| kernel | ranks | Gemini s (runs) | Plexus s (runs) | Gemini ÷ Plexus | results |")
print("|---|---|---|---|---|---|")
keys = sorted({(r["algorithm"], r["np"]) for r in runs}, key=lambda k: (k[0], k[1]))
for alg, np_ in keys:
    g = [r["seconds"] for r in runs if r["system"] == "gemini" and r["algorithm"] == alg and r["np"] == np_ and r["seconds"] is not None]
    p = [r["seconds"] for r in runs if r["system"] == "plexus" and r["algorithm"] == alg and r["np"] == np_]
    res = [r.get("result") for r in runs if r["algorithm"] == alg and r["np"] == np_][:2]
    gm = statistics.median(g) if g else float("nan")
    pm = statistics.median(p) if p else float("nan")
    print(f"| {alg} | {np_} | {gm:.4f} ({len(g)}) | {pm:.4f} ({len(p)}) | {gm / pm:.2f} | {res} |")
EOF
