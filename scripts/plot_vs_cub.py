#!/usr/bin/env python3
"""Speed of every primitive relative to CUB against size (CUB's time / lookback's: above 1, lookback is
faster), as an SVG with no dependencies.

    scripts/plot_vs_cub.py benches/data/h200-2026-11-30-2001 docs/vs-cub.svg

The directory holds the text output of benches built with `--features cub-baseline` (bench-scan.txt,
bench-select.txt, bench-runs.txt from `scripts/h200-final.sh`, and optionally override-*.txt, rows
re-measured later that replace the earlier ones), where every lookback row that CUB has is followed by
its `cub:<row>` line, timed in the same process on the same buffers. Further bench outputs named after
the SVG (e.g. an override file measured later) replace rows too, in the order given:
    scripts/plot_vs_cub.py benches/data/h200-2026-12-01-0615 docs/vs-cub.svg \
        benches/data/h200-2026-12-01-0748/override-call8-i32-encodings.txt
"""
import re
import sys
from pathlib import Path

from svg_chart import line_chart

ROW = re.compile(r"^(cub:)?(\S+)\s+(\S+) n=2\^(\d+)\s+t=\s*([\d.]+) us")
# One curve per row name (i32 only); colours cycle.
COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
          "#17becf", "#000000", "#aec7e8", "#98df8a", "#ffbb78", "#393b79", "#637939", "#843c39", "#7b4173"]


def ratios(paths):
    """{row: {log2n: cub_us / lookback_us}} from the lookback rows and the cub: rows after them."""
    mine, cub = {}, {}
    for path in paths:
        for line in path.read_text().splitlines():
            m = ROW.match(line)
            if not m or m.group(3) != "i32" or "[" in m.group(2) or m.group(2) == "memcpy":
                continue
            (cub if m.group(1) else mine)[(m.group(2), int(m.group(4)))] = float(m.group(5))
    out = {}
    for (name, log2n), us in cub.items():
        if (name, log2n) in mine:
            out.setdefault(name, {})[log2n] = us / mine[(name, log2n)]
    return out


def main():
    data, out = Path(sys.argv[1]), sys.argv[2]
    # override-*.txt: rows re-measured after a change in a later device call; their rows replace the
    # earlier ones (same row, same size).
    files = [data / f for f in ("bench-scan.txt", "bench-select.txt", "bench-runs.txt")]
    curves = ratios(files + sorted(data.glob("override-*.txt")) + [Path(p) for p in sys.argv[3:]])
    named = [(name, s, COLORS[i % len(COLORS)]) for i, (name, s) in enumerate(sorted(curves.items()))]
    lowest = min(v for s in curves.values() for v in s.values())
    line_chart(named, out, "lookback against CUB 3.0, int32, NVIDIA H200 (same process, same buffers)",
               "CUB time / lookback time", 0.5, ymin=min(0.5, lowest), reference=1.0, width=760, legend=230)
    for name, s in sorted(curves.items()):
        print(f"{name:28s} " + "  ".join(f"2^{x}: {s[x]:.2f}" for x in sorted(s)))


if __name__ == "__main__":
    main()
