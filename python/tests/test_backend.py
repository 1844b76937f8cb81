"""The NetworkX backend ``plexus`` against NetworkX's own results.

Every comparison computes the expected value with plain NetworkX on the same
graph (small random graphs, directed and undirected, integer, string and
tuple nodes, int and float weights) and the actual value through NetworkX's
dispatch (``backend="plexus"`` or ``nx.config.backend_priority``).
"""
from __future__ import annotations

import math
import random
from typing import Any, Callable, Dict, List

import pytest

nx = pytest.importorskip("networkx")
np = pytest.importorskip("numpy")

from plexus import backend as pb  # noqa: E402



@pytest.fixture(autouse=True, scope="module")
def _quiet_cache_note() -> Any:
    """NetworkX warns on each use of a cached conversion: using the cache is
    what these tests check, so the note is switched off here."""
    had = "cache" in nx.config.warnings_to_ignore
    nx.config.warnings_to_ignore.add("cache")
    yield
    if not had:
        nx.config.warnings_to_ignore.discard("cache")


# ------------------------------------------------------------------ graphs

def _relabel(G: Any, kind: str) -> Any:
    if kind == "int":
        return G
    if kind == "str":
        return nx.relabel_nodes(G, {v: f"v{v}" for v in G})
    return nx.relabel_nodes(G, {v: (v % 3, f"n{v}") for v in G})


def _graph(seed: int, directed: bool, kind: str = "int", n: int = 24, p: float = 0.15,
           weights: str = "none", isolated: int = 2) -> Any:
    G = nx.gnp_random_graph(n, p, seed=seed, directed=directed)
    rng = random.Random(seed)
    # Shuffle the node order so positions differ from labels.
    H = nx.DiGraph() if directed else nx.Graph()
    order = list(G)
    rng.shuffle(order)
    H.add_nodes_from(order)
    edges = list(G.edges())
    rng.shuffle(edges)
    H.add_edges_from(edges)
    H.add_nodes_from(range(n, n + isolated))
    if weights == "int":
        for u, v in H.edges():
            H[u][v]["weight"] = rng.randint(1, 9)
    elif weights == "float":
        for u, v in H.edges():
            H[u][v]["weight"] = rng.uniform(0.1, 5.0)
    return _relabel(H, kind)


UNDIRECTED = [(s, k) for s in (1, 2, 3) for k in ("int", "str", "tuple")]
ANY = [(s, d, k) for s in (1, 2) for d in (False, True) for k in ("int", "str", "tuple")]


def _close(a: Dict[Any, float], b: Dict[Any, float], tol: float = 1e-9) -> None:
    assert set(a) == set(b)
    for key in a:
        assert b[key] == pytest.approx(a[key], abs=tol, rel=tol), key


def _plain_types(x: Any) -> None:
    """No numpy scalar anywhere (NetworkX returns Python numbers)."""
    if isinstance(x, dict):
        for k, v in x.items():
            _plain_types(k)
            _plain_types(v)
    elif isinstance(x, (list, tuple, set, frozenset)):
        for v in x:
            _plain_types(v)
    else:
        assert not isinstance(x, np.generic), type(x)


# ----------------------------------------------------------------- pagerank

def _pagerank_close(G: Any, want: Dict[Any, float], got: Dict[Any, float], alpha: float = 0.85, tol: float = 1e-6) -> None:
    """NetworkX's iterates to 1e-12 when the graph has no isolated node;
    else (the engine solves isolated nodes exactly each iteration, so its
    iterates differ) both stop within the same L1 bound of the fixed point:
    change < N*tol, so distance <= N*tol*alpha/(1-alpha) each."""
    assert set(want) == set(got)
    if not any(d == 0 for _, d in G.degree()):
        _close(want, got, 1e-12)
    else:
        bound = 2 * len(G) * tol * alpha / (1 - alpha)
        assert sum(abs(want[v] - got[v]) for v in G) <= bound


@pytest.mark.parametrize("seed,directed,kind", ANY)
@pytest.mark.parametrize("isolated", [0, 2])
def test_pagerank(seed: int, directed: bool, kind: str, isolated: int) -> None:
    G = _graph(seed, directed, kind, isolated=isolated)
    want = nx.pagerank(G)
    got = nx.pagerank(G, backend="plexus")
    _pagerank_close(G, want, got)
    assert list(got) == list(G)
    _plain_types(got)


