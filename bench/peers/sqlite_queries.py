#!/usr/bin/env python3
"""Point-query latency of SQLite (python3's stdlib sqlite3) on an edge table,
the peer of `plexus query GRAPH bench` in bench/queries.sh.

    sqlite_queries.py load DB EDGES [--undirected] [--weighted]
    sqlite_queries.py run DB --kind neighbors|khop2|khop3|path --vertices FILE
                         [--limit N] [--results FILE] [--depth D]

`load` reads an edge list (`plexus export GRAPH --out FILE`: `src dst [w]`,
`#` comments) into `edges(src, dst[, w])` with an index on src and one on
dst; --undirected stores both directions of each edge (one row for a
self-loop), as Plexus does. `run` times each query (the rows fetched
included) and prints one JSON line: kind, queries, p50_us, p99_us, mean_us.
Queries, in SQL only:
- neighbors: SELECT dst FROM edges WHERE src = ?
- khop2/khop3: the distinct vertices within 2 (3) hops, the source
  excluded, counted; each level a DISTINCT set joined with the edges.
- path: fewest hops by a recursive CTE BFS (UNION over (vertex, depth),
  bounded by --depth; -1 past it); no weights (SQL has no Dijkstra).
"""
import argparse
import json
import math
import sqlite3
import sys
import time

NEIGHBORS = "SELECT dst FROM edges WHERE src = ?"
KHOP2 = """
WITH h1(v) AS (SELECT DISTINCT dst FROM edges WHERE src = :s),
     h2(v) AS (SELECT DISTINCT e.dst FROM h1 JOIN edges e ON e.src = h1.v)
SELECT COUNT(*) FROM (SELECT v FROM h1 UNION SELECT v FROM h2) WHERE v != :s
"""
KHOP3 = """
WITH h1(v) AS (SELECT DISTINCT dst FROM edges WHERE src = :s),
     h2(v) AS (SELECT DISTINCT e.dst FROM h1 JOIN edges e ON e.src = h1.v),
     h3(v) AS (SELECT DISTINCT e.dst FROM h2 JOIN edges e ON e.src = h2.v)
SELECT COUNT(*) FROM (SELECT v FROM h1 UNION SELECT v FROM h2 UNION SELECT v FROM h3)
WHERE v != :s
"""
PATH = """
WITH RECURSIVE bfs(v, d) AS (
  SELECT :u, 0
  UNION
  SELECT e.dst, bfs.d + 1 FROM bfs JOIN edges e ON e.src = bfs.v
  WHERE bfs.d < :depth
)
SELECT MIN(d) FROM bfs WHERE v = :t
"""


def load(a):
    db = sqlite3.connect(a.db)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    cols = "src INTEGER, dst INTEGER" + (", w REAL" if a.weighted else "")
    db.execute(f"CREATE TABLE edges ({cols})")
    marks = "?, ?, ?" if a.weighted else "?, ?"

    def rows():
        with open(a.edges) as f:
            for line in f:
                if not line.strip() or line.startswith("#"):
                    continue
                p = line.split()
                u, v = int(p[0]), int(p[1])
                t = (u, v, float(p[2])) if a.weighted else (u, v)
                yield t
                if a.undirected and u != v:
                    yield (v, u) + t[2:]

    t = time.time()
    db.executemany(f"INSERT INTO edges VALUES ({marks})", rows())
    db.execute("CREATE INDEX edges_src ON edges (src, dst)")
    db.execute("CREATE INDEX edges_dst ON edges (dst, src)")
    db.commit()
    n = db.execute("SELECT COUNT(*) FROM edges").fetchone()[0]
    print(json.dumps({"rows": n, "load_seconds": round(time.time() - t, 1)}))


def run(a):
    db = sqlite3.connect(a.db)
    jobs = []
    with open(a.vertices) as f:
        for line in f:
            p = line.split()
            if p:
                jobs.append([int(x) for x in p])
    jobs = jobs[: a.limit] if a.limit else jobs
    lat, sizes = [], []
    for job in jobs:
        t = time.perf_counter()
        if a.kind == "neighbors":
            n = len(db.execute(NEIGHBORS, (job[0],)).fetchall())
        elif a.kind in ("khop2", "khop3"):
            q = KHOP2 if a.kind == "khop2" else KHOP3
            n = db.execute(q, {"s": job[0]}).fetchone()[0]
        else:
            d = db.execute(PATH, {"u": job[0], "t": job[1], "depth": a.depth}).fetchone()[0]
            n = -1 if d is None else d
        lat.append((time.perf_counter() - t) * 1e6)
        sizes.append(n)
    if a.results:
        with open(a.results, "w") as f:
            f.writelines(f"{n}\n" for n in sizes)
    lat.sort()
    def rank(q):  # nearest rank, as plexus query bench
        return lat[min(len(lat), max(1, math.ceil(q * len(lat)))) - 1] if lat else 0.0

    print(json.dumps({"kind": a.kind, "queries": len(lat), "p50_us": rank(0.5),
                      "p99_us": rank(0.99), "mean_us": sum(lat) / max(1, len(lat))}))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    l = sub.add_parser("load")
    l.add_argument("db")
    l.add_argument("edges")
    l.add_argument("--undirected", action="store_true")
    l.add_argument("--weighted", action="store_true")
    r = sub.add_parser("run")
    r.add_argument("db")
    r.add_argument("--kind", required=True, choices=["neighbors", "khop2", "khop3", "path"])
    r.add_argument("--vertices", required=True)
    r.add_argument("--limit", type=int, default=0)
    r.add_argument("--results")
    r.add_argument("--depth", type=int, default=6)
    a = p.parse_args()
    load(a) if a.cmd == "load" else run(a)


if __name__ == "__main__":
    sys.exit(main())
