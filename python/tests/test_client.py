"""plexus.Client against a real `plexus serve` on a loopback port.

The server binary is $PLEXUS_BIN (python/ci.sh sets it to the workspace's
release build); without it these tests skip with a message.
"""
import os
import signal
import subprocess
import time

import numpy as np
import pytest

import plexus

BIN = os.environ.get("PLEXUS_BIN", "")

pytestmark = pytest.mark.skipif(
    not (BIN and os.access(BIN, os.X_OK)),
    reason="PLEXUS_BIN (the plexus binary) is not set; python/ci.sh sets it",
)


def cli(data, *args):
    subprocess.run([BIN, "--data-dir", str(data), "--quiet", *args], check=True, stdout=subprocess.DEVNULL)


def start(data, *extra):
    """Starts `plexus serve` on a free loopback port; returns (process, url)."""
    p = subprocess.Popen(
        [BIN, "--data-dir", str(data), "serve", "--bind", "127.0.0.1:0", *extra],
        stderr=subprocess.PIPE,
        text=True,
    )
    line = p.stderr.readline()
    if "http://" not in line:
        p.kill()
        raise RuntimeError(f"plexus serve did not start: {line}{p.stderr.read()}")
    url = line.split("http://", 1)[1].split("/", 1)[0]
    return p, "http://" + url


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("served")
    cli(data, "generate", "kron", "--scale", "10", "--weighted", "--name", "k10")
    cli(data, "generate", "kron", "--scale", "8", "--name", "k8")
    cli(data, "generate", "kron", "--scale", "14", "--name", "k14")
    p, url = start(data)
    yield plexus.Client(url, client_id="pytest"), data
    stop(p)


CASES = [
    ("bfs", {"source": 0}),
    ("nhop", {"source": 0, "hops": 2}),
    ("sssp", {"source": 0}),
    ("pagerank", {}),
    ("ppr", {"source": 3}),
    ("wcc", {}),
    ("scc", {}),
    ("betweenness", {"samples": 8, "seed": 1}),
    ("triangles", {}),
    ("lcc", {}),
    ("kcore", {}),
    ("cdlp", {}),
    ("coloring", {}),
    ("mis", {}),
]


@pytest.mark.parametrize("algorithm,params", CASES, ids=[c[0] for c in CASES])
def test_every_algorithm_equals_the_local_run(server, algorithm, params):
    c, data = server
    local = plexus.open("k10", data_dir=str(data)).run(algorithm, **params)
    # shared=False runs the request exactly as `plexus run` and a local
    # Graph.run do, so every column is equal bit for bit.
    remote = c.run("k10", algorithm, shared=False, **params)
    assert isinstance(remote, plexus.Result)
    assert list(remote.ids) == list(local.ids)
    assert list(remote.columns) == list(local.columns)
    for name, col in local.columns.items():
        got = remote.columns[name]
        assert got.dtype == col.dtype, name
        assert remote.kinds[name] == local.kinds[name], name
        if name == "parent":
            # Parallel searches may pick different parents; any parent one
            # step back on a shortest path is right.
            assert_parents(remote, col)
        else:
            np.testing.assert_array_equal(got, col, err_msg=name)
    assert remote.to_dict(remote.main) == local.to_dict(local.main)


def assert_parents(r, local_parent):
    p = r.parent
    assert ((p == plexus.UNREACHED) == (local_parent == plexus.UNREACHED)).all()
    has = (p != plexus.UNREACHED) & (p != np.arange(len(p)))
    if "depth" in r.columns:
        assert (r.depth[p[has]] == r.depth[has] - 1).all()
    else:
        assert (r.distance[p[has]] <= r.distance[has]).all()


def test_shared_jobs_agree_with_local_runs(server):
    c, data = server
    g = plexus.open("k10", data_dir=str(data))
    r = c.run("k10", "pagerank")
    np.testing.assert_allclose(r.rank, g.pagerank().rank, rtol=1e-6, atol=1e-12)
    b = c.run("k10", "bfs", source=0)
    local = g.bfs(source=0)
    np.testing.assert_array_equal(b.depth, local.depth)
    # Parents may differ between runs (any parent one level up is right).
    reached = (b.depth != plexus.UNREACHED) & (b.depth > 0)
    assert (b.depth[b.parent[reached]] == b.depth[reached] - 1).all()
    w = c.run("k10", "wcc")
    np.testing.assert_array_equal(w.component, g.wcc().component)


def test_json_and_arrow_downloads_give_the_same_result(server):
    c, _ = server
    job = c.submit("k10", "sssp", source=5)
    job.wait()
    a, j = job.result(format="arrow"), job.result(format="json")
    np.testing.assert_array_equal(a.distance, j.distance)
    np.testing.assert_array_equal(a.parent, j.parent)
    assert a.to_pandas().equals(j.to_pandas())
    with pytest.raises(ValueError, match="format"):
        job.result(format="csv")


def test_string_ids_from_an_upload(server):
    c, _ = server
    c.import_graph("names", upload=b"src,dst\na,b\nb,c\nd,e\n", filename="x.csv", directed=False, ids="string")
    r = c.run("names", "wcc")
    assert r.ids == ["a", "b", "c", "d", "e"]
    assert r.to_dict() == {"a": "a", "b": "a", "c": "a", "d": "d", "e": "d"}
    b = c.run("names", "bfs", source="a")
    assert b.to_dict() == {"a": 0, "b": 1, "c": 2}
    df = b.to_pandas()
    assert df["parent"].tolist()[:3] == ["a", "a", "b"]
    assert df["depth"].isna().tolist() == [False, False, False, True, True]
    c.delete_graph("names")
    assert "names" not in [g["name"] for g in c.graphs()]


