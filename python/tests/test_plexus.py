"""The plexus package: graphs in from every input type, every algorithm
against NetworkX (and igraph where installed) on small graphs, results out
in every form, bad input as clear Python exceptions, cancellation,
progress and batches."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time

import networkx as nx
import numpy as np
import pytest

import plexus

# ------------------------------------------------------------------ helpers


def random_edges(n: int, m: int, seed: int, weights: bool = False):
    rng = random.Random(seed)
    src = [rng.randrange(n) for _ in range(m)]
    dst = [rng.randrange(n) for _ in range(m)]
    w = [float(rng.randint(1, 9)) for _ in range(m)] if weights else None
    return src, dst, w


def nx_graph(src, dst, w, directed: bool, nodes=None):
    G = nx.DiGraph() if directed else nx.Graph()
    if nodes is not None:
        G.add_nodes_from(nodes)
    G.add_nodes_from(src)
    G.add_nodes_from(dst)
    if w is None:
        G.add_edges_from(zip(src, dst))
    else:
        # Duplicates: the first weight wins in plexus's default policy? Use
        # distinct pairs only (see `simple_edges`).
        G.add_weighted_edges_from(zip(src, dst, w))
    return G


def simple_edges(n: int, m: int, seed: int, directed: bool, weights: bool = False, loops=False):
    """Distinct pairs without self-loops (both graphs then agree on what an
    edge is)."""
    rng = random.Random(seed)
    seen = set()
    src, dst, w = [], [], []
    while len(src) < m:
        u, v = rng.randrange(n), rng.randrange(n)
        if u == v and not loops:
            continue
        key = (u, v) if directed else (min(u, v), max(u, v))
        if key in seen:
            continue
        seen.add(key)
        src.append(u)
        dst.append(v)
        w.append(float(rng.randint(1, 9)))
    return src, dst, (w if weights else None)


GRAPHS = [(directed, seed) for directed in (True, False) for seed in range(3)]


def both(directed: bool, seed: int, weights: bool = False, n: int = 40, m: int = 90):
    s, d, w = simple_edges(n, m, seed, directed, weights)
    nodes = list(range(n))
    g = plexus.from_edges(s, d, weights=w, directed=directed, nodes=nodes)
    G = nx_graph(s, d, w, directed, nodes)
    return g, G


def partition(labels: dict) -> set:
    groups: dict = {}
    for v, c in labels.items():
        groups.setdefault(c, set()).add(v)
    return {frozenset(s) for s in groups.values()}


# ------------------------------------------------------- golden vs NetworkX


@pytest.mark.parametrize("directed,seed", GRAPHS)
def test_pagerank_matches_networkx(directed, seed):
    g, G = both(directed, seed)
    want = nx.pagerank(G, alpha=0.85, tol=1e-10, max_iter=10_000)
    got = g.pagerank(damping=0.85, tol=1e-10, precision="double").to_dict()
    assert got.keys() == want.keys()
    for v in want:
        assert abs(got[v] - want[v]) < 1e-8, v


@pytest.mark.parametrize("directed,seed", GRAPHS)
def test_personalized_pagerank_matches_networkx(directed, seed):
    g, G = both(directed, seed)
    want = nx.pagerank(G, alpha=0.85, personalization={3: 1}, tol=1e-12, max_iter=10_000)
    got = g.ppr(source=3, tol=1e-12, method="jacobi").to_dict()
    for v in want:
        assert abs(got[v] - want[v]) < 1e-8, v


@pytest.mark.parametrize("directed,seed", GRAPHS)
def test_bfs_depths_and_parents(directed, seed):
    g, G = both(directed, seed)
    r = g.bfs(source=0)
    assert r.to_dict() == nx.single_source_shortest_path_length(G, 0)
    # Every reached vertex but the source has a parent one level up.
    for v, p in r.to_dict("parent").items():
        if v != 0:
            assert G.has_edge(p, v)
            assert r.depth[g.position(p)] + 1 == r.depth[g.position(v)]


@pytest.mark.parametrize("directed,seed", GRAPHS)
def test_nhop_matches_cutoff(directed, seed):
    g, G = both(directed, seed)
    assert g.nhop(0, hops=2).to_dict() == nx.single_source_shortest_path_length(G, 0, cutoff=2)


@pytest.mark.parametrize("directed,seed", GRAPHS)
def test_sssp_matches_dijkstra(directed, seed):
    g, G = both(directed, seed, weights=True)
    want = nx.single_source_dijkstra_path_length(G, 0)
    got = g.sssp(source=0).to_dict()
    assert got == pytest.approx(want)


@pytest.mark.parametrize("directed,seed", GRAPHS)
def test_components_match(directed, seed):
    g, G = both(directed, seed, n=60, m=50)
    wcc = nx.weakly_connected_components(G) if directed else nx.connected_components(G)
    assert partition(g.wcc().to_dict()) == {frozenset(c) for c in wcc}
    if directed:
        want = {frozenset(c) for c in nx.strongly_connected_components(G)}
        r = g.scc()
        assert partition(r.to_dict()) == want
        assert r.components == len(want)


@pytest.mark.parametrize("directed,seed", GRAPHS)
def test_betweenness_matches_networkx(directed, seed):
    g, G = both(directed, seed, n=30, m=60)
    want = nx.betweenness_centrality(G)
    got = g.betweenness().to_dict()
    for v in want:
        assert got[v] == pytest.approx(want[v], rel=1e-9, abs=1e-9), v


@pytest.mark.parametrize("seed", range(3))
def test_triangles_clustering_cores(seed):
    g, G = both(False, seed, n=30, m=100)
    assert g.triangles().to_dict() == nx.triangles(G)
    lcc = g.lcc()
    assert lcc.to_dict() == pytest.approx(nx.clustering(G))
    assert lcc.average == pytest.approx(nx.average_clustering(G))
    assert g.kcore().to_dict() == nx.core_number(G)
    k = max(nx.core_number(G).values())
    members = g.kcore(k=k)
    want = set(nx.k_core(G, k))
    got = {v for v, m in members.to_dict("in_k_core").items() if m}
    assert got == want


@pytest.mark.parametrize("seed", range(3))
def test_coloring_mis_cdlp_are_verified(seed):
    g, G = both(False, seed)
    c = g.coloring(verify=True)
    assert c.verified is True
    colors = c.to_dict()
    assert all(colors[u] != colors[v] for u, v in G.edges())
    m = g.mis(verify=True)
    chosen = {v for v, x in m.to_dict().items() if x}
    assert nx.is_dominating_set(G, chosen)
    assert all(not (u in chosen and v in chosen) for u, v in G.edges())
    assert g.cdlp(verify=True).verified is True


def test_igraph_agrees_when_installed():
    ig = pytest.importorskip("igraph")
    s, d, _ = simple_edges(50, 120, 7, directed=True)
    g = plexus.from_edges(s, d, nodes=list(range(50)))
    h = ig.Graph(n=50, edges=list(zip(s, d)), directed=True)
    want = h.pagerank(damping=0.85)
    got = g.pagerank(tol=1e-12, precision="double").rank
    assert np.allclose(got, want, atol=1e-6)
    assert g.wcc().components == len(h.connected_components(mode="weak"))
    assert g.scc().components == len(h.connected_components(mode="strong"))


# ---------------------------------------------------------------- inputs


def expected_edges(g):
    s, d, _ = g.edges()
    return sorted(zip(list(s), list(d)))


INPUTS = {
    "list": lambda s, d: (s, d),
    "int64": lambda s, d: (np.array(s, dtype=np.int64), np.array(d, dtype=np.int64)),
    "int32": lambda s, d: (np.array(s, dtype=np.int32), np.array(d, dtype=np.int32)),
    "uint64": lambda s, d: (np.array(s, dtype=np.uint64), np.array(d, dtype=np.uint64)),
    "float": lambda s, d: (np.array(s, dtype=float), np.array(d, dtype=float)),
}


@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_numeric_inputs_give_one_graph(kind):
    s, d = [5, 7, 9, 5], [7, 9, 5, 11]
    ref = plexus.from_edges(s, d)
    g = plexus.from_edges(*INPUTS[kind](s, d))
    assert expected_edges(g) == expected_edges(ref)
    assert list(g.ids) == [5, 7, 9, 11]


def test_pandas_and_arrow_inputs():
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    df = pd.DataFrame({"a": [1, 2, 3], "b": [2, 3, 1], "w": [0.5, 1.0, 2.0]})
    g1 = plexus.from_edges(df, src_col="a", dst_col="b", weights="w")
    g2 = plexus.from_edges(df["a"], df["b"], weights=df["w"])
    t = pa.table(df)
    g3 = plexus.from_edges(t, weights="w")
    g4 = plexus.from_edges(t.column("a"), pa.array([2, 3, 1]), weights=t.column("w"))
    for g in (g1, g2, g3, g4):
        assert g.weighted and g.num_edges == 3
        assert g.sssp(1).to_dict() == {1: 0.0, 2: 0.5, 3: 1.5}
    names = pd.DataFrame({"s": ["x", "y"], "t": ["y", "z"]})
    assert plexus.from_edges(names).bfs("x").to_dict() == {"x": 0, "y": 1, "z": 2}
    assert plexus.from_edges(pa.table(names)).num_vertices == 3
    assert plexus.from_edges(np.array(["x", "y"]), np.array(["y", "z"])).num_vertices == 3


def test_string_ids_and_nodes():
    g = plexus.from_edges(["b", "a"], ["a", "c"], directed=False, nodes=["z"])
    assert g.ids == ["a", "b", "c", "z"]
    assert g.position("z") == 3
    r = g.wcc()
    assert r.components == 2
    assert r.to_dict() == {"a": "a", "b": "a", "c": "a", "z": "z"}


def test_networkx_round_trip():
    G = nx.gnp_random_graph(30, 0.1, seed=3, directed=True)
    g = plexus.from_networkx(G)
    H = g.to_networkx()
    assert set(H.nodes()) == set(G.nodes())
    assert set(H.edges()) == set(G.edges())
    W = nx.Graph()
    W.add_weighted_edges_from([("a", "b", 2.0), ("b", "c", 3.0)])
    gw = plexus.from_networkx(W)
    assert gw.weighted and not gw.directed
    assert gw.sssp("a").to_dict() == {"a": 0.0, "b": 2.0, "c": 5.0}
    assert nx.utils.edges_equal(gw.to_networkx().edges(data="weight"), W.edges(data="weight"))


def test_store_save_open_read(tmp_path):
    g = plexus.from_edges([1, 2, 3], [2, 3, 1], name="tri", data_dir=str(tmp_path))
    assert g.name == "tri"
    h = plexus.open("tri", data_dir=str(tmp_path))
    assert repr(h) == "<plexus.Graph 'tri': 3 vertices, 3 edges, directed>"
    assert plexus.list_graphs(str(tmp_path)) == ["tri"]
    assert h.bfs(1).to_dict() == {1: 0, 2: 1, 3: 2}
    csv = tmp_path / "e.csv"
    csv.write_text("from,to,w\nx,y,1.5\ny,z,2\n")
    r = plexus.read(csv, src_col="from", dst_col="to", weight_col="w")
    assert r.sssp("x").to_dict() == {"x": 0.0, "y": 1.5, "z": 3.5}
    el = tmp_path / "e.el"
    el.write_text("1 2\n2 3\n")
    assert plexus.read(el, directed=False, name="el", data_dir=str(tmp_path)).num_edges == 2


# ---------------------------------------------------------------- results


def test_result_forms_and_zero_copy():
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    g = plexus.from_edges([10, 20], [20, 30], nodes=[40])
    r = g.bfs(10)
    # The arrays own no data of their own: they wrap the engine's vectors.
    assert not r.depth.flags.owndata and r.depth.base is not None
    assert r.depth.dtype == np.uint32
    assert r.depth[3] == plexus.UNREACHED
    assert r.to_numpy() is r.depth
    assert r.reached == 3 and r.max_depth == 2
    df = r.to_pandas()
    assert list(df["id"]) == [10, 20, 30, 40]
    assert df["depth"].isna().tolist() == [False, False, False, True]
    assert df["parent"].tolist()[:3] == [10, 10, 20]
    t = r.to_arrow()
    assert t.column("depth").null_count == 1
    assert t.column("parent").to_pylist() == [10, 10, 20, None]
    assert r.to_dict() == {10: 0, 20: 1, 30: 2}
    assert "depth" in dir(r) and "reached" in dir(r)
    with pytest.raises(AttributeError, match="no column or summary field 'nope'"):
        r.nope
    pr = g.pagerank()
    assert pr.rank.dtype == np.float64 and not pr.rank.flags.owndata
    assert isinstance(pr.compute_seconds, float) and pr.iterations >= 1
    assert repr(pr).startswith("<plexus.Result pagerank on 4 vertices")


def test_run_by_name_and_algorithms_list():
    names = [a["name"] for a in plexus.algorithms()]
    assert {"bfs", "pagerank", "wcc", "betweenness", "triangles"} <= set(names)
    g = plexus.from_edges([0, 1], [1, 2])
    for name in names:
        entry = next(a for a in plexus.algorithms() if a["name"] == name)
        if entry["needs_weights"]:
            continue
        r = g.run(name, verify=True)
        assert r.verified in (True, None), (name, r.verified)
    assert g.run("bfs", executor="scan").to_dict() == g.bfs().to_dict()


# ------------------------------------------------------------- bad input


def test_bad_inputs_raise_clear_exceptions(tmp_path):
    g = plexus.from_edges([0, 1], [1, 2])
    with pytest.raises(ValueError, match="src has 2 ids but dst has 1"):
        plexus.from_edges([0, 1], [1])
    with pytest.raises(ValueError, match="weight nan of edge 1 is not a finite number|weight NaN of edge 1"):
        plexus.from_edges([0, 1], [1, 2], weights=[1.0, float("nan")])
    with pytest.raises(ValueError, match="weights has 1"):
        plexus.from_edges([0, 1], [1, 2], weights=[1.0])
    with pytest.raises(ValueError, match="unknown source vertex '99'"):
        g.bfs(99)
    with pytest.raises(ValueError, match=r"damping must be in \[0, 1\), got -0.5"):
        g.pagerank(damping=-0.5)
    with pytest.raises(ValueError, match="tolerance must be a positive number"):
        g.pagerank(tol=0)
    with pytest.raises(ValueError, match="pagerank takes no source; personalised PageRank is `ppr`"):
        g.run("pagerank", source=0)
    with pytest.raises(ValueError, match="wcc takes no parameter 'bogus'"):
        g.run("wcc", bogus=1)
    with pytest.raises(ValueError, match="unknown algorithm 'dijkstra'"):
        g.run("dijkstra")
    with pytest.raises(TypeError, match="damping must be a number, got str"):
        g.pagerank(damping="high")
    with pytest.raises(ValueError, match="iterations must be an integer in"):
        g.pagerank(iterations=-1)
    with pytest.raises(ValueError, match="needs weights|weighted"):
        g.sssp(0)
    with pytest.raises(FileNotFoundError, match="nope"):
        plexus.open("nope", data_dir=str(tmp_path))
    with pytest.raises(FileNotFoundError, match="no data directory"):
        plexus.open("x", data_dir=str(tmp_path / "absent"))
    with pytest.raises(ValueError, match="no edges and no nodes"):
        plexus.from_edges([], [])
    with pytest.raises(TypeError, match="src\\[1\\] is not a string"):
        plexus.from_edges(np.array(["a", 1], dtype=object), ["b", "c"])
    with pytest.raises(ValueError, match="non-integer"):
        plexus.from_edges([0.5], [1.0])
    with pytest.raises(ValueError, match="multigraph"):
        plexus.from_networkx(nx.MultiGraph([(0, 1)]))
    with pytest.raises(ValueError, match="read\\(\\) takes no option 'bogus'"):
        plexus.read(tmp_path / "x.el", bogus=1)
    with pytest.raises(FileNotFoundError):
        plexus.read(tmp_path / "missing.el")
    bad = tmp_path / "bad.el"
    bad.write_text("1 2\n3 x\n")
    with pytest.raises(ValueError, match="bad.el:2: expected an integer vertex id"):
        plexus.read(bad)


# ------------------------------------------- cancellation, progress, GIL


def big_graph():
    rng = np.random.default_rng(1)
    n, m = 200_000, 2_000_000
    return plexus.from_edges(rng.integers(0, n, m), rng.integers(0, n, m))


def test_progress_callback_and_its_errors():
    g = big_graph()
    seen = []
    g.pagerank(iterations=200, method="jacobi", progress=lambda s, a, t: seen.append((s, a, t)))
    assert seen, "a run of several hundred ms reports progress"
    assert all(s >= 0 and t > 0 for s, _, t in seen)

    def boom(*_):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        g.pagerank(iterations=100_000, method="jacobi", progress=boom)


def test_compute_releases_the_gil():
    g = big_graph()
    ticks = [0]
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    start = time.perf_counter()
    g.pagerank(iterations=100, method="jacobi")
    took = time.perf_counter() - start
    done.set()
    t.join()
    # With the GIL held for the whole run the counter would not move.
    assert ticks[0] > 0.2 * took / 0.0015


def test_ctrl_c_cancels_with_keyboard_interrupt():
    script = textwrap.dedent(
        """
        import signal, sys, time, numpy as np, plexus
        # A child started from a background job inherits SIGINT ignored
        # (and then Python installs no handler): restore Python's own.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        rng = np.random.default_rng(1)
        n, m = 200_000, 2_000_000
        g = plexus.from_edges(rng.integers(0, n, m), rng.integers(0, n, m))
        print("ready", flush=True)
        t = time.perf_counter()
        try:
            g.pagerank(iterations=1_000_000, method="jacobi")
        except KeyboardInterrupt:
            print("interrupted after %.2f s" % (time.perf_counter() - t), flush=True)
            sys.exit(0)
        sys.exit(3)
        """
    )
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None
        assert p.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        os.kill(p.pid, signal.SIGINT)
        out, _ = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 0, out
    assert "interrupted" in out


# ------------------------------------------------------------------ batch


def test_batch_matches_single_runs(tmp_path):
    g = plexus.from_edges(*simple_edges(200, 800, 5, True, weights=True)[:2], directed=True)
    gw = plexus.from_edges(*simple_edges(200, 800, 6, True, weights=True), name="w", data_dir=str(tmp_path))
    jobs = [
        {"name": "b0", "algorithm": "bfs", "graph": g, "source": 0},
        {"name": "b1", "algorithm": "bfs", "graph": g, "source": 1},
        {"name": "pr", "algorithm": "pagerank", "graph": g, "tol": 1e-9},
        {"name": "ppr", "algorithm": "ppr", "graph": g, "source": 2},
        {"name": "cc", "algorithm": "wcc", "graph": g},
        {"name": "lp", "algorithm": "cdlp", "graph": g},
        {"name": "sp", "algorithm": "sssp", "graph": gw, "source": 0},
    ]
    for mode in ("shared", "independent", "sequential"):
        rs = plexus.batch(jobs, mode=mode)
        assert set(rs) == {j["name"] for j in jobs}
        assert rs["b0"].to_dict() == g.bfs(0).to_dict()
        assert rs["b1"].to_dict() == g.bfs(1).to_dict()
        assert np.allclose(rs["pr"].rank, g.pagerank(tol=1e-9, precision="double").rank, atol=1e-8)
        assert partition(rs["cc"].to_dict()) == partition(g.wcc().to_dict())
        assert rs["lp"].to_dict() == g.cdlp().to_dict()
        assert rs["sp"].to_dict() == pytest.approx(gw.sssp(0).to_dict())
    by_name = plexus.batch([{"algorithm": "wcc", "graph": "w", "data_dir": str(tmp_path)}])
    assert by_name["job0"].components == gw.wcc().components
    with pytest.raises(ValueError, match="job 0 \\('x'\\): .*unknown source vertex"):
        plexus.batch([{"name": "x", "algorithm": "bfs", "graph": g, "source": 10**6}])
    with pytest.raises(ValueError, match="batch runs bfs, sssp"):
        plexus.batch([{"algorithm": "triangles", "graph": g}])
    with pytest.raises(ValueError, match="distinct"):
        plexus.batch([{"algorithm": "wcc", "graph": g, "name": "a"}] * 2)


def test_progress_bar_with_tqdm(capsys):
    pytest.importorskip("tqdm")
    g = big_graph()
    r = g.pagerank(iterations=100, method="jacobi", progress=True)
    assert r.iterations == 100
    err = capsys.readouterr().err
    assert "pagerank" in err and "supersteps" in err
