#!/usr/bin/env python3
"""Load test of `plexus serve` (issue 51), from a second process on loopback.

Submits the jobs of a JOBS.toml (as `plexus mix` writes) from N client
threads, each polling GET /api/jobs/{id} until its job ends, then fetching
its result as CSV. Checks that every job was accepted once (no id lost or
duplicated), ended `done`, and that its result equals the result of the same
job run by `plexus batch --out-dir` (first value column: exactly, PageRank
ranks within 1e-9 relative). Prints throughput and the p50/p99 latency of
GET /api/jobs/{id}. Standard library only.

  bench/serve_load.py --url http://127.0.0.1:7878 --jobs JOBS.toml \
      --batch-dir DIR --clients 64 [--token-file F] [--timeout 600]
"""
import argparse, csv, http.client, io, json, resource, sys, threading, time, tomllib, urllib.parse


_local = threading.local()


def request(url, method="GET", body=None, token=None, client=None, timeout=60):
    """One request on this thread's persistent connection (HTTP/1.1
    keep-alive, as a requests.Session would keep): (status, body bytes);
    status 0 and the reason when the server cannot be reached."""
    u = urllib.parse.urlsplit(url)
    data = json.dumps(body).encode() if body is not None else None
    headers = {}
    if data is not None:
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = "Bearer " + token
    if client:
        headers["X-Plexus-Client"] = client
    path = u.path + ("?" + u.query if u.query else "")
    for attempt in range(2):
        conn = getattr(_local, "conn", None)
        reused = conn is not None and getattr(_local, "netloc", None) == u.netloc
        if not reused:
            conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
            _local.conn, _local.netloc = conn, u.netloc
        try:
            conn.request(method, path, body=data, headers=headers)
            r = conn.getresponse()
            return r.status, r.read()
        except (http.client.HTTPException, OSError) as e:
            conn.close()
            _local.conn = None
            # A kept-alive connection the server had closed: nothing was
            # processed, so the request (a POST too) is sent once more on a
            # new connection. Any other failure is reported.
            stale = isinstance(e, (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError))
            if attempt == 1 or not (reused and stale):
                return 0, str(e).encode()
    return 0, b"unreachable"


def job_bodies(path):
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    out = []
    for j in doc["job"]:
        params = {k: j[k] for k in ("source", "damping", "iterations", "tolerance", "delta", "precision") if k in j}
        out.append((j["name"], {"graph": j.get("graph", doc.get("graph")), "algorithm": j["algorithm"], "params": params}))
    return out


def first_column(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], {r[0]: r[1] for r in rows[1:]}


