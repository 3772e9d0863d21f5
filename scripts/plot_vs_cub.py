#!/usr/bin/env python3
"""Speed of every primitive relative to CUB against size (CUB's time / lookback's: above 1, lookback is
faster), as an SVG with no dependencies.

    scripts/plot_vs_cub.py benches/data/h200-2026-11-30-s5 docs/vs-cub.svg

The directory holds the text output of benches built with `--features cub-baseline` (bench-scan.txt,
bench-select.txt, bench-runs.txt from `scripts/h200-final.sh`), where every lookback row that CUB has is
followed by its `cub:<row>` line, timed in the same process on the same buffers.
"""
import re
import sys
from pathlib import Path

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


def svg(curves, out, title):
    w, h, left, right, top, bottom = 760, 460, 60, 230, 40, 50
    xs = sorted({x for s in curves.values() for x in s})
    ys = [v for s in curves.values() for v in s.values()]
    ymin, ymax = min(0.5, min(ys)), max(ys) * 1.05
    x0, x1 = xs[0], xs[-1]
    px = lambda x: left + (x - x0) / (x1 - x0) * (w - left - right)
    py = lambda y: h - bottom - (y - ymin) / (ymax - ymin) * (h - top - bottom)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<text x="{left}" y="22" font-size="14">{title}</text>']
    g = ymin
    while g <= ymax:
        parts.append(f'<line x1="{left}" x2="{w - right}" y1="{py(g):.1f}" y2="{py(g):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{left - 8}" y="{py(g) + 4:.1f}" text-anchor="end">{g:.1f}</text>')
        g += 0.5
    parts.append(f'<line x1="{left}" x2="{w - right}" y1="{py(1):.1f}" y2="{py(1):.1f}" stroke="#444" stroke-dasharray="4 3"/>')
    for x in range(x0, x1 + 1, 2):
        parts.append(f'<text x="{px(x):.1f}" y="{h - bottom + 18}" text-anchor="middle">2^{x}</text>')
    parts.append(f'<text x="{(left + w - right) / 2}" y="{h - 12}" text-anchor="middle">items (int32)</text>')
    mid = (top + h - bottom) / 2
    parts.append(f'<text x="16" y="{mid}" transform="rotate(-90 16 {mid})" text-anchor="middle">CUB time / lookback time</text>')
    for i, (name, s) in enumerate(sorted(curves.items())):
        color = COLORS[i % len(COLORS)]
        pts = " ".join(f"{px(x):.1f},{py(s[x]):.1f}" for x in sorted(s))
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{pts}"/>')
        for x in sorted(s):
            parts.append(f'<circle cx="{px(x):.1f}" cy="{py(s[x]):.1f}" r="3" fill="{color}"/>')
        ly = top + 18 * i
        parts.append(f'<line x1="{w - right + 12}" x2="{w - right + 32}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="2"/>')
        parts.append(f'<text x="{w - right + 38}" y="{ly + 4}">{name}</text>')
    parts.append("</svg>")
    Path(out).write_text("\n".join(parts) + "\n")


def main():
    data, out = Path(sys.argv[1]), sys.argv[2]
    curves = ratios([data / f for f in ("bench-scan.txt", "bench-select.txt", "bench-runs.txt")])
    svg(curves, out, "lookback against CUB 3.0, int32, NVIDIA H200 (same process, same buffers)")
    for name, s in sorted(curves.items()):
        print(f"{name:28s} " + "  ".join(f"2^{x}: {s[x]:.2f}" for x in sorted(s)))


if __name__ == "__main__":
    main()
