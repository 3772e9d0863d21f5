"""A line chart as SVG with no dependencies, shared by the plot scripts (plot_scan.py, plot_vs_cub.py)."""
from pathlib import Path


def line_chart(curves, out, title, ylabel, ystep, ymin=0.0, reference=None, width=720, legend=170):
    """curves: [(name, {log2n: y}, colour)]; x is log2 of the item count. `reference`: a y drawn dashed."""
    w, h, left, right, top, bottom = width, 440, 70, legend, 40, 50
    xs = sorted({x for _, s, _ in curves for x in s})
    ymax = max(v for _, s, _ in curves for v in s.values()) * 1.05
    x0, x1 = xs[0], xs[-1]
    px = lambda x: left + (x - x0) / (x1 - x0) * (w - left - right)
    py = lambda y: h - bottom - (y - ymin) / (ymax - ymin) * (h - top - bottom)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<text x="{left}" y="22" font-size="14">{title}</text>']
    k = 0
    while ymin + k * ystep <= ymax:
        g = ymin + k * ystep
        parts.append(f'<line x1="{left}" x2="{w - right}" y1="{py(g):.1f}" y2="{py(g):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{left - 8}" y="{py(g) + 4:.1f}" text-anchor="end">{g:g}</text>')
        k += 1
    if reference is not None:
        parts.append(f'<line x1="{left}" x2="{w - right}" y1="{py(reference):.1f}" y2="{py(reference):.1f}" '
                     'stroke="#444" stroke-dasharray="4 3"/>')
    for x in range(x0, x1 + 1, 2):
        parts.append(f'<text x="{px(x):.1f}" y="{h - bottom + 18}" text-anchor="middle">2^{x}</text>')
    parts.append(f'<text x="{(left + w - right) / 2}" y="{h - 12}" text-anchor="middle">items (int32)</text>')
    mid = (top + h - bottom) / 2
    parts.append(f'<text x="16" y="{mid}" transform="rotate(-90 16 {mid})" text-anchor="middle">{ylabel}</text>')
    for i, (name, s, color) in enumerate(curves):
        pts = " ".join(f"{px(x):.1f},{py(s[x]):.1f}" for x in sorted(s))
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{pts}"/>')
        for x in sorted(s):
            parts.append(f'<circle cx="{px(x):.1f}" cy="{py(s[x]):.1f}" r="3" fill="{color}"/>')
        ly = top + 18 * i
        parts.append(f'<line x1="{w - right + 12}" x2="{w - right + 32}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="2"/>')
        parts.append(f'<text x="{w - right + 38}" y="{ly + 4}">{name}</text>')
    parts.append("</svg>")
    Path(out).write_text("\n".join(parts) + "\n")
