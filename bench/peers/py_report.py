"""Markdown tables of bench/python.sh's results.jsonl."""
import json
import sys
from collections import defaultdict

KERNELS = {"pagerank": "nx.pagerank", "cc": "connected components", "bc64": "betweenness k=64",
           "bfs": "sssp length (BFS)", "pagerank+read": "nx.pagerank, values read",
           "bfs+read": "sssp length (BFS), values read"}


def fmt(x):
    if x is None:
        return "–"
    return f"{x * 1e3:.1f} ms" if x < 1 else f"{x:.2f} s"


def main(path):
    rows = [json.loads(line) for line in open(path) if line.startswith("{")]
    nx = [r for r in rows if r.get("cell") == "nx" and "kernel" in r]
    graphs = list(dict.fromkeys(r["graph"] for r in nx))
    backends = list(dict.fromkeys(r["backend"] for r in nx))
    print("| graph | kernel | " + " | ".join(backends) + " | fastest other ÷ plexus (cached) |")
    print("|---|---|" + "---|" * (len(backends) + 1))
    for g in graphs:
        cells = defaultdict(dict)
        for r in nx:
            if r["graph"] == g:
                cells[r["kernel"]][r["backend"]] = r
        for k, by in cells.items():
            out = []
            for b in backends:
                r = by.get(b)
                if r is None:
                    out.append("–")
                elif "timeout" in r:
                    out.append(f"> {r['timeout']:.0f} s")
                elif "unsupported" in r:
                    out.append("n/a")
                elif "error" in r:
                    out.append("fails")
                elif b in ("networkx",):
                    out.append(fmt(r.get("cached") or r["first"]))
                else:
                    out.append(f"{fmt(r['first'])} / {fmt(r.get('cached'))}")
            p = by.get("plexus", {}).get("cached")
            # Cached calls against cached calls; NetworkX itself converts
            # nothing, so its first call counts; a backend with no cached
            # call (its first call used the minute) is left out.
            others = []
            for b, r in by.items():
                if b == "plexus" or "unsupported" in r or "error" in r:
                    continue
                if "timeout" in r:
                    others.append((r["timeout"], ">"))
                elif r.get("cached") is not None:
                    others.append((r["cached"], ""))
                elif b == "networkx":
                    others.append((r["first"], ""))
            if p and others:
                best, mark = min(others)
                ratio = f"{mark}{best / p:.1f}×"
            else:
                ratio = "–"
            print(f"| {g} | {KERNELS.get(k, k)} | " + " | ".join(out) + f" | {ratio} |")
    print("\nBackend cells: first call (with conversion) / median of the cached calls "
          "(– : the first call used the minute a kernel gets). The ratio compares cached calls "
          "(NetworkX's own calls convert nothing).")
    versions = {}
    for r in nx:
        versions.setdefault(r["backend"], r.get("networkx"))
    print("NetworkX version per column: " + ", ".join(f"{b} {v}" for b, v in versions.items()) + ".")
    print("\n| graph | backend | peak RSS MiB | RSS before kernels MiB | NetworkX graph build |")
    print("|---|---|---|---|---|")
    seen = set()
    for r in nx:
        key = (r["graph"], r["backend"])
        if key in seen:
            continue
        seen.add(key)
        last = [x for x in nx if (x["graph"], x["backend"]) == key][-1]
        print(f"| {r['graph']} | {r['backend']} | {last['peak_mib']:.0f} | {r['rss_before_mib']:.0f} | {fmt(r['nx_build'])} |")
    loads = [r for r in rows if r.get("cell") == "load"]
    if loads:
        print("\n| graph | from a DataFrame | time | peak MiB above the DataFrame | bytes per edge |")
        print("|---|---|---|---|---|")
        for r in loads:
            extra = r["peak_mib"] - r["input_mib"]
            print(f"| {r['graph']} ({r['rows']:,} rows) | {r['library']} | {fmt(r['seconds'])} | "
                  f"{extra:.0f} | {extra * 2**20 / r['rows']:.1f} |")
    cli = {r["graph"]: r for r in rows if r.get("cell") == "cli-pagerank"}
    pyr = {r["graph"]: r for r in rows if r.get("cell") == "py-pagerank"}
    if cli:
        print("\n| graph | `plexus run pagerank` compute | `g.pagerank()` compute | ratio |")
        print("|---|---|---|---|")
        for g, c in cli.items():
            p = pyr.get(g)
            if p:
                print(f"| {g} | {fmt(c['compute'])} | {fmt(p['compute'])} | {p['compute'] / c['compute']:.3f} |")


if __name__ == "__main__":
    main(sys.argv[1])
