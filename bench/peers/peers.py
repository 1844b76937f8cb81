#!/usr/bin/env python3
"""Times Plexus's kernels in the Python graph libraries a Plexus user could use instead.

    peers.py --graph NAME --file PATH (--directed|--undirected) --out results.jsonl
             [--kernels bfs,sssp,...] [--libraries networkit,igraph,...] [--root R]
             [--runs 5] [--threads 2] [--timeout 120] [--pr-tol 1e-4]
             [--bc-sources 4] [--cdlp-iterations 10] [--seed 42]

The input is a text edge list "u v w" (w: integer weight 1..255, used only by
sssp; lines starting with # or % are comments). Vertex ids are used as given:
n = max id + 1 in every library, so ids absent from the file become isolated
vertices. --undirected graphs are made simple (no self-loops, one edge per
pair) by each library's own de-duplication; --directed graphs are kept as in
the file (where the library allows).

Every library runs in its own child process (this script with --worker), so a
kernel that passes --timeout on its first run is killed (status "timeout") and a
crash only loses that kernel (status "error"); the next kernel starts in a fresh
child. One JSON line per (library, kernel) is appended to --out; a progress line
per kernel goes to stderr. What each kernel calls in each library, and how the
parameters are equalised, is in README.md beside this file.
"""
import argparse
import gc
import json
import os
import selectors
import subprocess
import sys
import time
from importlib import metadata

import numpy as np

KERNELS = ["bfs", "sssp", "pagerank", "ppr", "wcc", "scc", "betweenness", "triangles",
           "lcc", "kcore", "cdlp", "coloring", "mis"]
DIRECTED_ONLY = {"scc"}
UNDIRECTED_ONLY = {"triangles", "lcc", "kcore"}
LIBRARIES = ["networkit", "igraph", "graphblas", "rustworkx", "graph_mate"]
# How long a child may take to import its library and load the graph, or to
# build a kernel's untimed inputs.
LOAD_TIMEOUT = 1800.0


# ----------------------------------------------------------------------------
# Input and the choices shared by every library
# ----------------------------------------------------------------------------

def read_edges(path, block_bytes=64 << 20):
    """Parses the edge list into int64 arrays (u, v, w); w is all ones if the
    file has two columns. Streams the file in blocks of whole lines."""
    parts, ncols, rest = [], None, b""
    with open(path, "rb") as f:
        while True:
            chunk = f.read(block_bytes)
            block = rest + chunk
            cut = block.rfind(b"\n") + 1 if chunk else len(block)
            block, rest = block[:cut], block[cut:]
            if b"#" in block or b"%" in block:
                block = b"\n".join(l for l in block.split(b"\n")
                                   if l.lstrip()[:1] not in (b"#", b"%"))
            if ncols is None and block.strip():
                ncols = len(next(l for l in block.split(b"\n") if l.strip()).split())
                if ncols not in (2, 3):
                    raise ValueError(f"{path}: expected 'u v' or 'u v w' per line, got {ncols} columns")
            nums = np.fromstring(block, dtype=np.int64, sep=" ") if block.strip() else None
            if nums is not None:
                if nums.size % ncols:
                    raise ValueError(f"{path}: a line does not have {ncols} columns")
                parts.append(nums.reshape(-1, ncols))
            if not chunk:
                break
    if not parts:
        raise ValueError(f"{path}: no edges")
    edges = np.concatenate(parts)
    u, v = np.ascontiguousarray(edges[:, 0]), np.ascontiguousarray(edges[:, 1])
    w = np.ascontiguousarray(edges[:, 2]) if ncols == 3 else np.ones_like(u)
    if u.min() < 0 or v.min() < 0:
        raise ValueError(f"{path}: negative vertex id")
    return u, v, w


class Edges:
    """The parsed file: n, the arrays, and whether the graph is directed.
    For undirected graphs self-loops are dropped here (every library would
    drop them anyway); duplicates are left to each library."""

    def __init__(self, path, directed):
        u, v, w = read_edges(path)
        self.n = int(max(u.max(), v.max())) + 1
        if not directed:
            keep = u != v
            u, v, w = u[keep], v[keep], w[keep]
        self.u, self.v, self.w, self.directed = u, v, w, directed

    def without_loops(self):
        """(u, v, w) without self-loops: the input of an undirected view."""
        keep = self.u != self.v
        return self.u[keep], self.v[keep], self.w[keep]


