#!/usr/bin/env python3
"""Scaling model of the distributed executor past this machine (issue 50).

Time of one dense PageRank superstep on p nodes (one rank a node), from the
partition statistics of `crates/dist/examples/partition_stats.rs` (JSON lines
on stdin or in the files named):

  compute_i = arcs_i * t_arc + masters_i * t_vertex
  comm_i    = max(sent_i, received_i) * msg_bytes / bandwidth + (p - 1) * latency
  sent_i    = mirrors on part i (one combined message per mirror, Gemini's
              dense mode); received_i = mirrors elsewhere mastered by part i
  step      = max_i max(compute_i, comm_i)   (communication overlapped, Gemini)
            or max_i (compute_i + comm_i)    (no overlap)

`--replicated` adds what the executor does today with more than one rank:
every rank receives every vertex's new value each superstep (n * msg_bytes).

Constants (override by flags) and where they come from:
  t_arc, t_vertex
            0.303 s / 20 iterations = 15.15 ms = 128.3 M arcs * t_arc +
            4.19 M vertices * t_vertex: Plexus's PageRank at 16 threads on
            kron22 (issue 46's 16-core Xeon run), split by the assumption
            that a vertex step moves twice an arc's bytes (t_vertex =
            2 t_arc): t_arc 0.1108 ns, t_vertex 0.2217 ns
  msg_bytes 12: vertex id (4) + f64 (8); measured 12.25 bytes a mirror on
            kron20 cut in 2 (6,982,564 bytes sent by rank 0 per superstep,
            569,930 mirrors)
  networks  100 Gb/s InfiniBand (12.5 GB/s, 2 us; Gemini's cluster) and
            10 GbE (1.25 GB/s, 30 us); stated, not measured here.
"""
import argparse
import json
import sys

NETWORKS = {"100Gb/s": (12.5e9, 2e-6), "10GbE": (1.25e9, 30e-6)}


def step_time(rec, a, bandwidth, latency, overlap):
    p = rec["parts"]
    worst = 0.0
    worst_parts = (0.0, 0.0)
    for i in range(p):
        comp = rec["arcs_per_part"][i] * a.t_arc + rec["masters"][i] * a.t_vertex
        msgs = max(rec["mirrors"][i], rec["mirrors_mastered"][i])
        if a.replicated:
            msgs += rec["vertices"]
        comm = msgs * a.msg_bytes / bandwidth + (p - 1) * latency
        t = max(comp, comm) if overlap else comp + comm
        if t > worst:
            worst, worst_parts = t, (comp, comm)
    return worst, worst_parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--t-arc", type=float, default=0.303 / 20 / (128.3e6 + 2 * 4.19e6))
    ap.add_argument("--t-vertex", type=float, default=2 * 0.303 / 20 / (128.3e6 + 2 * 4.19e6))
    ap.add_argument("--msg-bytes", type=float, default=12.0)
    ap.add_argument("--replicated", action="store_true")
    a = ap.parse_args()
    lines = []
    for f in a.files or ["-"]:
        src = sys.stdin if f == "-" else open(f)
        lines += [json.loads(x) for x in src if x.strip()]
    lines.sort(key=lambda r: (r["scale"], r["parts"]))
    print(f"t_arc {a.t_arc * 1e9:.3f} ns, t_vertex {a.t_vertex * 1e9:.3f} ns, "
          f"message {a.msg_bytes:g} B{', replicated state' if a.replicated else ''}")
    print()
    print("| graph | parts | α | arcs (max part ÷ mean) | mirrors, sum ÷ n | max mirrors ÷ max masters "
          "| one node s | " + " | ".join(
              f"{k} step s (compute, comm) | {k} speedup over 1 node, overlapped (no overlap)"
              for k in NETWORKS) + " |")
    print("|---|---|---|---|---|---|---|" + "---|---|" * len(NETWORKS))
    for r in lines:
        p = r["parts"]
        arcs = r["arcs_per_part"]
        mean = sum(arcs) / p
        one = r["arcs"] * a.t_arc + r["vertices"] * a.t_vertex
        cells = []
        for bw, lat in NETWORKS.values():
            t, (comp, comm) = step_time(r, a, bw, lat, True)
            t_no, _ = step_time(r, a, bw, lat, False)
            cells.append(f"{t:.4f} ({comp:.4f}, {comm:.4f})")
            cells.append(f"{one / t:.1f} ({one / t_no:.1f})")
        print(f"| kron{r['scale']} | {p} | {r.get('alpha', 8 * (p - 1))} | {r['arcs'] / 1e9:.2f} G ({max(arcs) / mean:.2f}) "
              f"| {sum(r['mirrors']) / r['vertices']:.2f} "
              f"| {max(r['mirrors']) / max(r['masters']):.2f} | {one:.3f} | "
              + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
