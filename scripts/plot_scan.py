#!/usr/bin/env python3
"""Throughput of the i32 inclusive sum against size: lookback (persistent and classic engines), CUB and
memcpy, as an SVG with no dependencies.

    scripts/plot_scan.py benches/data/h200-2026-11-30 docs/scan-throughput.svg

The directory holds the text output of one device call: bench-scan-persistent.txt and
bench-scan-classic.txt (`bench-scan --engine ... --algos inclusive_sum,...`) and cub.txt (`cub_baseline`).
"""
import re
import sys
from pathlib import Path

ROW = re.compile(r"^(\S+)\s+i32 n=2\^(\d+)\s+t=\s*([\d.]+) us\s+GB/s\s+([\d.]+)")
CUB = re.compile(r"^(\S+)\s+n=2\^(\d+)\s+([\d.]+) us\s+([\d.]+) GB/s")


def bench(path, algo):
    series, memcpy = {}, {}
    for line in path.read_text().splitlines():
        m = ROW.match(line)
        if not m:
            continue
        name, log2n, gbps = m.group(1), int(m.group(2)), float(m.group(4))
        if name == "memcpy":
            memcpy[log2n] = gbps
        elif name.split("[")[0] == algo:
            series[log2n] = gbps
    return series, memcpy


def cub(path):
    series = {}
    for line in path.read_text().splitlines():
        m = CUB.match(line)
        if m and m.group(1) == "scan_inclusive_sum_i32":
            series[int(m.group(2))] = float(m.group(4))
    return series


def svg(curves, out, title):
    w, h, left, right, top, bottom = 720, 420, 70, 170, 40, 50
    xs = sorted({x for _, s, _ in curves for x in s})
    ymax = max(v for _, s, _ in curves for v in s.values()) * 1.1
    x0, x1 = xs[0], xs[-1]
    px = lambda x: left + (x - x0) / (x1 - x0) * (w - left - right)
    py = lambda y: h - bottom - y / ymax * (h - top - bottom)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<text x="{left}" y="22" font-size="14">{title}</text>']
    for g in range(0, int(ymax) + 1, 500):
        parts.append(f'<line x1="{left}" x2="{w - right}" y1="{py(g):.1f}" y2="{py(g):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{left - 8}" y="{py(g) + 4:.1f}" text-anchor="end">{g}</text>')
    for x in range(x0, x1 + 1, 2):
        parts.append(f'<text x="{px(x):.1f}" y="{h - bottom + 18}" text-anchor="middle">2^{x}</text>')
    parts.append(f'<text x="{(left + w - right) / 2}" y="{h - 12}" text-anchor="middle">items (int32)</text>')
    parts.append(f'<text x="16" y="{(top + h - bottom) / 2}" transform="rotate(-90 16 {(top + h - bottom) / 2})" text-anchor="middle">GB/s (read + write)</text>')
    for i, (name, s, color) in enumerate(curves):
        pts = " ".join(f"{px(x):.1f},{py(s[x]):.1f}" for x in sorted(s))
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{pts}"/>')
        for x in sorted(s):
            parts.append(f'<circle cx="{px(x):.1f}" cy="{py(s[x]):.1f}" r="3" fill="{color}"/>')
        ly = top + 20 * i
        parts.append(f'<line x1="{w - right + 12}" x2="{w - right + 32}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="2"/>')
        parts.append(f'<text x="{w - right + 38}" y="{ly + 4}">{name}</text>')
    parts.append("</svg>")
    Path(out).write_text("\n".join(parts) + "\n")


def main():
    data, out = Path(sys.argv[1]), sys.argv[2]
    persistent, memcpy = bench(data / "bench-scan-persistent.txt", "inclusive_sum")
    classic, _ = bench(data / "bench-scan-classic.txt", "inclusive_sum")
    curves = [("memcpy", memcpy, "#888888"), ("lookback persistent", persistent, "#d62728"),
              ("lookback classic", classic, "#1f77b4"), ("CUB 3.0", cub(data / "cub.txt"), "#2ca02c")]
    svg(curves, out, "Inclusive sum, int32, NVIDIA H200 (same device call)")


if __name__ == "__main__":
    main()