def out_degrees(e):
    """Out-degree in the graph the libraries see: the file's arcs for a
    directed graph, distinct neighbours for an undirected one."""
    if e.directed:
        return np.bincount(e.u, minlength=e.n)
    lo, hi = np.minimum(e.u, e.v), np.maximum(e.u, e.v)
    pairs = np.unique(lo * e.n + hi)
    return np.bincount(pairs // e.n, minlength=e.n) + np.bincount(pairs % e.n, minlength=e.n)


def choose_root_and_sources(e, root, k, seed):
    """Root: given, else the largest out-degree vertex (lowest id on ties).
    Betweenness sources: k vertices with out-degree > 0 drawn without
    replacement by numpy's default_rng(seed), in ascending order."""
    deg = out_degrees(e)
    if root is None:
        root = int(np.argmax(deg))
    elif not 0 <= root < e.n:
        raise ValueError(f"--root {root} is not a vertex (ids are 0..{e.n - 1})")
    candidates = np.flatnonzero(deg > 0)
    rng = np.random.default_rng(seed)
    sources = np.sort(rng.choice(candidates, size=min(k, candidates.size), replace=False))
    return root, [int(s) for s in sources]


# ----------------------------------------------------------------------------
# Per-vertex results → small checkable summaries (computed outside the timing)
# ----------------------------------------------------------------------------

def summarise(kernel, result):
    """A few numbers that must agree across libraries (where the kernel is
    deterministic) so results can be sanity-compared."""
    if kernel == "bfs":
        reached = result >= 0
        return {"reached": int(reached.sum()), "max_depth": int(result[reached].max()),
                "sum_depth": int(result[reached].sum())}
    if kernel == "sssp":
        finite = np.isfinite(result)
        return {"reached": int(finite.sum()), "max_distance": float(result[finite].max()),
                "sum_distance": float(result[finite].sum())}
    if kernel in ("pagerank", "ppr", "betweenness", "lcc"):
        top = int(np.argmax(result))
        s = {"top": top, "top_value": float(result[top]), "sum": float(result.sum(dtype=np.float64))}
        if kernel == "lcc":
            s["average"] = float(result.mean(dtype=np.float64))
        return s
    if kernel in ("wcc", "scc", "cdlp"):
        _, sizes = np.unique(result, return_counts=True)
        key = "communities" if kernel == "cdlp" else "components"
        return {key: int(sizes.size), "largest": int(sizes.max())}
    if kernel == "triangles":
        return {"triangles": int(result)}
    if kernel == "kcore":
        return {"max_core": int(result.max()), "sum_core": int(result.sum())}
    if kernel == "coloring":
        return {"colors": int(result.max()) + 1}
    if kernel == "mis":
        return {"size": int(result.sum())}
    raise ValueError(kernel)


def membership(groups, n):
    """Per-vertex group index from an iterable of vertex collections."""
    out = np.empty(n, dtype=np.int64)
    for i, g in enumerate(groups):
        out[np.fromiter(g, dtype=np.int64, count=len(g))] = i
    return out


def from_mapping(mapping, n, fill):
    """Per-vertex float array from a {vertex: value} mapping."""
    out = np.full(n, fill, dtype=np.float64)
    out[np.fromiter(mapping.keys(), dtype=np.int64, count=len(mapping))] = \
        np.fromiter(mapping.values(), dtype=np.float64, count=len(mapping))
    return out


def depth_from_layers(layers, n):
    """BFS depth per vertex (-1 unreached) from a list of layers."""
    depth = np.full(n, -1, dtype=np.int64)
    depth[np.concatenate(layers)] = np.repeat(np.arange(len(layers)), [len(l) for l in layers])
    return depth


def edge_chunks(u, v, w=None, size=1 << 22):
    """Yields the edges as lists of Python tuples (u, v) or (u, v, w), `size`
    at a time: APIs that take only Python sequences get them in chunks, so
    the temporaries (~150 bytes an edge) stay bounded on big graphs."""
    for i in range(0, u.size, size):
        cols = (u[i:i + size], v[i:i + size]) + (() if w is None else (w[i:i + size],))
        yield list(zip(*(c.tolist() for c in cols)))


def wedges(degrees):
    """Number of paths of length 2 (connected triples), Σ d(d-1)/2."""
    d = np.asarray(degrees, dtype=np.int64)
    return int((d * (d - 1) // 2).sum())


# ----------------------------------------------------------------------------
# Libraries. Each adapter builds its graph in load() (timed as load_seconds)
# and has one method k_<kernel> per kernel it has: the method is the timed
# region and returns the per-vertex numpy array (or the count). Anything a
# kernel needs besides the loaded graph (a weighted copy, an undirected view)
# is returned by prep_<kernel>(), called before the timing, and passed to
# k_<kernel>; prepare() builds each such input once and records its time for
# the note. LACKS names the kernels the library has no call for, with why.
# NOTES says what a kernel calls where that is not obvious.
# ----------------------------------------------------------------------------

class Adapter:
    LACKS = {}
    NOTES = {}

    def __init__(self, edges, params):
        self.e, self.p = edges, params
        self.n = edges.n
        self._prepared = {}  # what -> (structure, seconds to build it)
        self.used = set()  # what the current kernel's prep_ asked for
        self.iterations = None  # set by kernels whose API reports it

    def prepare(self, what, build):
        """Builds an auxiliary structure once (not timed); returns it."""
        if what not in self._prepared:
            t = time.perf_counter()
            built = build()
            self._prepared[what] = (built, time.perf_counter() - t)
        self.used.add(what)
        return self._prepared[what][0]

    def prep_note(self):
        """'weighted graph built in 0.123 s' for the inputs the current kernel used."""
        return ", ".join(f"{w} built in {self._prepared[w][1]:.3f} s" for w in sorted(self.used)) or None

    def undirected_view(self):
        """The simple undirected graph under a directed one (for cdlp,
        coloring and mis, which Plexus runs on that view too)."""
        if not self.e.directed:
            return self.g
        return self.prepare("undirected view", lambda: self.build(*self.e.without_loops()[:2], False))

    def weighted(self):
        """The same graph with the file's weights (for sssp)."""
        return self.prepare("weighted graph", lambda: self.build(self.e.u, self.e.v, self.e.directed, self.e.w))

    prep_sssp = weighted
    prep_cdlp = prep_coloring = prep_mis = undirected_view


class NetworKit(Adapter):
    """NetworKit: C++/OpenMP, threads set with setNumberOfThreads."""
    LACKS = {
        "ppr": "no personalised PageRank in the 11.x Python API (scd.ApproximatePageRank is a "
               "local push approximation with a different stopping rule; not timed)",
        "coloring": "no greedy colouring (only coloring.SpectralColoring)",
    }
    NOTES = {
        "betweenness": "EstimateBetweenness(k, parallel) draws its own k sources (nk.setSeed(seed)); "
                       "cannot take the source list",
        "cdlp": "PLP (asynchronous, stops when < n/1e5 labels change) capped at --cdlp-iterations",
        "pagerank": "PageRank(tol, L1 norm: sum|delta| <= tol, DistributeSinks, maxIterations 100)",
        "mis": "independentset.Luby (randomised parallel MIS)",
        "triangles": "sum of sparsification.TriangleEdgeScore / 3 (no global count call)",
    }

    def __init__(self, edges, params):
        import networkit as nk
        nk.setNumberOfThreads(params.threads)
        nk.setSeed(params.seed, False)
        self.nk = nk
        super().__init__(edges, params)

    def build(self, u, v, directed, w=None):
        nk = self.nk
        data = (u, v) if w is None else (w.astype(np.float64), (u, v))
        g = nk.GraphFromCoo(data, n=self.n, weighted=w is not None, directed=directed)
        if not directed:
            g.removeMultiEdges()
        return g

    def load(self):
        self.g = self.build(self.e.u, self.e.v, self.e.directed)
        if not self.e.directed:
            self.g.indexEdges()  # TriangleEdgeScore needs edge ids
        return self.g.numberOfEdges()

    def k_bfs(self):
        b = self.nk.distance.BFS(self.g, self.p.root, storePaths=False)
        b.run()
        d = np.asarray(b.getDistances())
        return np.where(d < 1e300, d, -1).astype(np.int64)  # unreached: float max

    def k_sssp(self, gw):
        d = self.nk.distance.Dijkstra(gw, self.p.root, storePaths=False)
        d.run()
        dist = np.asarray(d.getDistances())
        return np.where(dist < 1e300, dist, np.inf)

    def k_pagerank(self):
        c = self.nk.centrality
        pr = c.PageRank(self.g, damp=0.85, tol=self.p.pr_tol, distributeSinks=c.SinkHandling.DistributeSinks)
        pr.norm = c.Norm.L1_NORM
        pr.maxIterations = 100
        pr.run()
        self.iterations = pr.numberOfIterations()
        return np.asarray(pr.scores())

    def k_wcc(self):
        c = self.nk.components
        cc = (c.WeaklyConnectedComponents if self.e.directed else c.ConnectedComponents)(self.g)
        cc.run()
        return np.asarray(cc.getPartition().getVector())

    def k_scc(self):
        cc = self.nk.components.StronglyConnectedComponents(self.g)
        cc.run()
        return np.asarray(cc.getPartition().getVector())

    def k_betweenness(self):
        b = self.nk.centrality.EstimateBetweenness(self.g, len(self.p.sources), normalized=False, parallel=True)
        b.run()
        return np.asarray(b.scores())

    def k_triangles(self):
        t = self.nk.sparsification.TriangleEdgeScore(self.g)
        t.run()
        return int(np.asarray(t.scores(), dtype=np.int64).sum()) // 3

    def k_lcc(self):
        lcc = self.nk.centrality.LocalClusteringCoefficient(self.g, turbo=True)
        lcc.run()
        return np.asarray(lcc.scores())

    def k_kcore(self):
        k = self.nk.centrality.CoreDecomposition(self.g)
        k.run()
        return np.asarray(k.scores()).astype(np.int64)

    def k_cdlp(self, g):
        plp = self.nk.community.PLP(g, maxIterations=self.p.cdlp_iterations)
        plp.run()
        return np.asarray(plp.getPartition().getVector())

    def k_mis(self, g):
        return np.asarray(self.nk.independentset.Luby().run(g), dtype=bool)


class IGraph(Adapter):
    """python-igraph: C core, single-threaded in every kernel used here."""
    LACKS = {
        "mis": "no single maximal independent set call (maximal_independent_vertex_sets "
               "enumerates all of them, largest_independent_vertex_sets is exact/NP-hard)",
    }
    NOTES = {
        "pagerank": "pagerank(implementation='prpack'): direct solve (~1e-10), no tolerance knob; "
                    "dangling mass uniform",
        "ppr": "personalized_pagerank(reset_vertices=[root], prpack): direct solve, no tolerance knob",
        "betweenness": "betweenness(sources=S): the same sources as the harness",
        "triangles": "transitivity_undirected() * wedges / 3 (no count call; wedges from degrees, untimed)",
        "cdlp": "community_label_propagation(): runs until no label changes (no iteration cap)",
        "coloring": "vertex_coloring_greedy() (COLORED_NEIGHBORS heuristic)",
    }

    def __init__(self, edges, params):
        import igraph as ig
        self.ig = ig
        super().__init__(edges, params)

    def build(self, u, v, directed, w=None):
        # One add_edges call per chunk of 4M edges (each call re-indexes the graph).
        g = self.ig.Graph(n=self.n, directed=directed)
        for chunk in edge_chunks(u, v, w):
            if w is None:
                g.add_edges(chunk)
            else:
                g.add_edges([e[:2] for e in chunk], attributes={"w": [e[2] for e in chunk]})
        if not directed:
            g.simplify(multiple=True, loops=True, combine_edges="min")
        return g

    def load(self):
        self.g = self.build(self.e.u, self.e.v, self.e.directed)
        return self.g.ecount()

    def k_bfs(self):
        vids, starts, _ = self.g.bfs(self.p.root, mode="out")
        depth = np.full(self.n, -1, dtype=np.int64)
        depth[np.asarray(vids)] = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
        return depth

    def k_sssp(self, gw):
        return np.asarray(gw.distances(source=self.p.root, weights="w", mode="out",
                                       algorithm="dijkstra")[0], dtype=np.float64)

    def k_pagerank(self):
        return np.asarray(self.g.pagerank(damping=0.85, implementation="prpack"))

    def k_ppr(self):
        return np.asarray(self.g.personalized_pagerank(damping=0.85, reset_vertices=[self.p.root],
                                                       implementation="prpack"))

    def k_wcc(self):
        return np.asarray(self.g.connected_components("weak").membership)

    def k_scc(self):
        return np.asarray(self.g.connected_components("strong").membership)

    def k_betweenness(self):
        return np.asarray(self.g.betweenness(sources=self.p.sources, directed=True))

    def prep_triangles(self):
        return self.prepare("wedge count", lambda: wedges(self.g.degree()))

    def k_triangles(self, w):
        return round(self.g.transitivity_undirected() * w / 3)

    def k_lcc(self):
        return np.asarray(self.g.transitivity_local_undirected(mode="zero"))

    def k_kcore(self):
        return np.asarray(self.g.coreness())

    def k_cdlp(self, g):
        return np.asarray(g.community_label_propagation().membership)

    def k_coloring(self, g):
        return np.asarray(g.vertex_coloring_greedy())


class GraphBLAS(Adapter):
    """python-graphblas (SuiteSparse:GraphBLAS, OpenMP) + graphblas-algorithms."""
    LACKS = {
        "wcc": "no connected components (only is_connected / node_connected_component)",
        "scc": "no strongly connected components",
        "betweenness": "no betweenness centrality",
        "kcore": "no core numbers (only k_truss)",
        "cdlp": "no label propagation",
        "coloring": "no colouring",
        "mis": "no maximal independent set",
    }
    NOTES = {
        "sssp": "single_source_bellman_ford_path_length (min-plus Bellman-Ford, its only SSSP)",
        "pagerank": "pagerank(tol=pr_tol/n): stops when sum|delta| < n*tol; dangling mass uniform",
        "ppr": "pagerank(personalization=e_root, tol=pr_tol/n); dangling mass follows personalisation",
        "triangles": "total_triangles",
    }

    def __init__(self, edges, params):
        import graphblas as gb
        gb.ss.config["nthreads"] = params.threads
        import graphblas_algorithms as ga
        self.gb, self.ga = gb, ga
        super().__init__(edges, params)

    def matrix(self, u, v, directed, w=None):
        """Adjacency matrix; iso-valued INT64 1 without weights (a BOOL matrix
        breaks pagerank's degree computation); duplicate entries collapse."""
        gb = self.gb
        if w is None:
            a = gb.Matrix.from_coo(u, v, 1, dtype="INT64", nrows=self.n, ncols=self.n)
            op = gb.binary.any
        else:
            a = gb.Matrix.from_coo(u, v, w, dtype="INT64", nrows=self.n, ncols=self.n, dup_op=gb.binary.min)
            op = gb.binary.min
        if not directed:
            a = a.ewise_add(a.T, op).new()
        return a

    def build(self, u, v, directed, w=None):
        a = self.matrix(u, v, directed, w)
        return self.ga.DiGraph(a) if directed else self.ga.Graph(a)

    def load(self):
        self.g = self.build(self.e.u, self.e.v, self.e.directed)
        return self.g._A.nvals if self.e.directed else self.g._A.nvals // 2

    def k_bfs(self):
        return self.ga.single_source_shortest_path_length(self.g, self.p.root).to_dense(fill_value=-1)

    def k_sssp(self, gw):
        d = self.ga.single_source_bellman_ford_path_length(gw, self.p.root)
        return d.to_dense(fill_value=np.inf, dtype=np.float64)

    def k_pagerank(self):
        pr = self.ga.pagerank(self.g, alpha=0.85, tol=self.p.pr_tol / self.n, max_iter=100)
        return pr.to_dense(fill_value=0.0)

    def prep_ppr(self):
        return self.prepare("personalization vector",
                            lambda: self.gb.Vector.from_coo([self.p.root], [1.0], size=self.n))

    def k_ppr(self, p):
        pr = self.ga.pagerank(self.g, alpha=0.85, personalization=p, tol=self.p.pr_tol / self.n, max_iter=100)
        return pr.to_dense(fill_value=0.0)

    def k_triangles(self):
        return int(self.ga.total_triangles(self.g))

    def k_lcc(self):
        return self.ga.clustering(self.g).to_dense(fill_value=0.0)


class RustworkX(Adapter):
    """rustworkx (Rust, petgraph); parallel kernels use rayon (RAYON_NUM_THREADS)."""
    LACKS = {
        "betweenness": "only exact betweenness over all sources; no sampling or source subset",
        "lcc": "no local clustering (only global transitivity)",
        "cdlp": "no label propagation",
        "mis": "no maximal independent set",
    }
    NOTES = {
        "sssp": "dijkstra_shortest_path_lengths(edge_cost_fn=float): a Python callback per edge",
        "pagerank": "pagerank(tol=pr_tol/n, max_iter 100; NetworkX rule sum|delta| < n*tol); "
                    "on PyDiGraph only: an undirected graph runs on its to_directed() copy (untimed)",
        "ppr": "pagerank(personalization={root: 1}); dangling mass follows personalisation",
        "triangles": "transitivity() * wedges / 3 (no count call; wedges from degrees, untimed)",
        "coloring": "graph_greedy_color (Degree = largest-first strategy)",
    }

    def __init__(self, edges, params):
        import rustworkx as rx
        self.rx = rx
        super().__init__(edges, params)

    def build(self, u, v, directed, w=None):
        rx = self.rx
        # Directed: a multigraph keeps the file's arcs; undirected: one edge per pair.
        g = rx.PyDiGraph(multigraph=True) if directed else rx.PyGraph(multigraph=False)
        g.add_nodes_from(range(self.n))
        for chunk in edge_chunks(u, v, w):
            if w is None:
                g.add_edges_from_no_data(chunk)
            else:
                g.add_edges_from(chunk)
        return g

    def load(self):
        self.g = self.build(self.e.u, self.e.v, self.e.directed)
        return self.g.num_edges()

    def directed_graph(self):
        """pagerank takes only a PyDiGraph: an undirected graph's to_directed() copy."""
        if self.e.directed:
            return self.g
        return self.prepare("to_directed copy", self.g.to_directed)

    prep_pagerank = prep_ppr = directed_graph

    def k_bfs(self):
        return depth_from_layers(self.rx.bfs_layers(self.g, [self.p.root]), self.n)

    def k_sssp(self, gw):
        dist = from_mapping(self.rx.dijkstra_shortest_path_lengths(gw, self.p.root, float), self.n, np.inf)
        dist[self.p.root] = 0.0
        return dist

    def k_pagerank(self, d):
        pr = self.rx.pagerank(d, alpha=0.85, tol=self.p.pr_tol / self.n, max_iter=100)
        return from_mapping(pr, self.n, 0.0)

    def k_ppr(self, d):
        pr = self.rx.pagerank(d, alpha=0.85, personalization={self.p.root: 1.0},
                              tol=self.p.pr_tol / self.n, max_iter=100)
        return from_mapping(pr, self.n, 0.0)

    def k_wcc(self):
        rx = self.rx
        comps = rx.weakly_connected_components(self.g) if self.e.directed else rx.connected_components(self.g)
        return membership(comps, self.n)

    def k_scc(self):
        return membership(self.rx.strongly_connected_components(self.g), self.n)

    def prep_triangles(self):
        return self.prepare("wedge count", lambda: wedges([self.g.degree(x) for x in range(self.n)]))

    def k_triangles(self, w):
        return round(self.rx.transitivity(self.g) * w / 3)

    def k_kcore(self):
        return from_mapping(self.rx.core_number(self.g), self.n, 0).astype(np.int64)

    def k_coloring(self, g):
        return from_mapping(self.rx.graph_greedy_color(g), self.n, 0).astype(np.int64)


class GraphMate(Adapter):
    """graph_mate: Python face of neo4j-labs' Rust `graph` crate (32-bit ids).
    Its kernels use std threads sized by available_parallelism (the CPU
    affinity), so the worker pins itself to --threads CPUs."""
    LACKS = dict.fromkeys(("bfs", "sssp", "ppr", "scc", "betweenness", "lcc", "kcore", "cdlp", "coloring", "mis"),
                          "graph_mate 0.2.0 exposes only page_rank, wcc and global_triangle_count")
    NOTES = {
        "pagerank": "DiGraph.page_rank(tolerance=pr_tol: stops when sum|delta| < tol, f32 scores, "
                    "max 100 iterations); dangling mass is NOT redistributed (ranks sum < 1)",
        "wcc": "DiGraph.wcc() (Afforest); an undirected graph runs on a symmetric DiGraph (untimed)",
        "triangles": "Graph.global_triangle_count() on the Deduplicated graph after "
                     "make_degree_ordered() (untimed prep, as the crate's own app does)",
    }

    def __init__(self, edges, params):
        import graph_mate as gm
        self.gm = gm
        super().__init__(edges, params)

    def build(self, u, v, directed):
        gm = self.gm
        pairs = np.stack([u, v], axis=1).astype(np.uint32)
        if directed:
            return gm.DiGraph.from_numpy(pairs, gm.Layout.Sorted)
        return gm.Graph.from_numpy(pairs, gm.Layout.Deduplicated)

    def load(self):
        if self.e.u.size and max(int(self.e.u.max()), int(self.e.v.max())) >= 1 << 32:
            raise ValueError("vertex ids do not fit graph_mate's 32-bit ids")
        self.g = self.build(self.e.u, self.e.v, self.e.directed)
        return self.g.edge_count()

    def directed_graph(self):
        """page_rank and wcc exist only on DiGraph: an undirected graph gets a
        symmetric DiGraph."""
        if self.e.directed:
            return self.g

        def symmetric():
            both = np.stack([np.concatenate([self.e.u, self.e.v]), np.concatenate([self.e.v, self.e.u])], axis=1)
            return self.gm.DiGraph.from_numpy(both.astype(np.uint32), self.gm.Layout.Deduplicated)
        return self.prepare("symmetric DiGraph", symmetric)

    prep_pagerank = prep_wcc = directed_graph

    def k_pagerank(self, d):
        r = d.page_rank(max_iterations=100, tolerance=self.p.pr_tol, damping_factor=0.85)
        self.iterations = r.ran_iterations
        return r.scores()

    def k_wcc(self, d):
        return d.wcc().components()

    def prep_triangles(self):
        self.prepare("make_degree_ordered", self.g.make_degree_ordered)
        return self.g

    def k_triangles(self, g):
        return int(g.global_triangle_count().triangles)


ADAPTERS = {"networkit": NetworKit, "igraph": IGraph, "graphblas": GraphBLAS,
            "rustworkx": RustworkX, "graph_mate": GraphMate}
# The package reported as "version" (graphblas: the algorithms package, with
# the python-graphblas and SuiteSparse versions appended).
VERSION_OF = {"networkit": "networkit", "igraph": "igraph", "graphblas": "graphblas-algorithms",
              "rustworkx": "rustworkx", "graph_mate": "graph_mate"}


def library_version(lib):
    try:
        v = metadata.version(VERSION_OF[lib])
    except metadata.PackageNotFoundError:
        return None
    if lib == "graphblas":
        v += f" (python-graphblas {metadata.version('python-graphblas')}, " \
             f"suitesparse-graphblas {metadata.version('suitesparse-graphblas')})"
    return v


def applicable(kernel, directed):
    """'n/a' kernels: scc needs a directed graph; triangles, lcc, kcore an undirected one."""
    return not ((kernel in DIRECTED_ONLY and not directed) or (kernel in UNDIRECTED_ONLY and directed))


# ----------------------------------------------------------------------------
# Worker: one library in a child process
# ----------------------------------------------------------------------------

def runs_for(first, wanted):
    """Timed runs for a kernel whose first run took `first` seconds."""
    if first > 60:
        return 1
    if first > 10:
        return min(wanted, 3)
    return wanted


def busy_cpu_seconds():
    """CPU seconds all processes have been busy since boot (/proc/stat), or
    None where that file does not exist."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(x) for x in f.readline().split()[1:9]]
    except OSError:
        return None
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # minus idle, iowait


def others_cpu(before, after, own, wall):
    """Cores used by other processes during `wall` seconds of timed runs."""
    if before is None or after is None or wall <= 0:
        return None
    return round(max(0.0, (after - before - own) / wall), 2)


def worker(args):
    """Loads the graph into one library and times the given kernels,
    reporting events as JSON lines on the pipe the parent passed."""
    out = os.fdopen(args.worker_fd, "w", buffering=1)

    def emit(**event):
        out.write(json.dumps(event) + "\n")

    lib = args.worker
    if lib == "graph_mate":
        cpus = sorted(os.sched_getaffinity(0))
        if args.threads < len(cpus):
            os.sched_setaffinity(0, cpus[:args.threads])
    try:
        t0 = time.perf_counter()
        edges = Edges(args.file, args.directed)
        parsed = time.perf_counter()
        adapter = ADAPTERS[lib](edges, args)
        imported = time.perf_counter()
        m = adapter.load()
        done = time.perf_counter()
    except ImportError as exc:
        emit(event="load_error", message=f"not installable/importable: {exc}")
        return
    except Exception as exc:  # any load failure ends this library
        emit(event="load_error", message=f"{type(exc).__name__}: {exc}")
        return
    emit(event="load", parse_seconds=parsed - t0, load_seconds=(parsed - t0) + (done - imported),
         n=edges.n, m=int(m))

    for kernel in args.kernels.split(","):
        emit(event="prep", kernel=kernel)
        runs, result = [], None
        try:
            fn = getattr(adapter, "k_" + kernel)
            prep = getattr(adapter, "prep_" + kernel, None)
            adapter.used.clear()
            inputs = () if prep is None else (prep(),)
            # Untimed warm-up (`--warmup`): calls until that many seconds
            # have passed, at most one when a call takes longer.
            warm0 = time.perf_counter()
            while args.warmup > 0 and time.perf_counter() - warm0 < args.warmup:
                gc.collect()
                fn(*inputs)
            emit(event="start", kernel=kernel)
            wanted = args.runs
            busy0, own0, wall0 = busy_cpu_seconds(), os.times(), time.monotonic()
            while len(runs) < wanted:
                gc.collect()
                t = time.perf_counter()
                r = fn(*inputs)
                runs.append(time.perf_counter() - t)
                if result is None:
                    result = r
                    wanted = runs_for(runs[0], args.runs)
                emit(event="run", kernel=kernel, seconds=runs[-1])
                r = None
            own1 = os.times()
            others = others_cpu(busy0, busy_cpu_seconds(), own1.user + own1.system - own0.user - own0.system,
                                time.monotonic() - wall0)
            summary = summarise(kernel, result)
            if adapter.iterations is not None:
                summary["iterations"] = adapter.iterations
                adapter.iterations = None
            status, message = "ok", None
        except Exception as exc:
            summary, status, others = None, "error", None
            message = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        result = None
        emit(event="done", kernel=kernel, status=status, runs=runs, summary=summary, message=message,
             prep=adapter.prep_note(), others_cpu=others)


# ----------------------------------------------------------------------------
# Parent: spawns workers, enforces timeouts, writes the JSON lines
# ----------------------------------------------------------------------------

class Child:
    """A worker process and a line reader over its event pipe."""

    def __init__(self, args, lib, kernels):
        r, w = os.pipe()
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", lib, "--worker-fd", str(w),
               "--graph", args.graph, "--file", args.file,
               "--directed" if args.directed else "--undirected",
               "--kernels", ",".join(kernels), "--root", str(args.root),
               "--sources", ",".join(map(str, args.sources)), "--runs", str(args.runs),
               "--warmup", str(args.warmup),
               "--threads", str(args.threads), "--pr-tol", repr(args.pr_tol),
               "--cdlp-iterations", str(args.cdlp_iterations), "--seed", str(args.seed),
               "--out", os.devnull]
        # Library chatter on stdout must not mix with the parent's output.
        self.proc = subprocess.Popen(cmd, pass_fds=(w,), stdout=sys.stderr, env=thread_env(args.threads))
        os.close(w)
        self.fd, self.buf = r, b""
        self.sel = selectors.DefaultSelector()
        self.sel.register(r, selectors.EVENT_READ)

    def next_event(self, deadline):
        """The next event, None on end of stream, or "timeout"."""
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not self.sel.select(left):
                return "timeout"
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def close(self, kill=False):
        if kill and self.proc.poll() is None:
            self.proc.kill()
        code = self.proc.wait()
        self.sel.close()
        os.close(self.fd)
        return code


def thread_env(threads):
    """Environment that caps every threading runtime the libraries use."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "RAYON_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMBA_NUM_THREADS"):
        env[var] = str(threads)
    return env


def describe_exit(code):
    return f"killed by signal {-code}" if code < 0 else f"exited with code {code}"


def run_library(args, lib, kernels, write):
    """Runs `kernels` (all applicable, none lacking) of one library, starting
    a fresh worker after a timeout or crash. Calls write(kernel, fields, load)
    per kernel, load being the worker's first load event."""
    load, pending = None, list(kernels)
    while pending:
        child = Child(args, lib, pending)
        ev = child.next_event(time.monotonic() + LOAD_TIMEOUT)
        if not isinstance(ev, dict) or ev["event"] == "load_error":
            code = child.close(kill=True)
            msg = ev["message"] if isinstance(ev, dict) else \
                "load timed out" if ev == "timeout" else f"worker {describe_exit(code)} while loading"
            for k in pending:
                write(k, {"status": "error", "note": msg})
            return
        if load is None:
            load = ev
            print(f"[peers] {args.graph} {lib}: load {load['load_seconds']:.3f} s "
                  f"(parse {load['parse_seconds']:.3f} s), n={load['n']:,} m={load['m']:,}", file=sys.stderr)
        current, timing, runs, deadline = None, False, [], time.monotonic() + LOAD_TIMEOUT
        while True:
            ev = child.next_event(deadline)
            if isinstance(ev, dict) and ev["event"] == "prep":
                current, timing, runs = ev["kernel"], False, []
                deadline = time.monotonic() + LOAD_TIMEOUT
            elif isinstance(ev, dict) and ev["event"] == "start":
                timing = True
                deadline = time.monotonic() + args.timeout
            elif isinstance(ev, dict) and ev["event"] == "run":
                runs.append(ev["seconds"])
                # Later runs: the same cap, widened if the first run was close to it.
                deadline = time.monotonic() + max(args.timeout, 3 * runs[0])
            elif isinstance(ev, dict) and ev["event"] == "done":
                note = "; ".join(x for x in (ev["message"], ev["prep"] and f"untimed input: {ev['prep']}") if x)
                write(current, {"status": ev["status"], "runs": ev["runs"], "summary": ev["summary"],
                                "note": note, "others_cpu": ev["others_cpu"]}, load)
                pending.remove(current)
                current = None
            else:
                # Timeout, or the worker died: record the current kernel, go on with a new worker.
                code = child.close(kill=True)
                if current is not None:
                    if ev == "timeout" and not timing:
                        status, note = "error", f"building the untimed inputs took over {LOAD_TIMEOUT:g} s"
                    elif ev == "timeout":
                        status, note = "timeout", f"killed during run {len(runs) + 1}" if runs else \
                            f"killed after {args.timeout:g} s"
                    else:
                        status, note = "error", f"worker {describe_exit(code)}"
                    write(current, {"status": status, "runs": runs, "note": note}, load)
                    pending.remove(current)
                elif pending:
                    for k in pending:
                        write(k, {"status": "error", "note": f"worker {describe_exit(code)}"}, load)
                    return
                break


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        return worker(args)

    t = time.perf_counter()
    edges = Edges(args.file, args.directed)
    args.root, args.sources = choose_root_and_sources(edges, args.root, args.bc_sources, args.seed)
    n = edges.n
    del edges
    print(f"[peers] {args.graph}: n={n:,}, root {args.root}, {len(args.sources)} betweenness sources "
          f"(setup {time.perf_counter() - t:.1f} s, untimed)", file=sys.stderr)

    kernels = args.kernels.split(",")
    with open(args.out, "a") as out:
        for lib in args.libraries.split(","):
            adapter = ADAPTERS[lib]
            version = library_version(lib)

            def write(kernel, fields, load=None):
                runs = fields.get("runs") or []
                ran = fields["status"] not in ("n/a", "lacks")
                note = "; ".join(x for x in (ran and adapter.NOTES.get(kernel), fields.get("note")) if x) or None
                rec = {"library": lib, "version": version, "graph": args.graph, "kernel": kernel,
                       "status": fields["status"], "threads": args.threads,
                       "load_seconds": load and load["load_seconds"],
                       "runs": runs,
                       "median": float(np.median(runs)) if runs and fields["status"] == "ok" else None,
                       "min": min(runs) if runs and fields["status"] == "ok" else None,
                       "max": max(runs) if runs and fields["status"] == "ok" else None,
                       "note": note, "summary": fields.get("summary"),
                       "parse_seconds": load and load["parse_seconds"],
                       "n": load and load["n"], "m": load and load["m"], "root": args.root,
                       "others_cpu": fields.get("others_cpu")}
                out.write(json.dumps(rec) + "\n")
                out.flush()
                timing = f"median {rec['median']:.4f} s of {len(runs)}" if rec["median"] is not None else ""
                print(f"[peers] {args.graph} {lib} {kernel}: {rec['status']} {timing} "
                      f"{json.dumps(rec['summary']) if rec['summary'] else note or ''}", file=sys.stderr)

            todo = []
            for k in kernels:
                if not applicable(k, args.directed):
                    write(k, {"status": "n/a"})
                elif version is None:
                    write(k, {"status": "error", "note": "not installable: package not installed in this venv"})
                elif k in adapter.LACKS:
                    write(k, {"status": "lacks", "note": adapter.LACKS[k]})
                else:
                    todo.append(k)
            if todo:
                run_library(args, lib, todo, write)
    return 0


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", required=True, help="graph name recorded in the output")
    ap.add_argument("--file", required=True, help="edge list 'u v w'")
    kind = ap.add_mutually_exclusive_group(required=True)
    kind.add_argument("--directed", action="store_true")
    kind.add_argument("--undirected", dest="directed", action="store_false")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--libraries", default=",".join(LIBRARIES))
    ap.add_argument("--root", type=int, help="bfs/sssp/ppr source (default: largest out-degree)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=float, default=0.0,
                    help="untimed calls of each kernel before its timed runs, for this many seconds "
                         "(at most one call when a call takes longer)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds allowed for a kernel's first run")
    ap.add_argument("--pr-tol", type=float, default=1e-4, help="PageRank: stop when the L1 change < this")
    ap.add_argument("--bc-sources", type=int, default=4, help="betweenness: number of sampled sources")
    ap.add_argument("--cdlp-iterations", type=int, default=10, help="label propagation cap, where settable")
    ap.add_argument("--seed", type=int, default=42, help="seed for betweenness sources and NetworKit")
    ap.add_argument("--out", required=True, help="JSON lines file to append to")
    ap.add_argument("--worker", choices=LIBRARIES, help=argparse.SUPPRESS)
    ap.add_argument("--worker-fd", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--sources", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    for k in args.kernels.split(","):
        if k not in KERNELS:
            ap.error(f"unknown kernel {k!r} (known: {', '.join(KERNELS)})")
    for lib in args.libraries.split(","):
        if lib not in LIBRARIES:
            ap.error(f"unknown library {lib!r} (known: {', '.join(LIBRARIES)})")
    if args.sources is not None:
        args.sources = [int(s) for s in args.sources.split(",") if s]
    return args


if __name__ == "__main__":
    sys.exit(main())
