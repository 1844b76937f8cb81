#!/usr/bin/env python3
"""Point-query latency of LadybugDB (the maintained fork of Kuzu,
`pip install ladybug`) with Cypher, the peer of `plexus query GRAPH bench`
in bench/queries.sh.

    ladybug_queries.py load DIR EDGES [--undirected] [--weighted]
    ladybug_queries.py run DIR --kind neighbors|khop2|khop3|path --vertices FILE
                          [--limit N] [--results FILE] [--depth D]

`load` copies an edge list (`plexus export`: `src dst [w]`, `#` comments)
into node table V(id) and rel table E(FROM V TO V[, w]) (both directions
for --undirected, one rel for a self-loop). `run` times each prepared
query (rows fetched included) and prints one JSON line like
sqlite_queries.py. Queries:
Each query goes through `execute(query, parameters)` (separate prepare is
deprecated in ladybug 0.22).
- neighbors: MATCH (a:V {id: $s})-[:E]->(b) RETURN b.id
- khop2/khop3: MATCH (a:V {id: $s})-[:E* SHORTEST 1..K]->(b) RETURN
  count(DISTINCT b.id) (SHORTEST: one BFS path a vertex, not every walk).
- path: MATCH p = (a:V {id: $u})-[:E* SHORTEST 1..D]->(b:V {id: $t})
  RETURN length(p) (fewest hops; -1 when none within D).
"""
import argparse
import csv
import json
import math
import os
import sys
import tempfile
import time

import ladybug as lb

QUERIES = {
    "neighbors": "MATCH (a:V {id: $s})-[:E]->(b:V) RETURN b.id",
    "khop2": "MATCH (a:V {id: $s})-[:E* SHORTEST 1..2]->(b:V) WHERE b.id <> $s "
             "RETURN count(DISTINCT b.id)",
    "khop3": "MATCH (a:V {id: $s})-[:E* SHORTEST 1..3]->(b:V) WHERE b.id <> $s "
             "RETURN count(DISTINCT b.id)",
    "path": "MATCH p = (a:V {id: $s})-[:E* SHORTEST 1..{D}]->(b:V {id: $t}) "
            "RETURN length(p)",
}


def load(a):
    t = time.time()
    tmp = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(a.dir)) or ".")
    nodes, rels = os.path.join(tmp, "v.csv"), os.path.join(tmp, "e.csv")
    seen = set()
    with open(a.edges) as f, open(rels, "w", newline="") as out:
        w = csv.writer(out)
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            p = line.split()
            u, v = int(p[0]), int(p[1])
            extra = [float(p[2])] if a.weighted else []
            seen.add(u)
            seen.add(v)
            w.writerow([u, v] + extra)
            if a.undirected and u != v:
                w.writerow([v, u] + extra)
    with open(nodes, "w") as out:
        out.writelines(f"{x}\n" for x in sorted(seen))
    db = lb.Database(a.dir)
    c = lb.Connection(db)
    c.execute("CREATE NODE TABLE V(id INT64, PRIMARY KEY (id))")
    c.execute("CREATE REL TABLE E(FROM V TO V" + (", w DOUBLE)" if a.weighted else ")"))
    c.execute(f"COPY V FROM '{nodes}'")
    c.execute(f"COPY E FROM '{rels}'")
    for p in (nodes, rels):
        os.remove(p)
    os.rmdir(tmp)
    print(json.dumps({"nodes": len(seen), "load_seconds": round(time.time() - t, 1)}))


def run(a):
    db = lb.Database(a.dir, read_only=True)
    c = lb.Connection(db)
    jobs = []
    with open(a.vertices) as f:
        for line in f:
            p = line.split()
            if p:
                jobs.append([int(x) for x in p])
    jobs = jobs[: a.limit] if a.limit else jobs
    q = QUERIES[a.kind].replace("{D}", str(a.depth))
    lat, sizes = [], []
    for job in jobs:
        params = {"s": job[0]} if a.kind != "path" else {"s": job[0], "t": job[1]}
        t = time.perf_counter()
        rows = c.execute(q, params).get_all()
        lat.append((time.perf_counter() - t) * 1e6)
        if a.kind == "neighbors":
            sizes.append(len(rows))
        elif a.kind == "path":
            sizes.append(min((r[0] for r in rows), default=-1) if job[0] != job[1] else 0)
        else:
            sizes.append(rows[0][0] if rows else 0)
    if a.results:
        with open(a.results, "w") as f:
            f.writelines(f"{n}\n" for n in sizes)
    lat.sort()

    def rank(p):
        return lat[min(len(lat), max(1, math.ceil(p * len(lat)))) - 1] if lat else 0.0

    print(json.dumps({"kind": a.kind, "queries": len(lat), "p50_us": rank(0.5),
                      "p99_us": rank(0.99), "mean_us": sum(lat) / max(1, len(lat))}))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    l = sub.add_parser("load")
    l.add_argument("dir")
    l.add_argument("edges")
    l.add_argument("--undirected", action="store_true")
    l.add_argument("--weighted", action="store_true")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--kind", required=True, choices=sorted(QUERIES))
    r.add_argument("--vertices", required=True)
    r.add_argument("--limit", type=int, default=0)
    r.add_argument("--results")
    r.add_argument("--depth", type=int, default=6)
    a = p.parse_args()
    load(a) if a.cmd == "load" else run(a)


if __name__ == "__main__":
    sys.exit(main())
