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

from svg_chart import line_chart

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


def main():
    data, out = Path(sys.argv[1]), sys.argv[2]
    persistent, memcpy = bench(data / "bench-scan-persistent.txt", "inclusive_sum")
    classic, _ = bench(data / "bench-scan-classic.txt", "inclusive_sum")
    curves = [("memcpy", memcpy, "#888888"), ("lookback persistent", persistent, "#d62728"),
              ("lookback classic", classic, "#1f77b4"), ("CUB 3.0", cub(data / "cub.txt"), "#2ca02c")]
    line_chart(curves, out, "Inclusive sum, int32, NVIDIA H200 (same device call)", "GB/s (read + write)", 500)


if __name__ == "__main__":
    main()
