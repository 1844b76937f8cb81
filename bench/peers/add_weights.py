#!/usr/bin/env python3
"""Append a deterministic integer weight in 1..255 to every edge of a text edge list.

Usage: add_weights.py IN OUT      (IN or OUT may be "-" for stdin / stdout)

IN has one edge per line, "u v" (two non-negative integer ids below 2**32,
separated by spaces or tabs). Lines starting with "#" or "%" are comments and
are copied unchanged; blank lines are dropped. Every edge line is written as
"u v w" with

    w = 1 + splitmix64((min(u, v) << 32) | max(u, v)) mod 255

so the weight depends only on the unordered pair {u, v}: both directions of an
undirected edge, and repeated copies of an edge, get the same weight.
splitmix64 is the finaliser of Steele, Lea & Flood's SplittableRandom
(x += 0x9E3779B97F4A7C15; x = (x ^ x>>30)·0xBF58476D1CE4E5B9;
x = (x ^ x>>27)·0x94D049BB133111EB; x ^= x>>31), all mod 2**64.

The file is streamed in blocks of whole lines and each block is parsed and
hashed with numpy, so memory stays bounded for inputs of any size.
"""
import sys

import numpy as np

BLOCK_BYTES = 16 << 20
# " 1" .. " 255" as bytes, indexed by weight.
SUFFIX = [b" %d" % w for w in range(256)]


def splitmix64(x):
    """splitmix64 finaliser over a uint64 array (wrapping arithmetic)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def pair_weights(u, v):
    """Weights 1..255 of the unordered pairs {u[i], v[i]} (int64 arrays)."""
    lo = np.minimum(u, v).astype(np.uint64)
    hi = np.maximum(u, v).astype(np.uint64)
    return (splitmix64((lo << np.uint64(32)) | hi) % np.uint64(255) + np.uint64(1)).astype(np.int64)


def is_data(line):
    """True for an edge line (not blank, not a comment)."""
    s = line.lstrip()
    return bool(s) and s[:1] not in (b"#", b"%")


def append_weights(block, w):
    """`block` (edge lines only, each ending in a newline) with " w[i]" inserted
    before the i-th newline, built with numpy (no per-line Python)."""
    buf = np.frombuffer(block, dtype=np.uint8)
    ends = np.flatnonzero(buf == ord("\n"))
    digits = 1 + (w >= 10) + (w >= 100)
    grow = 1 + digits  # " " + digits
    # In the output, line i's suffix starts where its newline was, moved by
    # the bytes inserted into the lines before it.
    space = ends + (np.cumsum(grow) - grow)
    two, three = digits >= 2, digits == 3
    out = np.empty(buf.size + int(grow.sum()), dtype=np.uint8)
    original = np.ones(out.size, dtype=bool)
    original[space] = original[space + 1] = False
    original[(space + 2)[two]] = False
    original[(space + 3)[three]] = False
    out[original] = buf
    out[space] = ord(" ")
    out[space + digits] = ord("0") + w % 10
    out[(space + digits - 1)[two]] = ord("0") + (w // 10 % 10)[two]
    out[(space + 1)[three]] = ord("0") + (w // 100)[three]
    return out.tobytes()


def weigh_block(block, first_line):
    """Returns `block` (whole lines ending in newlines, no CR) with a weight
    appended to each edge line; comments kept, blank lines dropped."""
    lines_in_block = block.count(b"\n")
    if b"#" not in block and b"%" not in block:
        # Fast path: every line should be an edge line.
        nums = np.fromstring(block, dtype=np.int64, sep=" ")
        if nums.size == 2 * lines_in_block:
            check(nums, first_line, lines_in_block)
            return append_weights(block, pair_weights(nums[0::2], nums[1::2]))
    # Slow path: comments or blank lines present; go line by line.
    lines = [l for l in block.split(b"\n") if l.strip()]
    data = [l for l in lines if is_data(l)]
    nums = np.fromstring(b"\n".join(data), dtype=np.int64, sep=" ")
    if nums.size != 2 * len(data):
        bad(first_line, lines_in_block)
    check(nums, first_line, lines_in_block)
    w = pair_weights(nums[0::2], nums[1::2]).tolist()
    k = 0
    for i, l in enumerate(lines):
        if is_data(l):
            lines[i] = l.rstrip() + SUFFIX[w[k]]
            k += 1
    return b"\n".join(lines) + b"\n" if lines else b""


def check(nums, first_line, count):
    """Exits unless every id is in 0..2^32-1."""
    if nums.size and (nums.min() < 0 or nums.max() >= 1 << 32):
        bad(first_line, count)


def bad(first_line, count):
    sys.exit(f"add_weights: lines {first_line}..{first_line + count - 1}: "
             "expected two ids in 0..2^32-1 on every edge line")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    src = sys.stdin.buffer if sys.argv[1] == "-" else open(sys.argv[1], "rb")
    dst = sys.stdout.buffer if sys.argv[2] == "-" else open(sys.argv[2], "wb")
    rest, line_no = b"", 1
    while True:
        chunk = src.read(BLOCK_BYTES)
        block = rest + chunk
        if not chunk:
            rest = b""
        else:
            cut = block.rfind(b"\n") + 1
            block, rest = block[:cut], block[cut:]
        if b"\r" in block:
            block = block.replace(b"\r", b"")
        if block.strip():
            dst.write(weigh_block(block if block.endswith(b"\n") else block + b"\n", line_no))
        line_no += block.count(b"\n")
        if not chunk:
            break
    dst.close()


if __name__ == "__main__":
    main()
