#!/usr/bin/env python3
"""Writes the golden files that Plexus's algorithms are compared against.

The oracle is NetworkX (pinned in requirements.txt) plus two small plain-Python
implementations of LDBC Graphalytics definitions that NetworkX lacks (CDLP and
the directed LCC); both are checked against the Graphalytics conformance
examples before anything is written.

Usage (from anywhere):

    python3 scripts/golden/make_golden.py            # every graph
    python3 scripts/golden/make_golden.py --only karate

On first use the script creates scripts/golden/.venv, installs the pinned
requirements into it and re-executes itself there. Output goes to
crates/engine/tests/golden/<graph>/ and is byte-identical from run to run.
See README.md beside this file for the semantics of every file.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import math
import os
import random
import subprocess
import sys
import time
import venv
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
VENV = HERE / ".venv"
REQUIREMENTS = HERE / "requirements.txt"
STAMP = VENV / "requirements.sha256"

DEFAULT_OUT = REPO / "crates" / "engine" / "tests" / "golden"
DEFAULT_DATA = REPO.parent / "shared" / "data"
DEFAULT_CONFORMANCE = REPO.parent / "shared" / "conformance" / "graphalytics"

# Algorithm parameters shared by every graph (recorded again in meta.json).
PAGERANK_ALPHA = 0.85
# NetworkX stops when the L1 change of one iteration is below N * tol. With
# tol = 1e-15 the distance to the fixed point is far below the relative 1e-6
# the Rust test allows, on every graph here (see README.md).
PAGERANK_TOL = 1e-15
PAGERANK_MAX_ITER = 1000
CDLP_ITERATIONS = 10
HOPS = 2
# Significant digits for floats in the (gzip-compressed) outputs of the large
# shared-data graphs; the small graphs use Python's round-trip repr.
LARGE_DIGITS = 10


# ---------------------------------------------------------------------------
# The venv bootstrap.
# ---------------------------------------------------------------------------


def in_venv() -> bool:
    return Path(sys.prefix).resolve() == VENV.resolve()


def venv_python() -> Path:
    return VENV / "bin" / "python"


def ensure_venv_and_reexec() -> None:
    """Creates or refreshes .venv when needed, then re-executes inside it."""
    if in_venv():
        return
    want = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    have = STAMP.read_text().strip() if STAMP.exists() else ""
    if not venv_python().exists() or have != want:
        print(f"make_golden: preparing {VENV} ...", file=sys.stderr)
        venv.EnvBuilder(with_pip=True, clear=not venv_python().exists()).create(VENV)
        subprocess.run(
            [str(venv_python()), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             "-r", str(REQUIREMENTS)],
            check=True,
        )
        STAMP.write_text(want + "\n")
    os.execv(str(venv_python()), [str(venv_python()), str(Path(__file__).resolve()), *sys.argv[1:]])


# ---------------------------------------------------------------------------
# Input graphs.
# ---------------------------------------------------------------------------


class Case:
    """One golden graph: its input list and the parameters of every algorithm."""

    def __init__(self, name, directed, vertices, edges, weighted, *, source, source_rule,
                 write_input, origin, seed=None, betweenness=True):
        self.name = name
        self.directed = directed
        self.vertices = sorted(vertices)
        # The input edge list exactly as given: (src, dst, weight or None),
        # duplicates and self-loops included, in input order.
        self.edges = edges
        self.weighted = weighted
        self.source = source
        self.source_rule = source_rule
        self.write_input = write_input
        self.origin = origin
        self.seed = seed
        self.betweenness = betweenness


def resolve_duplicates(edges, directed):
    """Plexus's `--duplicates min`: one edge per pair, with the smallest weight.

    For undirected graphs (u, v) and (v, u) are the same pair; the pair is
    stored with its smaller endpoint first. Self-loops are kept. The result
    keeps the order of first occurrence.
    """
    best = {}
    for u, v, w in edges:
        key = (u, v) if directed or u <= v else (v, u)
        if key not in best:
            best[key] = w
        elif w is not None and w < best[key]:
            best[key] = w
    return [(u, v, w) for (u, v), w in best.items()]


def karate_case():
    import networkx as nx

    g = nx.karate_club_graph()
    edges = [(u, v, int(d["weight"])) for u, v, d in g.edges(data=True)]
    return Case("karate", False, list(g.nodes()), edges, True, source=0,
                source_rule="vertex 0 (the instructor)", write_input=True,
                origin="networkx.karate_club_graph(), edge attribute 'weight' kept as the weight")


def _pick_ids(rng, n):
    """n distinct, non-contiguous external ids (so the id mapping is exercised)."""
    return sorted(rng.sample(range(1000), n))


def _max_reach_source(vertices, edges, directed):
    """The vertex reaching the most vertices along out-edges; smallest id on ties."""
    adj = {v: set() for v in vertices}
    for u, v, _ in edges:
        adj[u].add(v)
        if not directed:
            adj[v].add(u)
    best, best_reach = None, -1
    for s in vertices:
        seen, stack = {s}, [s]
        while stack:
            x = stack.pop()
            for y in adj[x]:
                if y not in seen:
                    seen.add(y)
                    stack.append(y)
        if len(seen) > best_reach:
            best, best_reach = s, len(seen)
    return best


def _add_noise(rng, edges, block_of, directed, *, loops, dups, two_cycles):
    """Adds self-loops, duplicates (with other weights) and 2-cycles, then shuffles."""
    base = list(edges)
    out = list(edges)
    members = sorted(block_of)
    for v in rng.sample(members, loops):
        out.append((v, v, rng.randint(1, 20)))
    for u, v, _ in rng.sample(base, dups):
        # Half of the duplicates are given reversed: for an undirected graph
        # that is still the same edge.
        if not directed and rng.random() < 0.5:
            u, v = v, u
        out.append((u, v, rng.randint(1, 20)))
    if directed:
        arcs = {(u, v) for u, v, _ in out}
        candidates = [(u, v) for u, v, _ in base if u != v and (v, u) not in arcs]
        for u, v in rng.sample(candidates, two_cycles):
            out.append((v, u, rng.randint(1, 20)))
    rng.shuffle(out)
    return out


def gen_undirected_case():
    seed = 20240611
    rng = random.Random(seed)
    ids = _pick_ids(rng, 60)
    rng.shuffle(ids)
    sizes = [24, 14, 9, 5, 2]  # five components with edges, then isolated vertices
    blocks, at = [], 0
    for s in sizes:
        blocks.append(ids[at:at + s])
        at += s
    isolated = ids[at:]
    edges, block_of = [], {}
    for b, members in enumerate(blocks):
        for v in members:
            block_of[v] = b
        # A random spanning tree keeps each block one component.
        for i in range(1, len(members)):
            edges.append((members[i], members[rng.randrange(i)], rng.randint(1, 20)))
    extra = 138 - len(edges)
    big = [m for m in blocks if len(m) >= 5]
    weights_by_size = [len(m) * len(m) for m in big]
    for _ in range(extra):
        members = rng.choices(big, weights=weights_by_size)[0]
        u, v = rng.sample(members, 2)
        edges.append((u, v, rng.randint(1, 20)))
    edges = _add_noise(rng, edges, block_of, False, loops=4, dups=8, two_cycles=0)
    vertices = ids
    source = _max_reach_source(vertices, edges, False)
    del isolated
    return Case("gen-undirected", False, vertices, edges, True, source=source,
                source_rule="the vertex reaching the most vertices, smallest id on ties",
                write_input=True, seed=seed,
                origin=f"make_golden.py gen_undirected_case(), random.Random({seed})")


def gen_directed_case():
    seed = 20240612
    rng = random.Random(seed)
    ids = _pick_ids(rng, 60)
    rng.shuffle(ids)
    sizes = [26, 16, 10, 3]  # four weak components with arcs, then isolated vertices
    blocks, at = [], 0
    for s in sizes:
        blocks.append(ids[at:at + s])
        at += s
    edges, block_of = [], {}
    for b, members in enumerate(blocks):
        for v in members:
            block_of[v] = b
        pos = {v: i for i, v in enumerate(members)}
        # Vertices are grouped in clusters of 5 by position; arcs between
        # clusters only go forward, so each block is a DAG of strongly
        # connected pieces. A spanning tree (oriented the same way) keeps the
        # block weakly connected.
        for i in range(1, len(members)):
            u, v = members[i], members[rng.randrange(i)]
            if pos[u] // 5 == pos[v] // 5 and rng.random() < 0.5:
                u, v = v, u
            elif pos[u] // 5 > pos[v] // 5:
                u, v = v, u
            edges.append((u, v, rng.randint(1, 20)))
        budget = {26: 70, 16: 40, 10: 20, 3: 2}[len(members)]
        for _ in range(budget):
            u, v = rng.sample(members, 2)
            if pos[u] // 5 != pos[v] // 5 and pos[u] > pos[v]:
                u, v = v, u
            edges.append((u, v, rng.randint(1, 20)))
    edges = _add_noise(rng, edges, block_of, True, loops=5, dups=8, two_cycles=6)
    source = _max_reach_source(ids, edges, True)
    return Case("gen-directed", True, ids, edges, True, source=source,
                source_rule="the vertex reaching the most vertices, smallest id on ties",
                write_input=True, seed=seed,
                origin=f"make_golden.py gen_directed_case(), random.Random({seed})")


def shared_case(name, directed, data_dir):
    path = data_dir / f"{name}.el.gz"
    if not path.exists():
        print(f"make_golden: {path} is absent; skipping {name}", file=sys.stderr)
        return None
    edges = []
    with gzip.open(path, "rt") as f:
        for line in f:
            parts = line.split()
            if parts:
                edges.append((int(parts[0]), int(parts[1]), None))
    vertices = sorted({u for u, _, _ in edges} | {v for _, v, _ in edges})
    deg = Counter()
    for u, v, _ in resolve_duplicates(edges, directed):
        if u != v:
            deg[u] += 1
            if not directed:
                deg[v] += 1
    source = min(vertices, key=lambda v: (-deg[v], v))
    return Case(name, directed, vertices, edges, False, source=source,
                source_rule="the vertex of largest out-degree (self-loops excluded), smallest id on ties",
                write_input=False, betweenness=False,
                origin=f"../shared/data/{name}.el.gz (not copied into the repository)")


# ---------------------------------------------------------------------------
# Independent plain-Python oracles for Graphalytics definitions.
# ---------------------------------------------------------------------------


def cdlp(vertices, arcs, directed, iterations):
    """LDBC Graphalytics CDLP (synchronous label propagation).

    L0(v) = v. In each iteration every vertex takes the most frequent label
    among its in- and out-neighbours (directed: a neighbour linked both ways
    counts twice; a self-loop v->v counts v's own label twice, once as out-
    and once as in-neighbour; undirected: every neighbour once, a self-loop
    once), ties broken by the smallest label; a vertex without neighbours
    keeps its label. `arcs` must already have duplicates resolved.
    """
    nbrs = {v: [] for v in vertices}
    for u, v, _ in arcs:
        nbrs[u].append(v)
        if directed or u != v:
            nbrs[v].append(u)
    label = {v: v for v in vertices}
    for _ in range(iterations):
        new = {}
        for v in vertices:
            if not nbrs[v]:
                new[v] = label[v]
                continue
            counts = Counter(label[u] for u in nbrs[v])
            top = max(counts.values())
            new[v] = min(lab for lab, c in counts.items() if c == top)
        label = new
    return label


def graphalytics_lcc(vertices, arcs, directed):
    """LDBC Graphalytics LCC: N(v) = (in ∪ out) \\ {v}; the number of arcs
    (u, w), u != w, with u, w in N(v), divided by |N(v)|(|N(v)| - 1); 0 when
    |N(v)| <= 1. For undirected graphs each edge is an arc both ways, which
    makes this the usual clustering coefficient. Duplicates must already be
    resolved; self-loops are ignored.
    """
    out = {v: set() for v in vertices}
    for u, v, _ in arcs:
        if u == v:
            continue
        out[u].add(v)
        if not directed:
            out[v].add(u)
    nb = {v: set(out[v]) for v in vertices}
    if directed:
        for u in vertices:
            for v in out[u]:
                nb[v].add(u)
    res = {}
    for v in vertices:
        n = nb[v]
        k = len(n)
        if k <= 1:
            res[v] = 0.0
            continue
        count = 0
        for u in n:
            ou = out[u]
            count += len(ou & n) if len(ou) < k else sum(1 for w in n if w in ou)
        res[v] = count / (k * (k - 1))
    return res


def read_graphalytics(conf_dir, name):
    props = {}
    for line in (conf_dir / f"{name}.properties").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            props[k.strip()] = v.strip()
    prefix = f"graph.{name}."
    directed = props[prefix + "directed"] == "true"
    vertices = [int(x) for x in (conf_dir / f"{name}.v").read_text().split()]
    arcs = []
    for line in (conf_dir / f"{name}.e").read_text().splitlines():
        p = line.split()
        if p:
            arcs.append((int(p[0]), int(p[1]), float(p[2])))

    def expected(algo):
        return {int(a): b for a, b in (l.split() for l in (conf_dir / f"{name}-{algo}").read_text().splitlines() if l.strip())}

    return props, prefix, directed, vertices, arcs, expected


def validate_oracles(conf_dir):
    """Checks the plain-Python CDLP and LCC against the Graphalytics examples."""
    import networkx as nx

    if not conf_dir.exists():
        sys.exit(f"make_golden: {conf_dir} is absent: the CDLP/LCC oracles cannot be validated")
    for name in ("example-directed", "example-undirected"):
        props, prefix, directed, vertices, arcs, expected = read_graphalytics(conf_dir, name)
        iters = int(props[prefix + "cdlp.max-iterations"])
        got = cdlp(vertices, resolve_duplicates(arcs, directed), directed, iters)
        want = {v: int(x) for v, x in expected("CDLP").items()}
        assert got == want, f"CDLP oracle disagrees with Graphalytics on {name}: {got} != {want}"
        lcc = graphalytics_lcc(vertices, resolve_duplicates(arcs, directed), directed)
        for v, x in expected("LCC").items():
            assert math.isclose(lcc[v], float(x), rel_tol=1e-12, abs_tol=1e-15), \
                f"LCC oracle disagrees with Graphalytics on {name} at vertex {v}: {lcc[v]} != {x}"
        if not directed:
            g = nx.Graph()
            g.add_nodes_from(vertices)
            g.add_edges_from((u, v) for u, v, _ in arcs)
            cl = nx.clustering(g)
            for v, x in expected("LCC").items():
                assert math.isclose(cl[v], float(x), rel_tol=1e-12, abs_tol=1e-15), \
                    f"nx.clustering disagrees with Graphalytics on {name} at vertex {v}"
    print("make_golden: CDLP and LCC oracles agree with the Graphalytics examples", file=sys.stderr)


# ---------------------------------------------------------------------------
# Writing.
# ---------------------------------------------------------------------------


def fmt_value(x, large):
    if isinstance(x, bool):
        return str(int(x))
    if isinstance(x, int):
        return str(x)
    x = float(x)
    if math.isinf(x):
        return "inf"
    if large:
        return f"{x:.{LARGE_DIGITS}g}"
    return repr(x)


def write_text(path: Path, text: str, compress: bool) -> None:
    data = text.encode()
    if compress:
        buf = io.BytesIO()
        # mtime=0 and no file name keep the bytes identical from run to run.
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as z:
            z.write(data)
        data = buf.getvalue()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def write_values(case, out_dir, algo, values, written):
    """`vertex value` per line for every vertex, sorted by vertex id."""
    large = not case.write_input
    lines = [f"{v} {fmt_value(values.get(v, math.inf), large)}\n" for v in case.vertices]
    fname = f"{algo}.txt.gz" if large else f"{algo}.txt"
    write_text(out_dir / fname, "".join(lines), compress=large)
    written[algo] = fname


def component_labels(components):
    label = {}
    for comp in components:
        rep = min(comp)
        for v in comp:
            label[v] = rep
    return label


OUTPUT_NOTES = {
    "bfs": "hop count from the source along out-edges (undirected: along edges); inf when unreachable",
    "sssp": "Dijkstra distance from the source with the resolved (minimum) edge weights; inf when unreachable",
    "pagerank": "networkx.pagerank(alpha, tol, max_iter, weight=None): unweighted; dangling mass spread uniformly; sums to 1",
    "ppr": "networkx.pagerank(personalization={source: 1}, weight=None): teleport to the source only; dangling mass also goes to the source (NetworkX's default dangling = personalization)",
    "wcc": "weakly connected components (undirected: connected components); label = smallest external id in the component",
    "scc": "strongly connected components (directed graphs only); label = smallest external id in the component",
    "betweenness": "networkx.betweenness_centrality(normalized=True, weight=None), exact: the sum over ordered pairs (s, t), s != v != t, of sigma_st(v)/sigma_st, divided by (n-1)(n-2) with n = all vertices (isolated ones included); same formula for directed and undirected graphs",
    "triangles": "networkx.triangles on the undirected simple view (direction ignored, duplicates merged, self-loops removed)",
    "lcc": "networkx.clustering on the undirected simple view (direction ignored, duplicates merged, self-loops removed)",
    "lcc-graphalytics": "directed graphs only: the Graphalytics directed LCC (plain Python, validated against example-directed-LCC): N(v) = (in ∪ out) \\ {v}; arcs (u, w), u != w, inside N(v) divided by |N(v)|(|N(v)|-1); 0 when |N(v)| <= 1; self-loops ignored. For undirected graphs it equals lcc",
    "kcore": "networkx.core_number on the undirected simple view (direction ignored, duplicates merged, self-loops removed)",
    "cdlp": "Graphalytics CDLP in plain Python (validated against example-*-CDLP) on the resolved edge list with self-loops kept: L0(v) = external id; in+out neighbours, a directed neighbour linked both ways counts twice, a directed self-loop counts the vertex's own label twice, an undirected self-loop once; ties -> smallest label; no neighbours -> label kept",
    "nhop": "hop count from the source along out-edges when at most `hops`, inf otherwise (networkx.single_source_shortest_path_length with cutoff)",
}


def run_case(case, out_root):
    import networkx as nx

    t0 = time.monotonic()
    out_dir = out_root / case.name
    out_dir.mkdir(parents=True, exist_ok=True)
    resolved = resolve_duplicates(case.edges, case.directed)

    g = nx.DiGraph() if case.directed else nx.Graph()
    g.add_nodes_from(case.vertices)
    for u, v, w in resolved:
        if case.weighted:
            g.add_edge(u, v, weight=float(w))
        else:
            g.add_edge(u, v)
    assert g.number_of_edges() == len(resolved)

    simple = nx.Graph()
    simple.add_nodes_from(case.vertices)
    simple.add_edges_from((u, v) for u, v, _ in resolved if u != v)

    written = {}
    s = case.source
    write_values(case, out_dir, "bfs", nx.single_source_shortest_path_length(g, s), written)
    if case.weighted:
        dist = nx.single_source_dijkstra_path_length(g, s, weight="weight")
        write_values(case, out_dir, "sssp", {v: float(d) for v, d in dist.items()}, written)
    pr = nx.pagerank(g, alpha=PAGERANK_ALPHA, tol=PAGERANK_TOL, max_iter=PAGERANK_MAX_ITER, weight=None)
    write_values(case, out_dir, "pagerank", pr, written)
    ppr = nx.pagerank(g, alpha=PAGERANK_ALPHA, tol=PAGERANK_TOL, max_iter=PAGERANK_MAX_ITER, weight=None,
                      personalization={s: 1.0})
    write_values(case, out_dir, "ppr", ppr, written)
    if case.directed:
        write_values(case, out_dir, "wcc", component_labels(nx.weakly_connected_components(g)), written)
        write_values(case, out_dir, "scc", component_labels(nx.strongly_connected_components(g)), written)
    else:
        write_values(case, out_dir, "wcc", component_labels(nx.connected_components(g)), written)
    if case.betweenness:
        write_values(case, out_dir, "betweenness", nx.betweenness_centrality(g, normalized=True, weight=None), written)
    write_values(case, out_dir, "triangles", nx.triangles(simple), written)
    write_values(case, out_dir, "lcc", nx.clustering(simple), written)
    if case.directed:
        write_values(case, out_dir, "lcc-graphalytics", graphalytics_lcc(case.vertices, resolved, True), written)
    write_values(case, out_dir, "kcore", nx.core_number(simple), written)
    write_values(case, out_dir, "cdlp", cdlp(case.vertices, resolved, case.directed, CDLP_ITERATIONS), written)
    write_values(case, out_dir, "nhop", nx.single_source_shortest_path_length(g, s, cutoff=HOPS), written)

    if case.write_input:
        write_text(out_dir / "vertices.txt", "".join(f"{v}\n" for v in case.vertices), False)
        write_text(out_dir / "edges.txt", "".join(f"{u} {v} {w}\n" for u, v, w in case.edges), False)

    loops = sum(1 for u, v, _ in case.edges if u == v)
    meta = {
        "graph": case.name,
        "origin": case.origin,
        "directed": case.directed,
        "weighted": case.weighted,
        "seed": case.seed,
        "input": ({"vertices": "vertices.txt", "edges": "edges.txt",
                   "edges_format": "src dst weight, one input edge per line, in input order, duplicates and self-loops included"}
                  if case.write_input else
                  {"shared_data": f"../shared/data/{case.name}.el.gz",
                   "edges_format": "src dst, unweighted; the vertex set is every id that appears in an edge"}),
        "num_vertices": len(case.vertices),
        "num_input_edges": len(case.edges),
        "num_input_self_loops": loops,
        "num_edges_after_duplicates_resolved": len(resolved),
        "num_self_loops_after_duplicates_resolved": sum(1 for u, v, _ in resolved if u == v),
        "num_edges_simple_undirected_view": simple.number_of_edges(),
        "plexus_import": {
            "directed": case.directed,
            "duplicates": "min",
            "self_loops": "keep",
            "ids": "external ids; internal id = rank in ascending external-id order",
        },
        "duplicates_handling": ("before building the NetworkX graph, edges between the same "
                                + ("ordered pair (u, v)" if case.directed else "unordered pair {u, v} (either orientation)")
                                + " are merged into one with the smallest weight (Plexus --duplicates min); "
                                "self-loops are kept in the NetworkX graph (bfs, sssp, pagerank, ppr, wcc, scc, "
                                "betweenness, nhop, cdlp) and removed only in the undirected simple view (triangles, lcc, kcore)"),
        "source": s,
        "source_rule": case.source_rule,
        "hops": HOPS,
        "pagerank": {"alpha": PAGERANK_ALPHA, "tol": PAGERANK_TOL, "max_iter": PAGERANK_MAX_ITER,
                     "convergence": "L1 change of one iteration < num_vertices * tol", "weight": None,
                     "initial": "uniform 1/n", "dangling": "uniform over all vertices"},
        "ppr": {"alpha": PAGERANK_ALPHA, "tol": PAGERANK_TOL, "max_iter": PAGERANK_MAX_ITER,
                "personalization": {str(s): 1.0}, "dangling": "to the personalization vector (the source)",
                "initial": "uniform 1/n"},
        "cdlp": {"iterations": CDLP_ITERATIONS},
        "betweenness": ({"normalized": True, "scale": "1 / ((n-1)(n-2)) applied to the ordered-pair sum", "weight": None}
                        if case.betweenness else "skipped: exact betweenness in NetworkX is too slow on this graph"),
        "value_format": ("gzip text, floats with %d significant digits" % LARGE_DIGITS if not case.write_input
                         else "plain text, floats as Python repr (round-trip exact)"),
        "outputs": {algo: {"file": fname, "meaning": OUTPUT_NOTES[algo]} for algo, fname in written.items()},
        "networkx": nx.__version__,
    }
    write_text(out_dir / "meta.json", json.dumps(meta, indent=2, sort_keys=True) + "\n", False)
    print(f"make_golden: {case.name}: {len(case.vertices)} vertices, {len(case.edges)} input edges, "
          f"{len(written)} outputs in {time.monotonic() - t0:.1f} s", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output root (default: %(default)s)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared data directory (default: %(default)s)")
    ap.add_argument("--conformance", type=Path, default=DEFAULT_CONFORMANCE,
                    help="Graphalytics conformance examples (default: %(default)s)")
    ap.add_argument("--only", action="append", help="only this graph (repeatable)")
    args = ap.parse_args()

    ensure_venv_and_reexec()
    t0 = time.monotonic()
    validate_oracles(args.conformance)
    makers = {
        "karate": karate_case,
        "gen-undirected": gen_undirected_case,
        "gen-directed": gen_directed_case,
        "wiki-Vote": lambda: shared_case("wiki-Vote", True, args.data),
        "email-Enron": lambda: shared_case("email-Enron", False, args.data),
    }
    for name, make in makers.items():
        if args.only and name not in args.only:
            continue
        case = make()
        if case is not None:
            run_case(case, args.out)
    print(f"make_golden: done in {time.monotonic() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
