#!/usr/bin/env bash
# Live-graph benchmarks (issue 47). Every figure is a JSON line under
# bench/out/live/; a markdown table is printed at the end of each part.
#
#   bench/live.sh snapshot SCALE [SHARES]   kernels on a changed snapshot vs a fresh import
#   bench/live.sh updates SCALE             update throughput with fdatasync (1/8 writers,
#                                           1/100/10,000 edges a transaction), SQLite and
#                                           LadybugDB (when `import ladybug` works) beside it
#   bench/live.sh recovery SCALE [OPS]      open (log replay) after OPS logged edge updates
#   bench/live.sh decay SCALE [TXS]         kernels after TXS single-edge transactions,
#                                           after compaction, and on a fresh import
#
# Graphs are Kronecker graphs of the given scale generated into a scratch
# data directory (bench/out/live/data, removed at the end of each part).
# `snapshot`: for each share (default "0.001 0.01 0.1") one transaction
# removes half the share of the edges (uniform over the stored edges) and
# adds as many (uniform vertex pairs); PageRank (20 iterations), BFS (from
# the same external source) and WCC then run on the newest version (the
# log replayed and the version materialized once per process: `load`) and
# on a fresh import of that version's edges (`plexus export` then
# `plexus import`, the generator's import options). Medians of --repeat 5.
set -euo pipefail
cd "$(dirname "$0")/.."

part="${1:-}"
scale="${2:-20}"
[ -n "$part" ] || { sed -n '2,20p' "$0"; exit 2; }
command -v jq >/dev/null || { echo "error: bench/live.sh needs jq" >&2; exit 2; }

cargo build --release --quiet -p plexus-cli
cargo build --release --quiet -p plexus-store --example live_bench
plexus="$PWD/target/release/plexus"
lb="$PWD/target/release/examples/live_bench"
out="$PWD/bench/out/live"
data="$out/data"
mkdir -p "$out"
rm -rf "$data"
trap 'rm -rf "$data"' EXIT
P() { "$plexus" --data-dir "$data" --quiet "$@"; }
stamp="$(date -u +%Y-%m-%dT%H:%MZ) $(git rev-parse --short HEAD) $(nproc) vCPU"

# Median compute seconds of a kernel on GRAPH (extra args after).
kernel() {
    local g="$1" algo="$2"; shift 2
    P run "$algo" "$g" --repeat 5 --json "$@" 2>/dev/null | jq -c '{algorithm, compute_seconds, load_seconds}'
}
kernels() {
    local g="$1" tag="$2" src="$3"
    for k in "pagerank --iterations 20" "bfs --source $src" "wcc"; do
        # shellcheck disable=SC2086
        kernel "$g" $k | jq -c --arg tag "$tag" --arg g "$g" '. + {tag: $tag, graph: $g}'
    done
}

# The newest version of GRAPH imported afresh as `fresh` (Graphalytics
# files keep isolated vertices and the weights; the import's default
# vertex order, as the generator's).
fresh_copy() {
    rm -rf "$out/fresh"
    mkdir -p "$out/fresh"
    P export "$1" --out "$out/fresh/g" --format graphalytics >/dev/null
    P import "$out/fresh/g.properties" --name fresh --force >/dev/null
    rm -rf "$out/fresh"
}

snapshot() {
    local shares="${3:-0.001 0.01 0.1}" f="$out/snapshot.jsonl"
    : > "$f"
    P generate kron --scale "$scale" --name base >/dev/null
    local src
    src="$(P info base --json | jq -r '.out_degree.top[0].id')"
    kernels base "base" "$src" | tee -a "$f"
    for s in $shares; do
        rm -f "$data/base/wal.log"
        "$lb" changes --data "$data" --graph base --share "$s" | jq -c --arg s "$s" '. + {tag: ("changes " + $s)}' | tee -a "$f"
        kernels base "snapshot $s" "$src" | tee -a "$f"
        fresh_copy base
        kernels fresh "fresh $s" "$src" | tee -a "$f"
        P remove fresh >/dev/null
    done
    rm -f "$data/base/wal.log"
    jq -rs --arg stamp "$stamp" '
      "\n### Kernels on a changed snapshot vs a fresh import (kron'"$scale"', " + $stamp + ")\n",
      "| change | kernel | snapshot s | fresh s | snapshot ÷ fresh | snapshot load s |",
      "|---|---|---|---|---|---|",
      ( [ .[] | select(.algorithm) ] as $k
        | $k[] | select(.tag | startswith("snapshot")) | . as $s
        | ($s.tag | ltrimstr("snapshot ")) as $share
        | ($k[] | select(.tag == ("fresh " + $share) and .algorithm == $s.algorithm)) as $fr
        | "| \($share | tonumber * 100)% | \($s.algorithm) | \($s.compute_seconds | .*1000|round/1000) | \($fr.compute_seconds | .*1000|round/1000) | \($s.compute_seconds / $fr.compute_seconds | .*100|round/100) | \($s.load_seconds | .*100|round/100) |" )' "$f"
}

