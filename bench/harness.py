#!/usr/bin/env python3
"""Plexus benchmark harness: every kernel on every benchmark graph, timed,
verified once, and compared with the Python peer libraries in the same run.

Run it through `bench/run` (which builds the release binary first); see
bench/README.md. Standard library only: the peers run in their own venv
(bench/peers/setup.sh), this script only drives them.

What one run does, per graph:
  1. prepares the input once (cached under bench/out/graphs): Kronecker graphs
     come from `plexus generate kron --weighted`, real graphs from
     ../shared/data with integer weights 1..255 hashed from the unordered
     vertex pair (bench/peers/add_weights.py), so Plexus and every peer read
     the very same weighted edge list;
  2. imports it into the harness's own store (bench/out/data), timed, with
     peak RSS;
  3. runs each kernel with `plexus run --repeat R --verify --json`: R timed
     runs after one load, the last result verified outside the timing (the
     harness fails if any verification fails), peak RSS of the process;
  4. unless --no-peers, runs the same kernels in the peers and prints the
     ratio table (peer median / Plexus median).
Results go to bench/out/results.json and bench/out/report.md; with --write
they also replace the harness section of bench/RESULTS.md.
"""

import argparse
import datetime
import gzip
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "out")
GRAPHS = os.path.join(OUT, "graphs")
DATA = os.path.join(OUT, "data")
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "data"))
PLEXUS = os.path.join(ROOT, "target", "release", "plexus")
RESULTS_MD = os.path.join(ROOT, "bench", "RESULTS.md")
BEGIN, END = "<!-- harness:begin -->", "<!-- harness:end -->"

# Harness variants of a registered algorithm: (variant, algorithm). GAPBS's
# PageRank layout: blockwise Gauss-Seidel, f32 contributions (Plexus only).
VARIANTS = [("pagerank-gs", "pagerank")]


def kernels():
    """(kernel, graphs) pairs from the algorithm registry (`plexus algorithms
    --json`: the algorithms with a `bench_graphs` scope, "any", "undirected"
    or "directed", where the peers define them), each variant after its
    algorithm. The registry is the one list of algorithm names."""
    out = subprocess.run([PLEXUS, "algorithms", "--json"], stdout=subprocess.PIPE, text=True, check=True)
    ks = []
    for e in json.loads(out.stdout)["algorithms"]:
        if e.get("bench_graphs"):
            ks.append((e["name"], e["bench_graphs"]))
            ks.extend((v, e["bench_graphs"]) for v, base in VARIANTS if base == e["name"])
    return ks


# name -> (source, directed, SSSP delta[, vertex order]). Deltas follow
# GAPBS's benchmark flags for weights 1..255: 2 on Kronecker and social
# graphs, 256 on the road graph (a sweep in ../shared/anchors/gapbs.md). A
# vertex order is passed to `plexus import --order`; without one the import
# takes its default, `auto`, which stores the Kronecker graphs in degree
# order and the real graphs in their own (so `kronS` and `kronS-degree` are
# the same store, and `kronS-natural` keeps the generator's ids). Results
# stay in the input's ids, so the peers and the verifiers see the same graph.
# `kronS-directed` imports the same edge list as a directed graph.
GRAPH_SPECS = {
    "kron12": ("kron:12", False, 2),
    "kron20": ("kron:20", False, 2),
    "kron22": ("kron:22", False, 2),
    "kron20-degree": ("kron:20", False, 2, "degree"),
    "kron22-degree": ("kron:22", False, 2, "degree"),
    "kron20-natural": ("kron:20", False, 2, "none"),
    "kron22-natural": ("kron:22", False, 2, "none"),
    # The same edge lists as directed graphs (each generated edge one arc),
    # for the kernels defined on directed graphs only: scc.
    "kron20-directed": ("kron:20", True, 2),
    "kron22-directed": ("kron:22", True, 2),
    "cnr-2000": ("shared:cnr-2000.el.gz", True, 2),
    # Eight disjoint copies of cnr-2000 (ids of copy i raised by i·n): after
    # SCC's forward–backward search from one pivot, 1.8 M vertices are left
    # (web crawls have many mid-sized components beside the giant one), the
    # phase that no other graph here reaches. Only scc runs on it
    # (KERNELS_ONLY): the other kernels would repeat cnr-2000's results.
    "cnr-2000x8": ("copies:8:cnr-2000", True, 2),
    "soc-Slashdot0902": ("shared:soc-Slashdot0902.el.gz", True, 2),
    "USA-road-FLA": ("shared:USA-road-FLA.el.gz", False, 256),
    "email-Enron": ("shared:email-Enron.el.gz", False, 2),
}
FULL = ["kron20", "kron22", "kron20-directed", "kron22-directed", "cnr-2000", "cnr-2000x8",
        "soc-Slashdot0902", "USA-road-FLA", "email-Enron"]
