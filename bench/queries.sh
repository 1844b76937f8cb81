#!/usr/bin/env bash
# Point-query latency (issue 47 §4): Plexus (`plexus query GRAPH bench`, one
# process, queries timed inside it) side by side with SQLite (python3's
# stdlib sqlite3, bench/peers/sqlite_queries.py: an edge table with an index
# on src and one on dst) and LadybugDB (bench/peers/ladybug_queries.py, when
# `import ladybug` works) on the same graph, the same vertices (written by
# Plexus's seeded sampler: alive, out-degree > 0) and the same queries:
# neighbors, khop2 and khop3 (how many vertices within 2 and 3 hops) and path
# (fewest hops; Plexus runs Dijkstra on weighted graphs, the peers count
# hops). Each system writes every query's answer size, and the script says
# whether they agree. Prints a markdown table.
#
#   bench/queries.sh GRAPH... [--queries N] [--slow N] [--seed S] [--data-dir DIR]
#                             [--kinds "neighbors khop2 khop3 path"] [--no-ladybug]
#                             [--path-queries N] [--deep-queries N] [--no-sqlite-path]
#                             [--under-load N]
#
# --queries: vertices for Plexus and for the peers' neighbors (10,000);
# --slow: vertices for the peers' khop and path queries (1,000; the first
# ones of Plexus's); --path-queries: Plexus's path queries (default
# --queries); --deep-queries: Plexus's khop3 queries (default --queries; a
# 3-hop count reaches most of a Kronecker graph, so 10,000 of them on
# kron22 take the better part of an hour); --no-sqlite-path: skip SQLite's path (its recursive CTE takes
# seconds a query on soc-Slashdot0902). GRAPH is a stored graph (`plexus
# generate kron --scale 20 --weighted --name k20`, `plexus import
# ../shared/data/soc-Slashdot0902.el.gz --name slashdot`). The peers'
# databases and every file are kept under bench/out/queries/GRAPH/ (not
# committed); a database is loaded once. --under-load N: while every system
# answers its queries, N analytics jobs on the same graph (`plexus mix
# --jobs N`: PageRank, BFS, SSSP, WCC, CDLP) run in a loop of `plexus batch
# --mode shared` in the background (the table's `load` column says so).
set -euo pipefail
cd "$(dirname "$0")/.."

graphs=()
queries=10000
slow=1000
pathq=""
deepq=""
seed=1
kinds="neighbors khop2 khop3 path"
ladybug=1
sqlite_path=1
under_load=0
data=()
while [ $# -gt 0 ]; do
    case "$1" in
        --queries) queries="$2"; shift 2 ;;
        --slow) slow="$2"; shift 2 ;;
        --path-queries) pathq="$2"; shift 2 ;;
        --deep-queries) deepq="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --kinds) kinds="$2"; shift 2 ;;
        --no-ladybug) ladybug=0; shift ;;
        --no-sqlite-path) sqlite_path=0; shift ;;
        --under-load) under_load="$2"; shift 2 ;;
        --data-dir) data=(--data-dir "$2"); shift 2 ;;
        -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
        -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) graphs+=("$1"); shift ;;
    esac