@pytest.mark.parametrize("directed", [False, True])
def test_pagerank_alpha_tol_selfloops(directed: bool) -> None:
    G = _graph(4, directed, "str")
    G.add_edge("v0", "v0")
    G.add_edge("v3", "v3")
    for alpha, tol in [(0.5, 1e-8), (0.9, 1e-4), (0.0, 1e-6)]:
        want = nx.pagerank(G, alpha=alpha, tol=tol)
        _pagerank_close(G, want, nx.pagerank(G, alpha=alpha, tol=tol, backend="plexus"), alpha, tol)


@pytest.mark.parametrize("directed", [False, True])
def test_personalized_pagerank(directed: bool) -> None:
    G = _graph(5, directed, "tuple")
    source = list(G)[3]
    pers = {v: 0 for v in G}
    pers[source] = 7
    want = nx.pagerank(G, personalization=pers)
    got = nx.pagerank(G, personalization=pers, backend="plexus")
    _pagerank_close(G, want, got)
    assert got[source] == max(got.values())


def test_pagerank_uniform_weights_per_node_maps() -> None:
    """Weights equal among each node's out-edges give the unweighted chain."""
    G = _graph(6, True, "int")
    for u in G:
        for v in G[u]:
            G[u][v]["weight"] = 1 + (hash(u) % 5)
    assert pb.can_run("pagerank", (G,), {}) is True
    _pagerank_close(G, nx.pagerank(G), nx.pagerank(G, backend="plexus"))


def test_pagerank_nonuniform_weights_refused_and_fallback() -> None:
    G = _graph(6, True, "int", weights="float")
    with pytest.raises(NotImplementedError) as e:
        nx.pagerank(G, backend="plexus")
    assert "weights" in str(e.value.__cause__)
    # Automatic dispatch falls back to NetworkX and gives its (weighted) result.
    with _prefer_plexus():
        got = nx.pagerank(G)
    assert got == nx.pagerank(G, backend="networkx")


def test_pagerank_not_converging_raises() -> None:
    G = _graph(7, True, "int")
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(G, max_iter=2, backend="plexus")
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(G, max_iter=2)


@pytest.mark.parametrize(
    "kwargs,reason",
    [
        ({"nstart": {0: 1.0}}, "nstart"),
        ({"dangling": {0: 1.0}}, "dangling"),
        ({"personalization": {0: 1, 1: 1}}, "more than one source"),
        ({"max_iter": 500}, "max_iter"),
        ({"alpha": 1.0}, "alpha"),
        ({"tol": 0}, "tol"),
    ],
)
def test_pagerank_can_run_refusals(kwargs: Dict[str, Any], reason: str) -> None:
    G = nx.path_graph(4)
    why = pb.can_run("pagerank", (G,), kwargs)
    assert isinstance(why, str) and reason in why


# ---------------------------------------------------------------- traversal

@pytest.mark.parametrize("seed,directed,kind", ANY)
def test_single_source_shortest_path_length(seed: int, directed: bool, kind: str) -> None:
    G = _graph(seed, directed, kind, p=0.1)
    for source in list(G)[:4]:
        for cutoff in (None, 0, 1, 2, 2.5, -1, math.inf, -math.inf):
            want = nx.single_source_shortest_path_length(G, source, cutoff=cutoff)
            got = nx.single_source_shortest_path_length(G, source, cutoff=cutoff, backend="plexus")
            assert got == want
            assert list(got.values()) == sorted(got.values())  # layer by layer
            _plain_types(got)


def test_shortest_path_length_unknown_source() -> None:
    G = nx.path_graph(3)
    with pytest.raises(nx.NodeNotFound, match="Source 9 is not in G"):
        nx.single_source_shortest_path_length(G, 9, backend="plexus")


