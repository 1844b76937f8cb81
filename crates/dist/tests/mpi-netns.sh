#!/usr/bin/env bash
# Several hosts on one machine: MPI ranks in separate network namespaces
# (each with its own hostname, a UTS namespace), joined by veth pairs to a
# bridge in a hub namespace, talking TCP over the veths only:
#   mpirun --mca btl self,tcp --mca btl_tcp_if_include 10.231.X.0/24
# OpenMPI starts its daemon on each "host" through an rsh agent that enters
# the host's namespace (`ip netns exec`) instead of ssh. For 2 and 4 hosts:
#  1. `plexus run ALGO GRAPH --executor dist --out` under mpirun, one rank
#     per host, reading the shared store: the CSV rank 0 writes equals the
#     in-memory executor's (bfs depths, sssp, wcc, cdlp, kcore) and the
#     thread-rank run's on as many ranks (pagerank, bit for bit);
#  2. the same from per-host directories written by `plexus partition`
#     (no shared store: each host's data directory holds its rank's part).
# Only the namespaces, links and 10.231.X.0/24 addresses this script
# creates are used, and all are removed on exit (trap). Every mpirun runs
# under `timeout`. Needs root, iproute2 and util-linux's unshare; installs
# OpenMPI if missing. Usage: crates/dist/tests/mpi-netns.sh [PLEXUS_BINARY]
# (default: builds target/release/plexus with --features mpi).
set -euo pipefail
cd "$(dirname "$0")/../../.."
if [ "$(id -u)" -ne 0 ]; then
  echo "mpi-netns.sh: needs root (network namespaces)" >&2
  exit 2
fi
for t in ip unshare timeout; do
  command -v "$t" >/dev/null || { echo "mpi-netns.sh: needs $t" >&2; exit 2; }