def same(alg, a, b):
    """Equal first columns; unreached is `inf` (plexus run, the server) or
    empty (plexus batch)."""
    if a.keys() != b.keys():
        return False
    norm = lambda d: {k: ("inf" if v in ("", "inf") else v) for k, v in d.items()}
    a, b = norm(a), norm(b)
    if alg in ("pagerank", "ppr", "sssp"):
        for k, x in a.items():
            y = b[k]
            if x == y:
                continue
            fx, fy = float(x), float(y)
            if fx == fy:
                continue
            if abs(fx - fy) > 1e-9 * max(abs(fx), abs(fy)):
                return False
        return True
    return a == b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--jobs", required=True)
    ap.add_argument("--batch-dir", required=True)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--token-file")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-results", action="store_true",
                    help="do not fetch or check results (throughput of submit + poll alone)")
    ap.add_argument("--check-every", type=int, default=1,
                    help="fetch and check the result of every K-th job only (K > 1 on big graphs)")
    ap.add_argument("--poll", type=float, default=0.02,
                    help="seconds between two status requests of a client (default 0.02)")
    ap.add_argument("--submit-all", action="store_true",
                    help="each client submits all its jobs before waiting for any (open loop; default: one at a time)")
    ap.add_argument("--keep", action="store_true",
                    help="leave finished jobs on the server (default: each client forgets its job once read)")
    a = ap.parse_args()
    token = open(a.token_file).read().split("\n")[0].strip() if a.token_file else None
    jobs = job_bodies(a.jobs)
    lock = threading.Lock()
    results, latencies, errors, ids = {}, [], [], []
    # Client-side times of the last 202, and the server's own submission and
    # end times of every job (submitted_unix, + elapsed_seconds once ended).
    marks, spans = {}, []
    deadline = time.monotonic() + a.timeout
    while request(a.url + "/api/health", timeout=2)[0] != 200:
        if time.monotonic() > deadline:
            sys.exit(f"error: no server answers at {a.url}")
        time.sleep(0.1)

    def submit(i, name):
        jname, body = jobs[i]
        while True:
            st, raw = request(a.url + "/api/jobs", "POST", body, token, name)
            if st != 429 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if st != 202:
            with lock:
                errors.append(f"{jname}: submit {st} {raw[:200]!r}")
            return None
        jid = json.loads(raw)["id"]
        with lock:
            ids.append(jid)
            marks["last_accepted"] = time.perf_counter()
        return jid

    def finish(i, jid, name):
        jname, body = jobs[i]
        v = {}
        while time.monotonic() < deadline:
            t = time.perf_counter()
            st, raw = request(f"{a.url}/api/jobs/{jid}", token=token, client=name)
            dt = time.perf_counter() - t
            with lock:
                latencies.append(dt)
            if st != 200:
                v = {"state": "lost", "error": raw[:200]}
                break
            v = json.loads(raw)
            if v.get("state") in ("done", "failed", "cancelled"):
                break
            time.sleep(a.poll)
        if "submitted_unix" in v and "elapsed_seconds" in v:
            with lock:
                spans.append((v["submitted_unix"], v["submitted_unix"] + v["elapsed_seconds"]))
        if v.get("state") != "done":
            with lock:
                errors.append(f"{jname}: job {jid} ended {v.get('state')}: {v.get('error')}")
            return
        got = None
        if not a.no_results and i % max(1, a.check_every) == 0:
            st, raw = request(f"{a.url}/api/jobs/{jid}/result?format=csv", token=token, client=name)
            got = (body["algorithm"], raw.decode())
        if not a.keep:
            # A client that has what it wants forgets the job (and its result).
            request(f"{a.url}/api/jobs/{jid}", "DELETE", token=token, client=name)
        with lock:
            results[jname] = got

    def client(c):
        name = f"client-{c}"
        mine = range(c, len(jobs), a.clients)
        if a.submit_all:
            # Open loop: every job of this client first, then their ends.
            subs = [(i, submit(i, name)) for i in mine]
            for i, jid in subs:
                if jid is not None:
                    finish(i, jid, name)
            return
        for i in mine:
            jid = submit(i, name)
            if jid is not None:
                finish(i, jid, name)

    start = time.perf_counter()
    threads = [threading.Thread(target=client, args=(c,)) for c in range(a.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    mismatched = 0
    for jname, got in results.items():
        if got is None:
            continue
        alg, text = got
        try:
            want = open(f"{a.batch_dir}/{jname}.csv").read()
        except OSError as e:
            errors.append(f"{jname}: no batch result ({e})")
            continue
        if not same(alg, first_column(text)[1], first_column(want)[1]):
            mismatched += 1
            errors.append(f"{jname}: result differs from plexus batch's")
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else float("nan")
    report = {
        "jobs": len(jobs), "clients": a.clients, "accepted": len(ids), "unique_ids": len(set(ids)),
        "done": len(results), "checked": sum(1 for g in results.values() if g is not None),
        "mismatched": mismatched, "wall_seconds": wall,
        "jobs_per_second": len(results) / wall if wall > 0 else 0.0,
        "last_accepted_seconds": marks.get("last_accepted", start) - start,
        "server_span_seconds": (max(e for _, e in spans) - min(s for s, _ in spans)) if spans else None,
        # CPU this load generator took (its threads share the machine with
        # the server).
        "client_cpu_seconds": (lambda r: r.ru_utime + r.ru_stime)(resource.getrusage(resource.RUSAGE_SELF)),
        "status_gets": len(latencies), "status_p50_ms": pick(0.50) * 1e3, "status_p99_ms": pick(0.99) * 1e3,
        "errors": errors[:20],
    }
    if a.json:
        print(json.dumps(report, indent=1))
    else:
        for k, v in report.items():
            print(f"{k:16} {v}")
    ok = len(ids) == len(set(ids)) == len(jobs) == len(results) and not errors
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