@pytest.mark.parametrize("seed,directed,kind", ANY)
def test_bfs_edges_tree_layers(seed: int, directed: bool, kind: str) -> None:
    G = _graph(seed, directed, kind, p=0.12)
    nodes = list(G)
    for source in nodes[:3]:
        for limit in (None, 0, 1, 1.5, 2, math.inf):
            want = list(nx.bfs_edges(G, source, depth_limit=limit))
            got = list(nx.bfs_edges(G, source, depth_limit=limit, backend="plexus"))
            assert got == want
            T = nx.bfs_tree(G, source, depth_limit=limit, backend="plexus")
            assert nx.utils.edges_equal(T.edges(), nx.bfs_tree(G, source, depth_limit=limit).edges())
            assert set(T) == set(nx.bfs_tree(G, source, depth_limit=limit))
    for sources in ([nodes[0]], nodes[:3], nodes[5]):
        assert list(nx.bfs_layers(G, sources, backend="plexus")) == list(nx.bfs_layers(G, sources))


def test_bfs_unknown_source() -> None:
    G = nx.DiGraph([(1, 2)])
    with pytest.raises(nx.NetworkXError, match="not in the digraph"):
        list(nx.bfs_edges(G, 7, backend="plexus"))
    with pytest.raises(nx.NetworkXError, match="is not in the graph"):
        list(nx.bfs_layers(G, [1, 7], backend="plexus"))


def test_bfs_reverse_and_sort_refused() -> None:
    G = nx.DiGraph([(1, 2)])
    assert "reverse" in str(pb.can_run("bfs_edges", (G, 1), {"reverse": True}))
    assert "sort_neighbors" in str(pb.can_run("bfs_edges", (G, 1), {"sort_neighbors": sorted}))


@pytest.mark.parametrize("seed,directed,kind", ANY)
@pytest.mark.parametrize("weights", ["int", "float", "none"])
def test_single_source_dijkstra_path_length(seed: int, directed: bool, kind: str, weights: str) -> None:
    G = _graph(seed, directed, kind, p=0.12, weights=weights)
    for source in list(G)[:3]:
        for cutoff in (None, 4, 7.5):
            want = nx.single_source_dijkstra_path_length(G, source, cutoff=cutoff)
            got = nx.single_source_dijkstra_path_length(G, source, cutoff=cutoff, backend="plexus")
            assert got == want  # exact: the engine sums paths as Dijkstra does
            assert [type(x) for x in got.values()] == [type(want[k]) for k in got]
            assert list(got.values()) == sorted(got.values())


def test_dijkstra_negative_weights_refused() -> None:
    G = nx.Graph([(0, 1, {"weight": -1.0}), (1, 2, {"weight": 2.0})])
    with pytest.raises(NotImplementedError) as e:
        nx.single_source_dijkstra_path_length(G, 0, backend="plexus")
    assert "negative" in str(e.value.__cause__)
    assert "function" in str(pb.can_run("single_source_dijkstra_path_length", (G, 0), {"weight": lambda u, v, d: 1}))


def test_dijkstra_unknown_source() -> None:
    with pytest.raises(nx.NodeNotFound, match="Node 5 not found in graph"):
        nx.single_source_dijkstra_path_length(nx.path_graph(2), 5, backend="plexus")


# --------------------------------------------------------------- components

@pytest.mark.parametrize("seed,kind", UNDIRECTED)
def test_connected_components(seed: int, kind: str) -> None:
    G = _graph(seed, False, kind, p=0.06, isolated=3)
    want = list(nx.connected_components(G))
    got = list(nx.connected_components(G, backend="plexus"))
    assert got == want  # same sets, same order
    assert nx.number_connected_components(G, backend="plexus") == len(want)


@pytest.mark.parametrize("seed,kind", UNDIRECTED)
def test_weak_and_strong_components(seed: int, kind: str) -> None:
    G = _graph(seed, True, kind, p=0.07)
    assert list(nx.weakly_connected_components(G, backend="plexus")) == list(nx.weakly_connected_components(G))
    want = {frozenset(c) for c in nx.strongly_connected_components(G)}
    got = [frozenset(c) for c in nx.strongly_connected_components(G, backend="plexus")]
    assert len(got) == len(want) and set(got) == want


def test_components_of_empty_graph() -> None:
    assert list(nx.connected_components(nx.Graph(), backend="plexus")) == []
    assert nx.number_connected_components(nx.Graph(), backend="plexus") == 0


def test_directed_kind_refused_before_dispatch() -> None:
    with pytest.raises(nx.NetworkXNotImplemented):
        list(nx.connected_components(nx.DiGraph([(1, 2)]), backend="plexus"))


# -------------------------------------------------------------- betweenness

