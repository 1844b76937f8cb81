#!/usr/bin/env bash
# The Python package against the Python peers (issue 48's bench): NetworkX's
# pagerank, connected components (weakly for directed graphs),
# betweenness_centrality(k=64, seed=1) and single_source_shortest_path_length
# through backend="plexus" (first call with its conversion, then cached),
# NetworkX itself, backend="graphblas" and nx-parallel ("parallel"); graphs
# built from a pandas DataFrame of the edges by plexus.from_edges, igraph's
# Graph.DataFrame and NetworKit's GraphFromCoo; and g.pagerank() from Python
# beside `plexus run pagerank` on the same stored graph. Each cell runs in a
# process of its own (bench/peers/py_backends.py); prints markdown tables
# and keeps the raw JSON in bench/out/python/results.jsonl.
#
#   bench/python.sh [--graphs "slashdot cnr kron20"] [--repeat 3] [--timeout 600]
#                   [--backends "plexus graphblas parallel networkx"]
#                   [--kernels "pagerank cc bc64 bfs pagerank+read bfs+read"]
#                   [--load-graphs kron20] [--append] [--no-extra]
#
# Graphs: slashdot and cnr are ../shared/data's soc-Slashdot0902 and cnr-2000
# (directed), kron20 is `plexus generate kron --scale 20` (undirected, edge
# factor 16, written once as an edge list and imported from it). "+read"
# kernels also read every value of the result into a dict: graphblas returns
# a lazy mapping whose values are computed on access. --append adds to the
# results file instead of starting it anew (to rerun some cells); --no-extra
# skips the pagerank-beside-the-CLI and from_edges cells. A kernel whose first call passes
# --timeout seconds is stopped and shown as "> T s". The virtualenv
# bench/out/py-venv is made on first use (pip: networkx, graphblas-algorithms,
# nx-parallel, igraph, networkit, pandas, and ./python).
set -euo pipefail
cd "$(dirname "$0")/.."

graphs="slashdot cnr kron20"
load_graphs="kron20"
repeat=3
timeout=600
backends="plexus graphblas parallel networkx"
append=0
extra=1
kernels="pagerank cc bc64 bfs pagerank+read bfs+read"
while [ $# -gt 0 ]; do
    case "$1" in
        --graphs) graphs="$2"; shift 2 ;;
        --load-graphs) load_graphs="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        --timeout) timeout="$2"; shift 2 ;;
        --backends) backends="$2"; shift 2 ;;
        --kernels) kernels="$2"; shift 2 ;;
        --append) append=1; shift ;;
        --no-extra) extra=0; shift ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

out=bench/out/python
data="$out/data"
mkdir -p "$out"
cargo build --release -q -p plexus-cli
plexus() { target/release/plexus --data-dir "$data" --quiet "$@"; }

venv="${PLEXUS_BENCH_VENV:-$PWD/bench/out/py-venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q numpy pandas pyarrow networkx scipy graphblas-algorithms \
        nx-parallel igraph networkit maturin
fi
CARGO_TARGET_DIR="$PWD/target" "$venv/bin/pip" install -q --force-reinstall --no-deps ./python
py="$venv/bin/python"
# nx-parallel 0.3 (the newest on PyPI) does not import under NetworkX 3.6
# (it imports a private helper 3.6 removed), and its betweenness fails under
# 3.5 (a private helper's signature changed): its cells run in a venv of
# their own with NetworkX 3.4.2, and the table says so.
pypar="$py"
if [[ " $backends " == *" parallel "* ]] && ! "$py" -c 'import nx_parallel' 2>/dev/null; then
    parvenv="${PLEXUS_BENCH_NXPAR_VENV:-$PWD/bench/out/py-venv-nxparallel}"
    if [ ! -x "$parvenv/bin/python" ]; then
        python3 -m venv "$parvenv"
        "$parvenv/bin/pip" install -q "networkx==3.4.2" nx-parallel numpy pandas scipy
    fi
    pypar="$parvenv/bin/python"
fi
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"

directed_of() { case "$1" in kron*) echo undirected ;; *) echo directed ;; esac; }
edge_list() {
    local g="$1" f="$out/$1.el"
    if [ ! -s "$f" ]; then
        case "$g" in
            slashdot) gunzip -c ../shared/data/soc-Slashdot0902.el.gz > "$f" ;;
            cnr) gunzip -c ../shared/data/cnr-2000.el.gz > "$f" ;;
            kron*) plexus generate kron --scale "${g#kron}" --out "$f" >/dev/null ;;
            *) echo "error: unknown graph $g" >&2; exit 2 ;;
        esac
    fi
    if ! plexus info "$g" >/dev/null 2>&1; then
        if [ "$(directed_of "$g")" = directed ]; then
            plexus import "$f" --name "$g" >/dev/null
        else
            plexus import "$f" --name "$g" --undirected >/dev/null
        fi
    fi
    echo "$f"
}

res="$out/results.jsonl"
[ "$append" = 1 ] || : > "$res"
{
    echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) $(nproc) cpus"
    "$py" -c 'import networkx, igraph, networkit, numpy; print("# networkx", networkx.__version__, "igraph", igraph.__version__, "networkit", networkit.__version__, "numpy", numpy.__version__)'
} | tee "$out/versions.txt"

for g in $graphs; do
    f=$(edge_list "$g")
    d=$(directed_of "$g")
    for b in $backends; do
        echo "== $g $b" >&2
        runner="$py"; [ "$b" = parallel ] && runner="$pypar"
        "$runner" bench/peers/py_backends.py nx "$f" "$d" "$b" "${kernels// /,}" "$repeat" "$timeout" \
            | sed "s/^{/{\"graph\": \"$g\", \"cell\": \"nx\", /" >> "$res" \
            || echo "{\"graph\": \"$g\", \"cell\": \"nx\", \"backend\": \"$b\", \"failed\": true}" >> "$res"
    done
    [ "$extra" = 1 ] || continue
    # plexus run pagerank vs g.pagerank() on the same stored graph.
    plexus run pagerank "$g" --repeat 5 --warmup 1 --json \
        | "$py" -c "import json,sys; o=json.load(sys.stdin); print(json.dumps({'graph': '$g', 'cell': 'cli-pagerank', 'compute': o['compute_seconds'], 'runs': o.get('compute_seconds_runs'), 'method': o.get('method'), 'precision': o.get('precision'), 'iterations': o.get('iterations')}))" >> "$res"
    "$py" bench/peers/py_backends.py pagerank "$g" "$data" 5 \
        | sed "s/^{/{\"graph\": \"$g\", \"cell\": \"py-pagerank\", /" >> "$res"
done
[ "$extra" = 1 ] || load_graphs=""
for g in $load_graphs; do
    f=$(edge_list "$g")
    for lib in plexus igraph networkit; do
        echo "== load $g $lib" >&2
        "$py" bench/peers/py_backends.py load "$f" "$(directed_of "$g")" "$lib" "$repeat" \
            | sed "s/^{/{\"graph\": \"$g\", \"cell\": \"load\", \"library\": \"$lib\", /" >> "$res"
    done
done
"$py" bench/peers/py_report.py "$res"