# Graphs that run only some kernels (see their GRAPH_SPECS entries).
KERNELS_ONLY = {"cnr-2000x8": ("scc",)}
QUICK = ["kron12"]

# PageRank stops when the L1 norm of the change is below this (GAPBS's -t
# 1e-4); Plexus takes NetworkX's per-vertex tolerance, so it gets PR_L1 / n.
PR_L1 = 1e-4
BC_SOURCES = 4


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def env_plexus():
    env = dict(os.environ)
    env["PLEXUS_DATA"] = DATA
    return env


def timed_process(cmd, env=None, stdout=subprocess.PIPE):
    """Runs cmd under GNU time; returns (stdout text, wall s, peak RSS KiB)."""
    rss_file = os.path.join(OUT, "time.tmp")
    full = ["/usr/bin/time", "-o", rss_file, "-f", "%e %M"] + cmd
    p = subprocess.run(full, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-500:]))
    with open(rss_file) as f:
        wall, rss = f.read().split()[-2:]
    os.remove(rss_file)
    return p.stdout, float(wall), int(rss)


_PEERS_PY = []


def peers_python():
    """The peers' venv python (numpy, the libraries), set up on first use."""
    if not _PEERS_PY:
        venv = os.environ.get("PEERS_VENV", os.path.join(OUT, "peers-venv"))
        subprocess.run(["bash", os.path.join(ROOT, "bench", "peers", "setup.sh")], check=True,
                       env=dict(os.environ, PEERS_VENV=venv), stdout=sys.stderr)
        _PEERS_PY.append(os.path.join(venv, "bin", "python"))
    return _PEERS_PY[0]