@pytest.mark.parametrize("seed,directed,kind", ANY)
@pytest.mark.parametrize("normalized", [True, False])
def test_betweenness_exact(seed: int, directed: bool, kind: str, normalized: bool) -> None:
    G = _graph(seed, directed, kind)
    want = nx.betweenness_centrality(G, normalized=normalized)
    got = nx.betweenness_centrality(G, normalized=normalized, backend="plexus")
    _close(want, got)
    # k == len(G) is exact in NetworkX too.
    _close(want, nx.betweenness_centrality(G, k=len(G), normalized=normalized, seed=1, backend="plexus"))


@pytest.mark.parametrize("seed,kind", UNDIRECTED)
@pytest.mark.parametrize("normalized", [True, False])
def test_betweenness_endpoints_undirected(seed: int, kind: str, normalized: bool) -> None:
    G = _graph(seed, False, kind, p=0.1)
    want = nx.betweenness_centrality(G, normalized=normalized, endpoints=True)
    _close(want, nx.betweenness_centrality(G, normalized=normalized, endpoints=True, backend="plexus"))


def test_betweenness_uniform_weight_is_unweighted() -> None:
    G = _graph(3, False, "str")
    nx.set_edge_attributes(G, 2.5, "weight")
    _close(nx.betweenness_centrality(G, weight="weight"), nx.betweenness_centrality(G, weight="weight", backend="plexus"))


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("normalized", [True, False])
def test_betweenness_sampled_k_is_networkx_sample(directed: bool, normalized: bool) -> None:
    """k < n: the same seed.sample as NetworkX, then Brandes from those sources."""
    G = _graph(2, directed, "str")
    for k in (1, 3, 10):
        want = nx.betweenness_centrality(G, k=k, seed=7, normalized=normalized)
        got = nx.betweenness_centrality(G, k=k, seed=7, normalized=normalized, backend="plexus")
        assert set(got) == set(want)
        for v in G:
            assert (math.isnan(want[v]) and math.isnan(got[v])) or got[v] == pytest.approx(want[v], abs=1e-9)
    assert "endpoints" in str(pb.can_run("betweenness_centrality", (G,), {"k": 3, "endpoints": True}))


# ------------------------------------------------------ triangles & friends

@pytest.mark.parametrize("seed,kind", UNDIRECTED)
def test_triangles_clustering(seed: int, kind: str) -> None:
    G = _graph(seed, False, kind, p=0.3)
    first = list(G)[0]
    G.add_edge(first, first)  # self-loops are ignored by both
    assert nx.triangles(G, backend="plexus") == nx.triangles(G)
    some = list(G)[2:7]
    assert nx.triangles(G, some, backend="plexus") == nx.triangles(G, some)
    assert nx.triangles(G, first, backend="plexus") == nx.triangles(G, first)
    want = nx.clustering(G)
    got = nx.clustering(G, backend="plexus")
    assert got == want  # same formula, same float operations
    assert [type(x) for x in got.values()] == [type(x) for x in want.values()]
    assert nx.clustering(G, some, backend="plexus") == nx.clustering(G, some)
    for count_zeros in (True, False):
        assert nx.average_clustering(G, count_zeros=count_zeros, backend="plexus") == nx.average_clustering(G, count_zeros=count_zeros)


def test_clustering_directed_refused() -> None:
    assert "directed" in str(pb.can_run("clustering", (nx.DiGraph([(1, 2)]),), {}))


@pytest.mark.parametrize("seed,directed,kind", ANY)
def test_core_number_and_k_core(seed: int, directed: bool, kind: str) -> None:
    G = _graph(seed, directed, kind, p=0.25)
    if directed:
        # Reciprocal arcs count twice in NetworkX's directed degree: drop them.
        G.remove_edges_from([(u, v) for u, v in list(G.edges()) if G.has_edge(v, u) and str(u) < str(v)])
    nx.set_node_attributes(G, {v: i for i, v in enumerate(G)}, "order")
    assert nx.core_number(G, backend="plexus") == nx.core_number(G)
    for k in (None, 1, 2, 3):
        want = nx.k_core(G, k)
        got = nx.k_core(G, k, backend="plexus")
        assert nx.utils.graphs_equal(got, want)
        assert dict(got.nodes(data=True)) == dict(want.nodes(data=True))


