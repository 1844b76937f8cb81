#!/usr/bin/env bash
# The MPI transport, on one machine: builds with `--features mpi`, then
#  1. the conformance example (every driver against the in-memory kernel
#     on 12 pseudo-random graphs) under mpirun -np 1, 2 and 4;
#  2. `plexus run ALGO GRAPH --executor dist` under mpirun -np 1, 2 and 4
#     for bfs, wcc, cdlp and kcore: the CSV rank 0 writes must equal the
#     thread-rank run's and the in-memory executor's (exact algorithms);
#  3. a rank killed mid-run (kill -9): mpirun must end within 30 s,
#     non-zero, and name the lost process;
#  4. as root: several hosts on one machine (tests/mpi-netns.sh: ranks in
#     network namespaces joined by veth pairs, TCP between them, parts on
#     per-host disks); skipped with a note when not root.
# Every mpirun runs under `timeout`. Installs OpenMPI first if missing
# (tests/install-mpi.sh). Release builds: CI's test run has already built
# every dependency in that profile. Usage: crates/dist/tests/mpi.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/../../.."
crates/dist/tests/install-mpi.sh >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
MPIRUN=(mpirun --oversubscribe --bind-to none --mca btl self,tcp)
GRAPHS=12
[ "${1:-}" = "--quick" ] && GRAPHS=4

echo "== build (release, --features mpi)"
cargo build -q --release -p plexus-dist --features mpi --example mpi_conformance
cargo build -q --release -p plexus-cli --features mpi
EX=target/release/examples/mpi_conformance
PLEXUS=$PWD/target/release/plexus

echo "== conformance example"
for np in 1 2 4; do
  timeout 300 "${MPIRUN[@]}" -np "$np" "$EX" "$GRAPHS"
done

echo "== plexus run --executor dist under mpirun"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PLEXUS_DATA=$tmp/data
timeout 120 "$PLEXUS" --quiet generate kron --scale 12 --name k12 >/dev/null
for alg in bfs wcc cdlp kcore; do
  timeout 120 "$PLEXUS" --quiet run "$alg" k12 --out "$tmp/$alg.mem.csv" >/dev/null
  timeout 120 "$PLEXUS" --quiet run "$alg" k12 --executor dist --ranks 3 --out "$tmp/$alg.threads.csv" >/dev/null
  for np in 1 2 4; do
    timeout 300 "${MPIRUN[@]}" -np "$np" "$PLEXUS" --quiet run "$alg" k12 --executor dist \
      --out "$tmp/$alg.mpi$np.csv" >/dev/null
    # bfs parents may differ between valid choices: compare depths only.
    if [ "$alg" = bfs ]; then
      for f in mem threads "mpi$np"; do cut -d, -f1,2 "$tmp/$alg.$f.csv" >"$tmp/$alg.$f.cut"; done
      cmp "$tmp/$alg.mem.cut" "$tmp/$alg.mpi$np.cut"
      cmp "$tmp/$alg.threads.cut" "$tmp/$alg.mpi$np.cut"
    else
      cmp "$tmp/$alg.mem.csv" "$tmp/$alg.mpi$np.csv"
      cmp "$tmp/$alg.threads.csv" "$tmp/$alg.mpi$np.csv"
    fi
    echo "$alg on $np MPI ranks: equal to memory and to 3 thread ranks"
  done
done
timeout 300 "${MPIRUN[@]}" -np 2 "$PLEXUS" --quiet run pagerank k12 --executor dist --json \
  >"$tmp/pr.json"
grep -q '"transport": "mpi"' "$tmp/pr.json"
grep -q '"bytes_sent"' "$tmp/pr.json"
echo "pagerank --json on 2 MPI ranks: per-rank supersteps present"

echo "== a rank killed mid-run"
timeout 120 "$PLEXUS" --quiet generate kron --scale 16 --name k16 >/dev/null
start=$(date +%s)
set +e
timeout 60 "${MPIRUN[@]}" -np 3 "$PLEXUS" --quiet run betweenness k16 --executor dist \
  >"$tmp/kill.out" 2>"$tmp/kill.err" &
job=$!
# Kill one rank (the newest plexus process started by this mpirun) once it runs.
victim=""
for _ in $(seq 1 100); do
  victim=$(pgrep -n -P "$(pgrep -n -P $job mpirun || echo $job)" plexus || true)
  [ -n "$victim" ] && break
  sleep 0.2
done
sleep 2
[ -n "$victim" ] && kill -9 "$victim"
wait $job
status=$?
set -e
took=$(( $(date +%s) - start ))
echo "mpirun exit status $status after ${took}s; its message:"
grep -iE "signal|killed|exited|abort" "$tmp/kill.err" | head -3 || true
[ -n "$victim" ] && [ "$status" -ne 0 ] && [ "$status" -ne 124 ] && [ "$took" -lt 40 ]

if [ "$(id -u)" -eq 0 ]; then
  echo "== several hosts on one machine (mpi-netns.sh)"
  crates/dist/tests/mpi-netns.sh "$PLEXUS"
else
  echo "== mpi-netns.sh skipped: network namespaces need root"
fi
echo "== mpi.sh: ok"
