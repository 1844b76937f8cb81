"""One cell of the Python-package benchmark (bench/python.sh), in a process
of its own so peak memory is the cell's.

  py_backends.py nx GRAPH.el DIRECTED BACKEND KERNELS REPEAT TIMEOUT
      NetworkX's functions KERNELS (comma-separated: pagerank, cc, bc64,
      bfs) on the graph of edge list GRAPH.el, dispatched to BACKEND
      (networkx: NetworkX itself; plexus, graphblas, parallel: those
      backends): the first call (conversion included) and the median of up
      to REPEAT further calls on the same graph object (the converted graph
      cached on it); a JSON line per kernel.
  py_backends.py load GRAPH.el DIRECTED LIBRARY REPEAT
      A graph from a pandas DataFrame of the edges: plexus.from_edges,
      igraph's Graph.DataFrame, NetworKit's GraphFromCoo (from the
      DataFrame's columns); the median of REPEAT builds.
  py_backends.py pagerank NAME DATA_DIR REPEAT
      plexus's g.pagerank() compute time (median) on the stored graph
      NAME, to set beside `plexus run pagerank NAME` (the same graph).

Prints JSON: seconds, peak RSS (ru_maxrss), edges, answer sizes.
Equal work: every backend gets the same NetworkX graph and the same call
(pagerank alpha 0.85, tol 1e-6; betweenness k=64, seed 1; BFS from the
vertex of largest out-degree, lowest id on ties; components of the graph,
weakly for directed graphs).
"""
from __future__ import annotations

import json
import resource
import statistics
import sys
import time

import numpy as np
import pandas as pd


def edges(path: str) -> pd.DataFrame:
    return pd.read_csv(path, sep=" ", header=None, names=["src", "dst"], usecols=[0, 1],
                       dtype=np.int64, engine="c", comment="#")


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def nx_cell(path: str, directed: bool, backend: str, kernels: list, repeat: int,
            timeout: float) -> list:
    """Every kernel on one NetworkX graph (built once), dispatched to
    `backend`; a kernel whose first call passes `timeout` seconds is
    stopped (SIGALRM) and reported as such; repeats are cut so a kernel's
    cached calls stop once the kernel has taken a minute (or `timeout`)."""
    import signal

    import networkx as nx

    df = edges(path)
    t = time.perf_counter()
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_edges_from(zip(df["src"].tolist(), df["dst"].tolist()))
    del df
    if not directed:
        G.remove_edges_from(list(nx.selfloop_edges(G)))
    build = time.perf_counter() - t
    deg = G.out_degree() if directed else G.degree()
    root = min(G, key=lambda v: (-deg[v], v))
    kw = {} if backend == "networkx" else {"backend": backend}

    def call(kernel):
        # "+read": the result's values read into a dict, for backends that
        # return a lazy mapping (graphblas's NodeMap computes each value on
        # access), so every column counts the same work.
        if kernel.endswith("+read"):
            k = kernel[: -len("+read")]
            if k == "pagerank":
                return len(dict(nx.pagerank(G, alpha=0.85, tol=1e-6, **kw)))
            if k == "bfs":
                return len(dict(nx.single_source_shortest_path_length(G, root, **kw)))
        if kernel == "pagerank":
            return len(nx.pagerank(G, alpha=0.85, tol=1e-6, **kw))
        if kernel == "cc":
            f = nx.weakly_connected_components if directed else nx.connected_components
            return sum(1 for _ in f(G, **kw))
        if kernel == "bc64":
            return len(nx.betweenness_centrality(G, k=64, seed=1, **kw))
        if kernel == "bfs":
            return len(nx.single_source_shortest_path_length(G, root, **kw))
        raise SystemExit(f"unknown kernel {kernel}")

    signal.signal(signal.SIGALRM, _alarm)
    out = []
    for kernel in kernels:
        row = {"kernel": kernel, "backend": backend, "networkx": nx.__version__,
               "nodes": G.number_of_nodes(),
               "edges": G.number_of_edges(), "nx_build": build}
        row["rss_before_mib"] = rss_mib()
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout)
            t = time.perf_counter()
            row["answer"] = call(kernel)
            row["first"] = time.perf_counter() - t
            signal.setitimer(signal.ITIMER_REAL, 0)
            times = []
            for _ in range(repeat):
                if sum(times) + row["first"] > min(timeout, 60.0):
                    break
                t = time.perf_counter()
                call(kernel)
                times.append(time.perf_counter() - t)
            row["runs"] = times
            row["cached"] = statistics.median(times) if times else None
        except Timeout:
            row["timeout"] = timeout
        except NotImplementedError as e:
            row["unsupported"] = str(e).splitlines()[0][:200]
        except Exception as e:  # a peer's own failure: recorded, the next kernel runs
            row["error"] = f"{type(e).__name__}: {e}"[:200]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        row["peak_mib"] = peak_mib()
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def load_cell(path: str, directed: bool, library: str, repeat: int) -> dict:
    df = edges(path)
    base = peak_mib()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        if library == "plexus":
            import plexus

            g = plexus.from_edges(df, directed=directed)
            n, m = g.num_vertices, g.num_edges
        elif library == "igraph":
            import igraph as ig

            g = ig.Graph.DataFrame(df, directed=directed, use_vids=False)
            n, m = g.vcount(), g.ecount()
        elif library == "networkit":
            import networkit as nk

            # Its from-edge-list path: ids must be 0..n-1, so they are
            # compacted first (np.unique), then GraphFromCoo.
            ids, inv = np.unique(np.concatenate([df["src"].to_numpy(), df["dst"].to_numpy()]),
                                 return_inverse=True)
            k = len(df)
            g = nk.graph.GraphFromCoo((np.ones(k), (inv[:k].astype(np.uint64), inv[k:].astype(np.uint64))),
                                      n=len(ids), directed=directed, weighted=False)
            n, m = g.numberOfNodes(), g.numberOfEdges()
        else:
            raise SystemExit(f"unknown library {library}")
        times.append(time.perf_counter() - t)
        del g
    return {"seconds": statistics.median(times), "runs": times, "vertices": n, "edges": m,
            "rows": len(df), "peak_mib": peak_mib(), "input_mib": base}


def pagerank_cell(name: str, data_dir: str, repeat: int) -> dict:
    import plexus

    g = plexus.open(name, data_dir)
    g.pagerank()  # warm-up, as `plexus run --warmup` does
    times = []
    for _ in range(repeat):
        r = g.pagerank()
        times.append(r.compute_seconds)
    return {"compute": statistics.median(times), "runs": times, "iterations": r.iterations,
            "method": r.summary.get("method"), "precision": r.summary.get("precision")}


def main(argv: list) -> None:
    mode = argv[1]
    if mode == "pagerank":
        print(json.dumps(pagerank_cell(argv[2], argv[3], int(argv[4]))))
        return
    path, directed = argv[2], argv[3] == "directed"
    if mode == "nx":
        nx_cell(path, directed, argv[4], argv[5].split(","), int(argv[6]), float(argv[7]))
        return
    if mode == "load":
        out = load_cell(path, directed, argv[4], int(argv[5]))
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv)