def test_core_number_self_loops_raise_like_networkx() -> None:
    G = nx.Graph([(1, 2), (2, 2)])
    with pytest.raises(nx.NetworkXNotImplemented, match="self loops"):
        nx.core_number(G, backend="plexus")


def test_core_number_reciprocal_directed_refused() -> None:
    G = nx.DiGraph([(1, 2), (2, 1), (2, 3)])
    with pytest.raises(NotImplementedError) as e:
        nx.core_number(G, backend="plexus")
    assert "reciprocal" in str(e.value.__cause__)
    with _prefer_plexus():
        assert nx.core_number(G) == nx.core_number(G, backend="networkx")


# ------------------------------------------------------ colouring and MIS

def _is_proper(G: Any, colors: Dict[Any, int]) -> bool:
    return set(colors) == set(G) and all(colors[u] != colors[v] for u, v in G.edges() if u != v)


def _is_grundy(G: Any, colors: Dict[Any, int]) -> bool:
    return all({colors[u] for u in G[v] if u != v} >= set(range(colors[v])) for v in G)


@pytest.mark.parametrize("seed,kind", UNDIRECTED)
def test_greedy_color_random_sequential(seed: int, kind: str) -> None:
    G = _graph(seed, False, kind, p=0.3)
    c = nx.greedy_color(G, "random_sequential", backend="plexus")
    assert _is_proper(G, c) and _is_grundy(G, c)
    c2 = nx.greedy_color(G, nx.coloring.strategy_random_sequential, backend="plexus")
    assert _is_proper(G, c2)
    _plain_types(c)


def test_greedy_color_other_strategies_refused() -> None:
    G = nx.path_graph(3)
    for s in ("largest_first", "smallest_last", "DSATUR"):
        assert "strategy" in str(pb.can_run("greedy_color", (G,), {"strategy": s}))
    assert "interchange" in str(pb.can_run("greedy_color", (G,), {"strategy": "random_sequential", "interchange": True}))


def _is_mis(G: Any, s: List[Any]) -> bool:
    chosen = set(s)
    if len(chosen) != len(s):
        return False
    independent = all(not (u in chosen and v in chosen) for u, v in G.edges() if u != v)
    maximal = all(v in chosen or any(u in chosen for u in G[v]) for v in G)
    return independent and maximal


@pytest.mark.parametrize("seed,kind", UNDIRECTED)
def test_maximal_independent_set(seed: int, kind: str) -> None:
    G = _graph(seed, False, kind, p=0.2)
    s = nx.maximal_independent_set(G, seed=5, backend="plexus")
    assert _is_mis(G, s)
    assert s == nx.maximal_independent_set(G, seed=5, backend="plexus")  # reproducible
    v = list(G)[4]
    with_v = nx.maximal_independent_set(G, [v], seed=1, backend="plexus")
    assert _is_mis(G, with_v) and with_v[0] == v


def test_maximal_independent_set_unfeasible() -> None:
    G = nx.path_graph(4)
    with pytest.raises(nx.NetworkXUnfeasible, match="not an independent set"):
        nx.maximal_independent_set(G, [0, 1], backend="plexus")
    with pytest.raises(nx.NetworkXUnfeasible, match="not a subset"):
        nx.maximal_independent_set(G, [9], backend="plexus")


# ------------------------------------------------- conversion and dispatch

class _prefer_plexus:
    """``nx.config.backend_priority = ["plexus"]`` with every graph large
    enough for should_run, restored afterwards."""

    def __enter__(self) -> None:
        self.algos = list(nx.config.backend_priority.algos)
        self.min_nodes = nx.config.backends.plexus.min_nodes
        nx.config.backend_priority.algos = ["plexus"]
        nx.config.backends.plexus.min_nodes = 0

    def __exit__(self, *exc: Any) -> None:
        nx.config.backend_priority.algos = self.algos
        nx.config.backends.plexus.min_nodes = self.min_nodes


def test_backend_priority_dispatch() -> None:
    G = _graph(8, False, "str")
    want_pr = nx.pagerank(G)
    before = pb.conversion_count()
    with _prefer_plexus():
        got_pr = nx.pagerank(G)
        got_cc = list(nx.connected_components(G))
    assert pb.conversion_count() == before + 1  # plexus served both, one conversion
    _pagerank_close(G, want_pr, got_pr)
    assert got_cc == list(nx.connected_components(G))


