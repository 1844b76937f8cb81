#!/usr/bin/env python3
"""LadybugDB (the maintained fork of Kuzu, `pip install ladybug`) beside
`live_bench throughput` and sqlite_updates.py: edge inserts in transactions.

    ladybug_updates.py EDGES.el DIR [--seconds 5] [--seed 1] [--undirected]

Loads the edge list (u v [w]) into node table V(id) (every id below the
largest, so a random pair always names two nodes) and rel table
E(FROM V TO V, w) (both directions with --undirected), as
ladybug_queries.py does. Then, for 1, 100 and 10,000 new edges a
transaction and 1 and 8 writer threads (each with its own connection on
the one database; LadybugDB runs one write transaction at a time, so a
writer whose BEGIN is refused waits 1 ms and tries again, counted as a
conflict), commits transactions for `--seconds` seconds. Each insert is of
a random vertex pair not already joined by an edge either way (checked in
the same statement), as Plexus's add-edge checks. LadybugDB's own commit
durability is used (its write-ahead log; bench/NOTES.md says how often it
syncs). One JSON line per configuration, in the keys of `live_bench
throughput`.
"""
import argparse
import csv
import json
import os
import random
import shutil
import tempfile
import threading
import time

import ladybug as lb

INSERT = (
    "MATCH (a:V {id: $u}), (b:V {id: $v}) "
    "WHERE NOT EXISTS { MATCH (a)-[:E]-(b) } "
    "CREATE (a)-[:E {w: $w}]->(b)"
)


def load(edges, path, undirected):
    tmp = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(path)) or ".")
    nodes, rels = os.path.join(tmp, "v.csv"), os.path.join(tmp, "e.csv")
    n = 0
    with open(edges) as f, open(rels, "w", newline="") as out:
        w = csv.writer(out)
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            p = line.split()
            u, v = int(p[0]), int(p[1])
            wt = float(p[2]) if len(p) > 2 else 1.0
            n = max(n, u + 1, v + 1)
            w.writerow([u, v, wt])
            if undirected and u != v:
                w.writerow([v, u, wt])
    with open(nodes, "w") as out:
        out.writelines(f"{x}\n" for x in range(n))
    db = lb.Database(path)
    c = lb.Connection(db)
    c.execute("CREATE NODE TABLE V(id INT64, PRIMARY KEY (id))")
    c.execute("CREATE REL TABLE E(FROM V TO V, w DOUBLE)")
    c.execute(f"COPY V FROM '{nodes}'")
    c.execute(f"COPY E FROM '{rels}'")
    shutil.rmtree(tmp)
    return db, n


def writer(db, n, ops, seed, stop, counts, lock):
    con = lb.Connection(db)
    rng = random.Random(seed)
    commits = refused = 0
    while not stop.is_set():
        try:
            con.execute("BEGIN TRANSACTION")
        except RuntimeError:
            refused += 1
            time.sleep(0.001)
            continue
        for _ in range(ops):
            u, v = rng.randrange(n), rng.randrange(n)
            con.execute(INSERT, {"u": u, "v": v, "w": float(rng.randrange(1, 256))})
        con.execute("COMMIT")
        commits += 1
    with lock:
        counts.append((commits, refused))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("edges")
    ap.add_argument("dir")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--undirected", action="store_true")
    ap.add_argument("--ops", default="1,100,10000", help="edges a transaction, comma-separated")
    a = ap.parse_args()
    if os.path.exists(a.dir):
        shutil.rmtree(a.dir) if os.path.isdir(a.dir) else os.remove(a.dir)
    t = time.time()
    db, n = load(a.edges, a.dir, a.undirected)
    print(json.dumps({"bench": "ladybug-load", "seconds": time.time() - t, "vertices": n}), flush=True)
    for ops in (int(x) for x in a.ops.split(",")):
        for writers in (1, 8):
            stop, counts, lock = threading.Event(), [], threading.Lock()
            threads = [
                threading.Thread(target=writer, args=(db, n, ops, a.seed * 1000 + w, stop, counts, lock))
                for w in range(writers)
            ]
            t = time.time()
            for th in threads:
                th.start()
            time.sleep(a.seconds)
            stop.set()
            for th in threads:
                th.join()
            secs = time.time() - t
            c = sum(x[0] for x in counts)
            print(json.dumps({
                "bench": "throughput", "system": "ladybug " + lb.__version__,
                "ops_per_tx": ops, "writers": writers, "spread": "random",
                "seconds": secs, "commits": c, "commits_per_s": c / secs,
                "ops_per_s": c * ops / secs, "conflicts": sum(x[1] for x in counts),
            }), flush=True)


if __name__ == "__main__":
    main()