done
crates/dist/tests/install-mpi.sh >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [ $# -ge 1 ]; then
  PLEXUS=$(realpath "$1")
else
  echo "== build (release, --features mpi)"
  cargo build -q --release -p plexus-cli --features mpi
  PLEXUS=$PWD/target/release/plexus
fi

tag=$$
# A /24 this run alone uses: 10.231.X.0/24 with X from the process id.
net=10.231.$((tag % 250 + 1))
hub=plxhub$tag
tmp=$(mktemp -d)
hosts=()
cleanup() {
  for ns in "${hosts[@]}" "$hub"; do
    # Processes this run started inside its namespaces (mpirun, orted, plexus).
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

# Namespaces: the hub (a bridge) and one per host, host i at $net.(i+1).
ip netns add "$hub"
ip -n "$hub" link add br0 type bridge
ip -n "$hub" link set br0 up
for i in 0 1 2 3; do
  ns=plxh$tag-$i
  ip netns add "$ns"
  hosts+=("$ns")
  ip -n "$hub" link add "h$i" type veth peer name plx0 netns "$ns"
  ip -n "$hub" link set "h$i" master br0 up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$net.$((i + 1))/24" dev plx0
  ip -n "$ns" link set plx0 up
done
# The hosts reach each other over the bridge: a TCP connect to a closed
# port is refused at once when the host answers, and times out when not.
for i in 1 2 3; do
  if ip netns exec "${hosts[0]}" timeout 5 bash -c "exec 3<>/dev/tcp/$net.$((i + 1))/9" 2>/dev/null; then :; fi
  if [ $? -eq 124 ]; then echo "mpi-netns.sh: host $net.$((i + 1)) unreachable" >&2; exit 1; fi
done
echo "== 4 hosts up: ${hosts[*]} on $net.0/24"

# Each host's own disk: $tmp/diskI, seen by host I (and only by it) at
# $tmp/local through a bind mount in the host's mount namespace.
mkdir -p "$tmp/local" "$tmp/disk0" "$tmp/disk1" "$tmp/disk2" "$tmp/disk3"
# The rsh agent: `agent HOST COMMAND...` runs COMMAND in HOST's network
# namespace, with hostname plxhostI (a UTS namespace) and its own disk at
# $tmp/local (a mount namespace), as ssh would on HOST.
agent=$tmp/agent.sh
cat >"$agent" <<EOF
#!/usr/bin/env bash
host=\$1; shift
i=\$(( \${host##*.} - 1 ))
exec ip netns exec plxh$tag-\$i unshare --uts --mount sh -c "hostname plxhost\$i; mount --bind $tmp/disk\$i $tmp/local; \$*"
EOF
chmod +x "$agent"

export PLEXUS_DATA=$tmp/data
timeout 120 "$PLEXUS" --quiet generate kron --scale 12 --name k12 >/dev/null
timeout 120 "$PLEXUS" --quiet generate kron --scale 11 --weighted --name w11 >/dev/null

# mpirun over N hosts, started in host 0's namespace; extra args follow.
mpi_hosts() {
  local np=$1; shift
  local list=""
  for ((i = 0; i < np; i++)); do list+="${list:+,}$net.$((i + 1)):1"; done
  timeout 300 ip netns exec "${hosts[0]}" unshare --uts --mount \
    sh -c "hostname plxhost0; mount --bind $tmp/disk0 $tmp/local; "'exec "$@"' sh \
    mpirun --bind-to none -np "$np" --host "$list" \
    --mca plm_rsh_agent "$agent" --mca plm_rsh_no_tree_spawn 1 \
    --mca btl self,tcp --mca btl_tcp_if_include "$net.0/24" \
    --mca oob_tcp_if_include "$net.0/24" \
    -x PLEXUS_DATA -x PATH "$@"
}

cmp_run() { # ALG GRAPH NP CSV(mpi) [extra run args]
  local alg=$1 graph=$2 np=$3 got=$4; shift 4
  local mem=$tmp/$alg.$graph.mem.csv thr=$tmp/$alg.$graph.thr$np.csv
  [ -f "$mem" ] || timeout 120 "$PLEXUS" --quiet run "$alg" "$graph" "$@" --out "$mem" >/dev/null
  timeout 120 "$PLEXUS" --quiet run "$alg" "$graph" "$@" --executor dist --ranks "$np" --out "$thr" >/dev/null
  case $alg in
    bfs) # parents may differ between valid choices: depths only
      cmp <(cut -d, -f1,2 "$mem") <(cut -d, -f1,2 "$got")
      cmp <(cut -d, -f1,2 "$thr") <(cut -d, -f1,2 "$got") ;;
    pagerank) # the same rank count combines in the same order: bit for bit
      cmp "$thr" "$got" ;;
    *) cmp "$mem" "$got"; cmp "$thr" "$got" ;;
  esac
}

echo "== plexus run --executor dist, one rank per host, shared store"
for np in 2 4; do
  for job in "bfs k12" "wcc k12" "cdlp k12" "kcore k12" "pagerank k12" "sssp w11"; do
    set -- $job
    out=$tmp/$1.$2.net$np.csv
    mpi_hosts "$np" "$PLEXUS" --quiet run "$1" "$2" --executor dist --out "$out" >/dev/null
    cmp_run "$1" "$2" "$np" "$out"
    echo "$1 on $np hosts: equal"
  done
done

echo "== per-host parts (plexus partition), no shared store"
for np in 2 4; do
  parts=$tmp/parts$np
  timeout 120 "$PLEXUS" --quiet partition k12 --ranks "$np" --out "$parts" >/dev/null
  for ((i = 0; i < np; i++)); do
    # Host i's disk holds only its own rank's part.
    mkdir -p "$tmp/disk$i/parts$np"
    mv "$parts/rank-$i.plxp" "$tmp/disk$i/parts$np/"
  done
  for alg in wcc bfs pagerank; do
    out=$tmp/$alg.k12.parts$np.csv
    mpi_hosts "$np" "$PLEXUS" --quiet run "$alg" k12 --executor dist \
      --parts "$tmp/local/parts$np" --out "$out" >/dev/null
    cmp_run "$alg" k12 "$np" "$out"
    echo "$alg on $np hosts from per-host parts: equal"
  done
done
echo "== mpi-netns.sh: ok"