def test_upload_from_a_local_file(server, tmp_path):
    c, data = server
    f = tmp_path / "tri.el"
    f.write_text("1 2\n2 3\n3 1\n4 5\n")
    job = c.import_graph("tri", upload=str(f))
    assert job.state == "done"
    assert c.graph("tri")["vertices"] == 5
    assert c.run("tri", "wcc").to_dict() == plexus.open("tri", data_dir=str(data)).wcc().to_dict()
    with pytest.raises(plexus.ServerError) as e:
        c.import_graph("tri", upload=str(f))
    assert e.value.status == 409
    with pytest.raises(plexus.ServerError) as e:
        c.import_graph("elsewhere", path="/etc/hostname")
    assert e.value.status == 403
    with pytest.raises(ValueError, match="exactly one"):
        c.import_graph("x")
    with pytest.raises(FileNotFoundError):
        c.import_graph("x", upload=str(tmp_path / "missing.el"))


def test_bad_requests_raise_python_exceptions(server):
    c, _ = server
    with pytest.raises(ValueError, match="damping"):
        c.submit("k10", "pagerank", damping=-1)
    with pytest.raises(plexus.BadRequest):
        c.submit("k10", "no-such-algorithm")
    with pytest.raises(LookupError, match="nope"):
        c.submit("nope", "pagerank")
    with pytest.raises(plexus.NotFound):
        c.job(10**9)
    with pytest.raises(plexus.JobFailed, match="weights"):
        c.run("k8", "sssp", source=0)
    with pytest.raises(ValueError, match="http"):
        plexus.Client("localhost:1")
    with pytest.raises(ConnectionError):
        plexus.Client("http://127.0.0.1:9", timeout=5).health()


def test_progress_wait_and_cancel(server):
    c, _ = server
    seen = []
    r = c.run("k14", "pagerank", progress=lambda s, a, t: seen.append((s, a, t)))
    assert r.summary["iterations"] >= 1
    assert all(s >= 0 and a >= 0 and t >= 0 for s, a, t in seen)
    # A long job, cancelled at once.
    job = c.submit("k14", "betweenness", samples=4096, seed=1, shared=False)
    job.cancel()
    final = job.wait(timeout=60)
    assert final["state"] == "cancelled"
    with pytest.raises(plexus.JobFailed, match="cancelled"):
        job.result()
    with pytest.raises(TimeoutError):
        c.submit("k14", "betweenness", samples=4096, seed=2, shared=False).wait(timeout=0.2)


def test_ctrl_c_while_waiting_cancels_the_job(server):
    c, _ = server

    def interrupt(step, active, seconds):
        raise KeyboardInterrupt

    before = {j["id"] for j in c.jobs()}
    with pytest.raises(KeyboardInterrupt):
        c.run("k14", "betweenness", samples=4096, seed=3, shared=False, progress=interrupt)
    new = [j for j in c.jobs() if j["id"] not in before]
    assert len(new) == 1
    job = c.job(new[0]["id"])
    assert job.wait(timeout=60)["state"] == "cancelled"


def test_transactions_queries_and_estimates(server):
    c, _ = server
    v0 = c.graph("k8")["version"]
    had = c.query("k8", "has-edge", u=0, v=255)["exists"]
    assert had in (True, False)
    commit = c.tx("k8", ["add-edge 0 255", "# a comment"])
    assert commit["version"] == v0 + 1
    assert c.query("k8", "has-edge", u=0, v=255)["exists"]
    deg = c.query("k8", "degree", vertex=0)
    assert deg["version"] == v0 + 1 and deg["degree"] >= 1
    nb = c.query("k8", "neighbors", vertex=0, weights=False)
    assert 255 in nb["neighbors"]
    with pytest.raises(plexus.BadRequest, match="line 1"):
        c.tx("k8", "add-edge zero")
    est = c.estimate("k10", "pagerank")
    assert est["fits"] and est["state_bytes"] > 0
    assert c.health()["status"] == "ok"
    assert "plexus_jobs" in c.metrics()


def test_a_token_is_required_when_set(tmp_path):
    cli(tmp_path, "generate", "kron", "--scale", "6", "--name", "k6")
    tok = tmp_path / "token"
    tok.write_text("s3cret-token-for-tests\n")
    p, url = start(tmp_path, "--token-file", str(tok))
    try:
        with pytest.raises(plexus.ServerError) as e:
            plexus.Client(url).graphs()
        assert e.value.status == 401
        assert "s3cret" not in str(e.value)
        with pytest.raises(plexus.ServerError):
            plexus.Client(url, token="wrong").graphs()
        good = plexus.Client(url, token="s3cret-token-for-tests")
        assert [g["name"] for g in good.graphs()] == ["k6"]
        assert good.run("k6", "wcc").components >= 1
    finally:
        stop(p)
    assert p.returncode == 0


def test_an_upload_over_the_limit_is_refused_with_413(tmp_path):
    cli(tmp_path, "generate", "kron", "--scale", "6", "--name", "k6")
    p, url = start(tmp_path, "--max-upload", "4K")
    try:
        big = tmp_path / "big.el"
        big.write_text("".join(f"{i} {i + 1}\n" for i in range(200_000)))
        c = plexus.Client(url)
        for _ in range(3):
            with pytest.raises(plexus.ServerError) as e:
                c.import_graph("big", upload=str(big))
            assert e.value.status == 413
        assert "big" not in [g["name"] for g in c.graphs()]
    finally:
        stop(p)