updates() {
    local f="$out/updates.jsonl"
    : > "$f"
    P generate kron --scale "$scale" --weighted --name u >/dev/null
    for ops in 1 100 10000; do
        for w in 1 8; do
            for spread in partitioned random; do
                [ "$w" = 1 ] && [ "$spread" = random ] && continue
                "$lb" throughput --data "$data" --graph u --ops "$ops" --writers "$w" --seconds 5 --spread "$spread" | tee -a "$f"
            done
        done
    done
    P export u --out "$out/u.el" 2>/dev/null >/dev/null
    python3 bench/peers/sqlite_updates.py "$out/u.el" "$out/sqlite.db" --seconds 5 | tee -a "$f"
    rm -f "$out/sqlite.db"*
    if python3 -c 'import ladybug' 2>/dev/null; then
        python3 bench/peers/ladybug_updates.py "$out/u.el" "$out/ladybug.db" --seconds 5 | tee -a "$f"
        rm -rf "$out/ladybug.db"*
    else
        echo "note: LadybugDB is not installed (pip install ladybug); left out" >&2
    fi
    rm -f "$out/u.el"
    jq -rs --arg stamp "$stamp" '
      "\n### Update throughput with fdatasync (kron'"$scale"' weighted, " + $stamp + ")\n",
      "| system | edges a transaction | writers | spread | commits/s | edges/s | conflicts |",
      "|---|---|---|---|---|---|---|",
      ( .[] | select(.bench == "throughput") | "| \(.system // "plexus") | \(.ops_per_tx) | \(.writers) | \(.spread) | \(.commits_per_s|round) | \(.ops_per_s|round) | \(.conflicts // 0) |" )' "$f"
}

recovery() {
    local ops="${3:-1000000}" f="$out/recovery.jsonl"
    : > "$f"
    P generate kron --scale "$scale" --weighted --name r >/dev/null
    "$lb" updates --data "$data" --graph r --count "$ops" --ops 10000 | tee -a "$f"
    for _ in 1 2 3; do "$lb" recovery --data "$data" --graph r | tee -a "$f"; done
    jq -rs --arg stamp "$stamp" '
      "\n### Recovery (kron'"$scale"', " + $stamp + ")\n",
      "| logged edge ops | records | log bytes | open (replay) s | materialize s |",
      "|---|---|---|---|---|",
      ( [ .[] | select(.bench == "recovery") ] | sort_by(.open_s) | .[length/2|floor]
        | "| \(.ops) | \(.records) | - | \(.open_s | .*1000|round/1000) | \(.materialize_s | .*1000|round/1000) |" )' "$f"
}

decay() {
    local txs="${3:-100000}" f="$out/decay.jsonl"
    : > "$f"
    P generate kron --scale "$scale" --weighted --name d >/dev/null
    local src
    src="$(P info d --json | jq -r '.out_degree.top[0].id')"
    kernels d "before" "$src" | tee -a "$f"
    kernel d sssp --source "$src" | jq -c '. + {tag: "before"}' | tee -a "$f"
    "$lb" updates --data "$data" --graph d --count "$txs" --ops 1 --writers 8 | tee -a "$f"
    kernels d "after $txs transactions" "$src" | tee -a "$f"
    kernel d sssp --source "$src" | jq -c --arg t "after $txs transactions" '. + {tag: $t}' | tee -a "$f"
    "$lb" compact --data "$data" --graph d | tee -a "$f"
    kernels d "compacted" "$src" | tee -a "$f"
    kernel d sssp --source "$src" | jq -c '. + {tag: "compacted"}' | tee -a "$f"
    fresh_copy d
    kernels fresh "fresh" "$src" | tee -a "$f"
    kernel fresh sssp --source "$src" | jq -c '. + {tag: "fresh"}' | tee -a "$f"
    jq -rs --arg stamp "$stamp" '
      "\n### Layout decay and compaction (kron'"$scale"', " + $stamp + ")\n",
      "| state | kernel | compute s | load s | ÷ fresh |",
      "|---|---|---|---|---|",
      ( [ .[] | select(.algorithm) ] as $k
        | $k[] | . as $r
        | ($k[] | select(.tag == "fresh" and .algorithm == $r.algorithm)) as $fr
        | "| \($r.tag) | \($r.algorithm) | \($r.compute_seconds | .*1000|round/1000) | \($r.load_seconds | .*100|round/100) | \($r.compute_seconds / $fr.compute_seconds | .*100|round/100) |" )' "$f"
}

case "$part" in
    snapshot) snapshot "$@" ;;
    updates) updates "$@" ;;
    recovery) recovery "$@" ;;
    decay) decay "$@" ;;
    *) echo "error: unknown part '$part' (snapshot, updates, recovery, decay)" >&2; exit 2 ;;
esac