def test_should_run_prefers_large_graphs() -> None:
    small = nx.path_graph(10)
    assert isinstance(pb.should_run("connected_components", (small,), {}), str)
    big = nx.path_graph(nx.config.backends.plexus.min_nodes)
    assert pb.should_run("connected_components", (big,), {}) is True
    assert pb.should_run("pagerank", (nx.path_graph(nx.config.backends.plexus.min_nodes // 10),), {}) is True


def test_second_call_converts_nothing() -> None:
    assert nx.config.cache_converted_graphs
    G = _graph(9, True, "tuple", weights="float")
    before = pb.conversion_count()
    a = nx.pagerank(G, weight=None, backend="plexus")
    assert pb.conversion_count() == before + 1
    b = nx.pagerank(G, weight=None, backend="plexus")
    list(nx.weakly_connected_components(G, backend="plexus"))
    nx.betweenness_centrality(G, backend="plexus")
    assert pb.conversion_count() == before + 1
    assert a == b
    # A weighted call needs the weights: one more conversion, then cached too.
    source = list(G)[0]
    nx.single_source_dijkstra_path_length(G, source, backend="plexus")
    nx.single_source_dijkstra_path_length(G, source, backend="plexus")
    assert pb.conversion_count() == before + 2
    # Mutating through NetworkX clears the cache: the next call converts again.
    G.add_edge(source, (9, "new"), weight=1.0)
    got = nx.single_source_dijkstra_path_length(G, source, backend="plexus")
    assert pb.conversion_count() == before + 3
    assert got == nx.single_source_dijkstra_path_length(G, source)


def test_backend_graph_dispatches_by_itself() -> None:
    G = _graph(10, False, "str")
    pg = pb.convert_from_nx(G)
    assert pg.__networkx_backend__ == "plexus"
    assert isinstance(pg, pb.PlexusGraph) and not pg.is_directed() and not pg.is_multigraph()
    _pagerank_close(G, nx.pagerank(G), nx.pagerank(pg))  # no backend= needed
    back = pb.convert_to_nx(pg)
    assert set(back) == set(G) and nx.utils.edges_equal(back.edges(), G.edges())
    D = pb.convert_from_nx(_graph(10, True, "int"))
    assert isinstance(D, pb.PlexusDiGraph) and D.is_directed()


def test_convert_from_nx_weights_and_defaults() -> None:
    G = nx.Graph()
    G.add_edge("a", "b", weight=2)
    G.add_edge("b", "c")
    pg = pb.convert_from_nx(G, edge_attrs={"weight": 5})
    w = pg.weight_values("weight")
    assert w is not None and w.kind == "int"
    assert sorted(w.values.tolist()) == [2.0, 2.0, 5.0, 5.0]
    assert nx.single_source_dijkstra_path_length(G, "a", backend="plexus") == {"a": 0, "b": 2, "c": 3}


def test_multigraphs_are_left_to_networkx() -> None:
    M = nx.MultiGraph([(0, 1), (0, 1), (1, 2)])
    assert "multigraph" in str(pb.can_run("pagerank", (M,), {}))
    with pytest.raises(NotImplementedError):
        pb.convert_from_nx(M)
    with _prefer_plexus():
        assert nx.pagerank(M) == nx.pagerank(M, backend="networkx")


def test_get_info_and_entry_points() -> None:
    info = pb.get_info()
    for key in ("backend_name", "project", "package", "url", "short_summary", "functions", "default_config"):
        assert key in info
    assert info["backend_name"] == "plexus"
    assert set(info["functions"]) == set(pb.FUNCTIONS)
    assert "plexus" in nx.utils.backends.backends
    assert nx.utils.backends.backend_info["plexus"]["backend_name"] == "plexus"
    # Each served function's NetworkX docstring gains the backend's note.
    assert "plexus" in nx.pagerank.__doc__


def test_empty_graphs() -> None:
    E = nx.Graph()
    assert nx.pagerank(E, backend="plexus") == {}
    assert nx.triangles(E, backend="plexus") == {}
    assert nx.betweenness_centrality(E, backend="plexus") == {}
    assert nx.greedy_color(E, "random_sequential", backend="plexus") == {}


def test_docstring_examples() -> None:
    """Every example in plexus.backend's docstrings runs and gives what it shows."""
    import doctest

    result = doctest.testmod(pb, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 30
    assert result.failed == 0