done
[ ${#graphs[@]} -gt 0 ] || { echo "error: name at least one stored graph" >&2; exit 2; }

cargo build --release -q -p plexus-cli
plexus() { target/release/plexus "${data[@]}" --quiet "$@"; }
if [ "$ladybug" = 1 ] && ! python3 -c 'import ladybug' 2>/dev/null; then
    echo "note: LadybugDB is not installed (pip install ladybug); left out" >&2
    ladybug=0
fi
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
us() { python3 -c "import sys; x=float(sys.argv[1]); print(f'{x:,.0f}' if x >= 100 else f'{x:.1f}')" "$1"; }
# Whether the first lines of two answer files agree: "yes", or "no (k of n differ)".
agree() {
    python3 - "$1" "$2" <<'EOF'
import sys
a, b = (open(p).read().split() for p in sys.argv[1:])
n = min(len(a), len(b))
d = sum(x != y for x, y in zip(a[:n], b[:n]))
print("yes" if d == 0 else f"no ({d} of {n} differ)")
EOF
}

# Starts (or stops) the background jobs for graph $1: `plexus batch` of a
# fixed mix, over and over, until the stop file appears.
loader=""
start_load() {
    local jobs="bench/out/queries/$1/jobs-$under_load.toml"
    plexus mix --graph "$1" --seed "$seed" --jobs "$under_load" >"$jobs"
    rm -f "bench/out/queries/$1/stop"
    (
        while [ ! -e "bench/out/queries/$1/stop" ]; do
            plexus batch "$jobs" --mode shared >/dev/null 2>&1 || true
        done
    ) &
    loader=$!
    sleep 2
}
stop_load() {
    [ -n "$loader" ] || return 0
    touch "bench/out/queries/$1/stop"
    pkill -P "$loader" 2>/dev/null || true
    wait "$loader" 2>/dev/null || true
    loader=""
}
trap 'for g in "${graphs[@]}"; do stop_load "$g"; done' EXIT
load_col="alone"
[ "$under_load" -gt 0 ] && load_col="$under_load jobs"

rows=()
for g in "${graphs[@]}"; do
    out="bench/out/queries/$g"
    mkdir -p "$out"
    info=$(plexus info "$g" --json)
    directed=$(field "$info" directed)
    weights=$(field "$info" weights)
    flags=()
    [ "$directed" = "True" ] || flags+=(--undirected)
    [ "$weights" = "none" ] || flags+=(--weighted)
    if [ ! -s "$out/edges.el" ]; then
        plexus export "$g" --out "$out/edges.el" 2>/dev/null
    fi
    if [ ! -s "$out/sqlite.db" ]; then
        echo "loading $g into SQLite ..." >&2
        rm -f "$out/sqlite.db"
        python3 bench/peers/sqlite_queries.py load "$out/sqlite.db" "$out/edges.el" "${flags[@]}" >&2
    fi
    if [ "$ladybug" = 1 ] && [ ! -e "$out/ladybug.db" ]; then
        echo "loading $g into LadybugDB ..." >&2
        python3 bench/peers/ladybug_queries.py load "$out/ladybug.db" "$out/edges.el" "${flags[@]}" >&2
    fi
    # 2N seeded vertices: the first N for the one-vertex queries, all of
    # them paired (1st with 2nd, ...) for path.
    plexus query "$g" bench --kind neighbors --queries $((2 * queries)) --seed "$seed" \
        --save-vertices "$out/sample.txt" --json >/dev/null
    head -n "$queries" "$out/sample.txt" >"$out/vertices.txt"
    paste -d ' ' - - <"$out/sample.txt" >"$out/pairs.txt"
    [ "$under_load" -gt 0 ] && start_load "$g"
    for k in $kinds; do
        file="$out/vertices.txt"; n="$queries"; peer_n="$slow"
        [ "$k" = neighbors ] && peer_n="$queries"
        [ "$k" = path ] && { file="$out/pairs.txt"; n="${pathq:-$queries}"; }
        [ "$k" = khop3 ] && n="${deepq:-$queries}"
        echo "$g $k ..." >&2
        r=$(plexus query "$g" bench --kind "$k" --vertices "$file" --queries "$n" \
            --results "$out/plexus.$k.txt" --json)
        rows+=("| $g | $load_col | $k | Plexus | $(field "$r" queries) | $(us "$(field "$r" p50_us)") | $(us "$(field "$r" p99_us)") | $(us "$(field "$r" mean_us)") | |")
        peers="sqlite"
        [ "$ladybug" = 1 ] && peers="sqlite ladybug"
        for p in $peers; do
            db="$out/$p.db"
            if [ "$k" = path ] && [ "$p" = sqlite ] && [ "$sqlite_path" = 0 ]; then
                rows+=("| $g | $load_col | path | SQLite | skipped (--no-sqlite-path) | | | | |")
                continue
            fi
            r=$(python3 "bench/peers/${p}_queries.py" run "$db" --kind "$k" --vertices "$file" \
                --limit "$peer_n" --results "$out/$p.$k.txt")
            ok=$(agree "$out/plexus.$k.txt" "$out/$p.$k.txt")
            [ "$k" = path ] && [ "$weights" != "none" ] && ok="$ok (hops vs Plexus's Dijkstra)"
            name=SQLite; [ "$p" = ladybug ] && name=LadybugDB
            rows+=("| $g | $load_col | $k | $name | $(field "$r" queries) | $(us "$(field "$r" p50_us)") | $(us "$(field "$r" p99_us)") | $(us "$(field "$r" mean_us)") | $ok |")
        done
    done
    stop_load "$g"
done

echo
echo "| graph | load | query | system | queries | p50 µs | p99 µs | mean µs | answers agree with Plexus |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
