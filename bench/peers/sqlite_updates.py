#!/usr/bin/env python3
"""SQLite beside `live_bench throughput`: edge inserts with full durability.

    sqlite_updates.py EDGES.el DB [--seconds 5] [--seed 1]

Loads the edge list (u v [w]) into `edges(src, dst, w)` with an index on
(src, dst) and one on dst (the neighbour look-ups both ways that Plexus's
CSR and CSC give), in WAL mode with `synchronous = FULL` (an fsync per
commit, as Plexus's log). Then, for 1, 100 and 10,000 new edges a
transaction and 1 and 8 writer threads (each with its own connection;
SQLite serialises writers, busy_timeout 60 s), commits transactions for
`--seconds` seconds. Each insert is of a random vertex pair not already an
edge (checked in the same statement), as Plexus's add-edge checks. One
JSON line per configuration, in the keys of `live_bench throughput`.
"""
import argparse
import json
import random
import sqlite3
import threading
import time


def load(db, path):
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("DROP TABLE IF EXISTS edges")
    con.execute("CREATE TABLE edges (src INTEGER, dst INTEGER, w REAL)")
    n = 0
    rows = []
    with open(path) as f:
        for line in f:
            t = line.split()
            if len(t) < 2 or t[0].startswith("#"):
                continue
            u, v = int(t[0]), int(t[1])
            n = max(n, u + 1, v + 1)
            rows.append((u, v, float(t[2]) if len(t) > 2 else 1.0))
            if len(rows) >= 1_000_000:
                con.executemany("INSERT INTO edges VALUES (?, ?, ?)", rows)
                rows.clear()
    con.executemany("INSERT INTO edges VALUES (?, ?, ?)", rows)
    con.execute("CREATE INDEX by_src ON edges (src, dst)")
    con.execute("CREATE INDEX by_dst ON edges (dst)")
    con.commit()
    con.close()
    return n


INSERT = (
    "INSERT INTO edges SELECT ?, ?, ? WHERE NOT EXISTS "
    "(SELECT 1 FROM edges WHERE (src = ? AND dst = ?) OR (src = ? AND dst = ?))"
)


def writer(db, n, ops, seed, stop, counts, lock):
    con = sqlite3.connect(db, timeout=60, isolation_level=None)
    con.execute("PRAGMA synchronous = FULL")
    rng = random.Random(seed)
    commits = 0
    while not stop.is_set():
        con.execute("BEGIN IMMEDIATE")
        for _ in range(ops):
            u, v = rng.randrange(n), rng.randrange(n)
            con.execute(INSERT, (u, v, float(rng.randrange(1, 256)), u, v, v, u))
        con.execute("COMMIT")
        commits += 1
    con.close()
    with lock:
        counts.append(commits)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("edges")
    ap.add_argument("db")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    t = time.time()
    n = load(a.db, a.edges)
    print(json.dumps({"bench": "sqlite-load", "seconds": time.time() - t, "vertices": n}), flush=True)
    for ops in (1, 100, 10000):
        for writers in (1, 8):
            stop, counts, lock = threading.Event(), [], threading.Lock()
            threads = [
                threading.Thread(target=writer, args=(a.db, n, ops, a.seed * 1000 + w, stop, counts, lock))
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
            c = sum(counts)
            print(json.dumps({
                "bench": "throughput", "system": "sqlite " + sqlite3.sqlite_version,
                "ops_per_tx": ops, "writers": writers, "spread": "random",
                "seconds": secs, "commits": c, "commits_per_s": c / secs,
                "ops_per_s": c * ops / secs, "conflicts": 0,
            }), flush=True)


if __name__ == "__main__":
    main()