def prepare_input(name):
    """The weighted edge list both Plexus and the peers read: `NAME.wel`, or
    `kronS.wel` for every graph generated at Kronecker scale S."""
    source = GRAPH_SPECS[name][0]
    kind, arg = source.split(":", 1)
    path = os.path.join(GRAPHS, ("kron" + arg if kind == "kron" else name) + ".wel")
    if os.path.exists(path):
        return path
    os.makedirs(GRAPHS, exist_ok=True)
    tmp = path + ".tmp"
    if kind == "kron":
        log("generating %s" % name)
        subprocess.run([PLEXUS, "-q", "generate", "kron", "--scale", arg, "--weighted", "--out", tmp], check=True)
    elif kind == "copies":
        count, base = arg.split(":", 1)
        base_path = prepare_input(base)
        if base_path is None:
            return None
        log("writing %s copies of %s" % (count, base))
        write_copies(base_path, int(count), tmp)
    else:
        src = os.path.join(SHARED, arg)
        if not os.path.exists(src):
            return None
        log("weighting %s" % src)
        plain = path + ".el.tmp"
        with gzip.open(src, "rb") as fin, open(plain, "wb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 22)
        subprocess.run([peers_python(), os.path.join(ROOT, "bench", "peers", "add_weights.py"), plain, tmp],
                       check=True)
        os.remove(plain)
    os.replace(tmp, path)
    return path


def write_copies(src, count, out):
    """`count` disjoint copies of the weighted edge list `src` into `out`,
    copy i with every id raised by i·n, where n is the largest id plus one."""
    with open(src) as f:
        edges = [tuple(int(x) for x in line.split()) for line in f
                 if line.strip() and line[0] not in "#%"]
    n = 1 + max(max(u, v) for u, v, _ in edges)
    with open(out, "w") as f:
        for i in range(count):
            o = i * n
            f.writelines("%d %d %d\n" % (u + o, v + o, w) for u, v, w in edges)


def import_graph(name, path):
    """Imports into the harness store; returns timing and the graph's info."""
    directed = GRAPH_SPECS[name][1]
    cmd = [PLEXUS, "-q", "import", path, "--name", name, "--weighted", "--duplicates", "min", "--force"]
    if not directed:
        cmd += ["--undirected", "--self-loops", "drop"]
    if len(GRAPH_SPECS[name]) > 3:
        cmd += ["--order", GRAPH_SPECS[name][3]]
    _, wall, rss = timed_process(cmd, env=env_plexus())
    info = json.loads(subprocess.run([PLEXUS, "info", name, "--json"], env=env_plexus(), check=True,
                                     stdout=subprocess.PIPE, text=True).stdout)
    return {"import_seconds": wall, "import_peak_rss_kib": rss, "input_bytes": os.path.getsize(path), "info": info}


def kernel_args(kernel, name, info):
    delta = GRAPH_SPECS[name][2]
    root = info["out_degree"]["top"][0]["id"] if info["out_degree"]["top"] else "0"
    n = max(info["vertices"], 1)
    args = []
    if kernel in ("bfs", "sssp", "ppr"):
        args += ["--source", str(root)]
    if kernel == "sssp":
        args += ["--delta", str(delta)]
    if kernel in ("pagerank", "pagerank-gs", "ppr"):
        args += ["--tolerance", repr(PR_L1 / n)]
    if kernel == "pagerank-gs":
        args += ["--method", "gauss-seidel", "--precision", "single"]
    if kernel == "betweenness":
        args += ["--samples", str(BC_SOURCES), "--seed", "1"]
    return args, root


# Untimed warm-up before each kernel's timed runs, Plexus and peers alike: on
# this host type a process's first ~0.1 s of computation runs 2-2.5x slower
# (measured 2026-11-25: email-Enron PageRank 16-21 ms in the first runs of a
# process, 7.2 ms after), which would otherwise fall on whichever side starts
# timing sooner after its process starts (Plexus opens a store in < 1 ms).
WARMUP_SECONDS = 0.3


def run_plexus(kernel, name, info, runs, threads):
    args, _ = kernel_args(kernel, name, info)
    algorithm = "pagerank" if kernel == "pagerank-gs" else kernel
    cmd = [PLEXUS, "-q", "run", algorithm, name, "--threads", str(threads), "--repeat", str(runs),
           "--warmup", str(WARMUP_SECONDS), "--verify", "--json"] + args
    try:
        out, wall, rss = timed_process(cmd, env=env_plexus())
    except RuntimeError as e:
        return {"status": "error", "error": str(e)}
    d = json.loads(out)
    times = d.get("compute_seconds_runs", [d["compute_seconds"]])
    return {
        "status": "ok" if d.get("verified") else "verify-failed",
        "runs": times,
        "median": statistics.median(times),
        "min": min(times),
        "max": max(times),
        "load_seconds": d["load_seconds"],
        "iterations": d.get("iterations"),
        "precision": d.get("precision"),
        "process_seconds": wall,
        "peak_rss_kib": rss,
        "verify_error": d.get("verify_error"),
        "command": " ".join(["plexus"] + cmd[1:]),
    }


def export_for_peers(name):
    """The imported graph written back as `u v w` lines (each undirected edge
    once, duplicates and self-loops already resolved as Plexus stored them),
    so the peers load exactly the graph Plexus runs on."""
    path = os.path.join(GRAPHS, name + ".export.wel")
    tmp = path + ".tmp"
    subprocess.run([PLEXUS, "-q", "export", name, "--out", tmp], env=env_plexus(), check=True,
                   stdout=subprocess.DEVNULL)
    os.replace(tmp, path)
    return path


def run_peers(name, path, info, kernels, runs, threads, timeout, libraries):
    """Runs the peer libraries on the same graph; returns their JSON lines."""
    directed = GRAPH_SPECS[name][1]
    _, root = kernel_args("bfs", name, info)
    out = os.path.join(OUT, "peers-%s.jsonl" % name)
    if os.path.exists(out):
        os.remove(out)
    cmd = [peers_python(), os.path.join(ROOT, "bench", "peers", "peers.py"),
           "--graph", name, "--file", path, "--directed" if directed else "--undirected",
           "--kernels", ",".join(kernels), "--root", str(root), "--runs", str(runs),
           "--warmup", str(WARMUP_SECONDS),
           "--threads", str(threads), "--timeout", str(timeout), "--pr-tol", repr(PR_L1),
           "--bc-sources", str(BC_SOURCES), "--out", out]
    if libraries:
        cmd += ["--libraries", libraries]
    subprocess.run(cmd, check=False)
    rows = []
    if os.path.exists(out):
        with open(out) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    return rows


def pooled(first, later):
    """One result from the same measurement taken in several rounds: the
    timed runs of every round that succeeded, with median, min and max over
    all of them (the first round's other fields)."""
    every = [first] + later
    failed = [r for r in every if r.get("status") != "ok"]
    if failed:
        # A round that failed (or timed out) is what the table shows.
        return failed[0]
    ok = [r for r in every if r.get("runs")]
    if not ok:
        return first
    out = dict(ok[0])
    out["runs"] = [t for r in ok for t in r["runs"]]
    out["median"] = statistics.median(out["runs"])
    out["min"] = min(out["runs"])
    out["max"] = max(out["runs"])
    out["rounds"] = len(ok)
    return out


def pooled_peers(rounds):
    """The peers' rows of several rounds, pooled per library and kernel."""
    keyed = {}
    for rows in rounds:
        for r in rows:
            keyed.setdefault((r["library"], r["kernel"]), []).append(r)
    return [pooled(rs[0], rs[1:]) for rs in keyed.values()]


def probe(threads):
    """Triad bandwidth from `plexus probe` (bytes/s), or None."""
    p = subprocess.run([PLEXUS, "-q", "probe", "--threads", str(threads), "--json"], env=env_plexus(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        log("probe failed: %s" % p.stderr.strip())
        return None
    return json.loads(p.stdout)


def bytes_per_iteration(kernel, info, precision=None):
    """Bytes a PageRank iteration or a WCC pass must move at least: the
    topology it reads once (offsets 8 B per vertex, and targets 4 B per arc,
    or for PageRank on a graph with tiles the tiles' arrays, as `plexus info`
    reports them) plus its per-vertex state (PageRank's fused kernel: the
    rank read and written, 8 B each, and the contribution read and written,
    8 B each, or 4 B with f32 contributions, as the run reports; over tiles
    a block's f64 sums stay in cache until its ranks are updated; WCC: one
    4 B label read and written). For PageRank a lower bound on traffic; for
    WCC the size of one full pass, which Afforest does not make (it samples,
    then skips the largest component), so not a bound."""
    n, arcs = info["vertices"], info["arcs"]
    tiles = info.get("tiles") if kernel == "pagerank" else None
    topo = 8 * (n + 1) + (tiles["bytes"] if tiles else 4 * arcs)
    if kernel == "wcc":
        state = 8 * n
    else:
        state = 24 * n if precision == "single" else 32 * n
    return topo + state


def machine():
    def lscpu(field):
        try:
            out = subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True).stdout
        except OSError:
            return "?"
        m = re.search(r"^%s:\s*(.+)$" % re.escape(field), out, re.M)
        return m.group(1).strip() if m else "?"
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
            mem = "%.1f GiB" % (kib / 2**20)
    except OSError:
        pass
    return {
        "cpu": lscpu("Model name"),
        "cores": os.cpu_count(),
        "l3": lscpu("L3 cache"),
        "memory": mem,
        "kernel": platform.release(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def fmt_s(x):
    if x is None:
        return "–"
    if x >= 10:
        return "%.1f s" % x
    if x >= 1:
        return "%.2f s" % x
    if x >= 1e-3:
        return "%.1f ms" % (x * 1e3)
    return "%.0f µs" % (x * 1e6)


def report(res):
    """The Markdown report: machine, graphs, then one table per graph."""
    m = res["machine"]
    rounds = res.get("rounds", 1)
    timed = ("%d timed runs per kernel" % res["runs"] if rounds == 1 else
             "%d rounds of %d timed runs per kernel, each round Plexus then the peers, runs pooled"
             % (rounds, res["runs"]))
    lines = ["Machine: %s, %s cores, L3 %s, %s RAM, Linux %s; %s. %d threads, %s "
             "(median, min–max), load (opening the store) reported apart; every Plexus result verified once "
             "outside the timed runs." % (m["cpu"], m["cores"], m["l3"], m["memory"], m["kernel"], m["date"],
                                           res["threads"], timed), ""]
    if res.get("probe"):
        p = res["probe"]
        lines.append("Memory bandwidth (`plexus probe`, %d threads): copy %.1f, scale %.1f, add %.1f, triad %.1f GB/s."
                     % (p["threads"], p["copy_gbs"], p["scale_gbs"], p["add_gbs"], p["triad_gbs"]))
        lines.append("")
    lines += ["| graph | vertices | edges | directed | import | peak RSS | stored |", "|---|---|---|---|---|---|---|"]
    for g in res["graphs"]:
        i = g["info"]
        lines.append("| %s | %s | %s | %s | %s | %.0f MiB | %.0f MiB |" % (
            g["name"], f"{i['vertices']:,}", f"{i['edges']:,}", "yes" if i["directed"] else "no",
            fmt_s(g["import_seconds"]), g["import_peak_rss_kib"] / 1024, i["bytes_on_disk"] / 2**20))
    lines.append("")
    for g in res["graphs"]:
        peers = sorted({r["library"] for r in g.get("peers", [])})
        head = ["kernel", "Plexus median (min–max)", "load", "iters", "peak RSS"] + peers + ["fastest peer ÷ Plexus"]
        lines += ["### %s" % g["name"], "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        notes = []
        for k, r in g["kernels"].items():
            if r["status"] not in ("ok",):
                lines.append("| %s | %s |" % (k, r["status"].upper() + ": " + str(r.get("error") or r.get("verify_error"))))
                continue
            cells = [k, "%s (%s–%s)" % (fmt_s(r["median"]), fmt_s(r["min"]), fmt_s(r["max"])),
                     fmt_s(r["load_seconds"]), str(r["iterations"] or ""), "%.0f MiB" % (r["peak_rss_kib"] / 1024)]
            best, best_same = None, None  # fastest peer row; fastest whose ranks sum to 1
            for lib in peers:
                row = next((x for x in g["peers"] if x["library"] == lib and x["kernel"] == k), None)
                if row is None or row.get("status") != "ok":
                    cells.append(row["status"] if row else "–")
                    continue
                mass = rank_mass(k, row)
                cells.append(fmt_s(row["median"]) + (" (Σ %.2f)" % mass if mass is not None else ""))
                if best is None or row["median"] < best["median"]:
                    best = row
                if mass is None and (best_same is None or row["median"] < best_same["median"]):
                    best_same = row
            ratio = "%.2f×" % (best["median"] / r["median"]) if best and best["median"] and r["median"] > 0 else "–"
            if best is not None and best_same is not None and best_same is not best and r["median"] > 0:
                ratio += " ‡"
                notes.append("‡ %s: %s's ranks sum to %.2f, not 1: it drops the rank that vertices without "
                             "out-edges hold (as GAPBS's `pr` does), where Plexus and NetworkX hand it out "
                             "uniformly. Against the fastest peer whose ranks sum to 1 (%s), Plexus is %.2f×."
                             % (k, best["library"], rank_mass(k, best), best_same["library"],
                                best_same["median"] / r["median"]))
            cells.append(ratio)
            lines.append("| " + " | ".join(cells) + " |")
        if notes:
            lines += [""] + notes
        bw = g.get("bandwidth")
        if bw:
            lines.append("")
            for k, b in bw.items():
                if k == "wcc":
                    # Afforest samples neighbours, then skips the largest
                    # component's edges: a run reads less than a full pass,
                    # so the figure is the pass's size over the run's time.
                    lines.append("wcc: a full pass over its topology and labels is %.0f MiB; the median run takes "
                                 "the time of %.1f GB/s over it, %.0f%% of triad. A run may read less than that "
                                 "pass (Afforest samples neighbours, then skips the largest component's edges), so "
                                 "this is a rate, not traffic, and can pass 100%%."
                                 % (b["bytes"] / 2**20, b["gbs"], 100 * b["fraction_of_triad"]))
                    continue
                lines.append("%s moves at least %.0f MiB per %s; at the median that is %.1f GB/s, %.0f%% of triad."
                             % (k, b["bytes"] / 2**20, b["per"], b["gbs"], 100 * b["fraction_of_triad"]))
        lines.append("")
    return "\n".join(lines)


def rank_mass(kernel, row):
    """For a PageRank or PPR peer row: the sum of its ranks when that is not
    1 (beyond f32 rounding), that is, a different result from NetworkX's;
    else None."""
    if kernel not in ("pagerank", "ppr"):
        return None
    mass = (row.get("summary") or {}).get("sum")
    return mass if mass is not None and abs(mass - 1.0) > 1e-2 else None


def write_results_md(text):
    with open(RESULTS_MD) as f:
        cur = f.read()
    block = "%s\n%s\n%s" % (BEGIN, text, END)
    if BEGIN in cur and END in cur:
        new = cur[:cur.index(BEGIN)] + block + cur[cur.index(END) + len(END):]
    else:
        new = cur.rstrip("\n") + "\n\n## Benchmark harness (`bench/run`)\n\n" + block + "\n"
    tmp = RESULTS_MD + ".tmp"
    with open(tmp, "w") as f:
        f.write(new)
    os.replace(tmp, RESULTS_MD)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a small generated graph, one run, no peers (CI)")
    ap.add_argument("--graphs", help="comma-separated graph names (default: all of the full set)")
    ap.add_argument("--kernels", help="comma-separated kernel names (default: all)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per kernel (default 5)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="per graph, time Plexus and then the peers this many times over, and pool each "
                         "library's runs (the host's noise drifts over minutes; rounds spread every "
                         "library over the same minutes; default 1)")
    ap.add_argument("--threads", type=int, default=2, help="threads for Plexus and every peer (default 2)")
    ap.add_argument("--no-peers", action="store_true", help="skip the Python peer libraries")
    ap.add_argument("--peer-timeout", type=int, default=300, help="seconds before a peer kernel is killed")
    ap.add_argument("--peer-libraries", help="comma-separated subset of the peer libraries")
    ap.add_argument("--results", default=os.path.join(OUT, "results.json"),
                    help="where to write the JSON results (default bench/out/results.json)")
    ap.add_argument("--write", action="store_true", help="also replace the harness section of bench/RESULTS.md")
    ap.add_argument("--report-from", help="only rebuild the report from these comma-separated results files "
                    "(runs of different graph sets), e.g. to --write them together")
    a = ap.parse_args()
    if a.report_from:
        parts = []
        for path in a.report_from.split(","):
            with open(path) as f:
                parts.append(json.load(f))
        res = dict(parts[0])
        res["graphs"] = [g for p in parts for g in p["graphs"]]
        text = report(res)
        print(text)
        if a.write:
            write_results_md(text)
        return

    names = QUICK if a.quick else (a.graphs.split(",") if a.graphs else FULL)
    for n in names:
        if n not in GRAPH_SPECS:
            sys.exit("error: unknown graph '%s' (known: %s)" % (n, ", ".join(GRAPH_SPECS)))
    KERNELS = kernels()
    wanted = a.kernels.split(",") if a.kernels else [k for k, _ in KERNELS]
    for k in wanted:
        if k not in dict(KERNELS):
            sys.exit("error: unknown kernel '%s'" % k)
    runs = 1 if a.quick else a.runs
    peers = not (a.quick or a.no_peers)
    os.makedirs(OUT, exist_ok=True)

    rounds = 1 if a.quick else max(1, a.rounds)
    res = {"machine": machine(), "threads": a.threads, "runs": runs, "rounds": rounds, "graphs": [],
           "probe": None if a.quick else probe(a.threads)}
    failures = []
    for name in names:
        path = prepare_input(name)
        if path is None:
            log("skipping %s: %s not found (../shared/data absent)" % (name, GRAPH_SPECS[name][0]))
            continue
        log("importing %s" % name)
        g = {"name": name}
        g.update(import_graph(name, path))
        directed = g["info"]["directed"]
        ks = [k for k, scope in KERNELS if k in wanted and
              (scope == "any" or (scope == "directed") == directed) and
              k in KERNELS_ONLY.get(name, (k,))]
        g["kernels"] = {}
        peer_rounds = []
        peer_ks = [k for k in ks if k != "pagerank-gs"]
        for rnd in range(rounds):
            if rounds > 1:
                log("round %d of %d on %s" % (rnd + 1, rounds, name))
            for k in ks:
                t = time.time()
                r = run_plexus(k, name, g["info"], runs, a.threads)
                log("  %-12s %-14s %s (%.1f s)" % (k, r["status"], fmt_s(r.get("median")), time.time() - t))
                if r["status"] != "ok":
                    failures.append("%s on %s: %s" % (k, name, r.get("error") or r.get("verify_error")))
                g["kernels"][k] = pooled(g["kernels"][k], [r]) if k in g["kernels"] else r
            if peers:
                log("peers on %s" % name)
                if rnd == 0:
                    export = export_for_peers(name)
                peer_rounds.append(run_peers(name, export, g["info"], peer_ks, runs, a.threads,
                                             a.peer_timeout, a.peer_libraries))
        if res["probe"]:
            g["bandwidth"] = {}
            for k in ("pagerank", "pagerank-gs", "wcc"):
                r = g["kernels"].get(k)
                if r and r["status"] == "ok":
                    b = bytes_per_iteration(k, g["info"], r.get("precision"))
                    per_run = r["iterations"] or 1
                    per = "run" if k == "wcc" else "iteration"
                    gbs = b * per_run / r["median"] / 1e9
                    g["bandwidth"][k] = {"bytes": b, "per": per, "gbs": gbs,
                                         "fraction_of_triad": gbs / res["probe"]["triad_gbs"]}
        if peers:
            g["peers"] = pooled_peers(peer_rounds)
        res["graphs"].append(g)

    with open(a.results, "w") as f:
        json.dump(res, f, indent=1)
    text = report(res)
    with open(os.path.join(OUT, "report.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    if a.write:
        write_results_md(text)
    if failures:
        log("FAILED: " + "; ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
