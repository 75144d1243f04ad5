#!/usr/bin/env python3
"""Speed charts and their ranges, from the committed speed tables in docs/data/ (the README's table:
tools/doc_tables.py).

  python tools/plot_speed.py                               # docs/speed-<cpu>.png for every docs/data/speed-*.csv
  python tools/plot_speed.py docs/data/speed-zen4.csv      # one CPU
  python tools/plot_speed.py --summary                     # min-max ratio per (CPU, build, function, spread)

A data file holds one per-CPU table of docs/performance.md, one row per cell: function, dtype, elements, the
competitor the ratio is taken against (vs), build, threads, sigma (1 or 3 for randn, u8 for U(-8, 8)),
fastgelu's Gelem/s and the ratio. Its
leading '#' lines name the CPU, date, commit and the command that measured it (tools/speed_table.py); the
chart repeats them. A chart shows fastgelu's speed over the competitor's (log scale, 1x = even) for every
function with a competitor, per build, randn sigma 1 and 3, 1 and 2 threads. The summary prints each range
as the exact min and max of the table's figures.
"""
import argparse
import csv
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILDS = (("avx512", "AVX-512 build"), ("avx2", "AVX2 build (PyTorch held to AVX2)"))
BARS = ((1, 1, "1 thread, σ=1"), (1, 3, "1 thread, σ=3"), (2, 1, "2 threads, σ=1"), (2, 3, "2 threads, σ=3"))
COLORS = ("#1f77b4", "#9ecae1", "#d62728", "#fc9272")


def load(path):
    """(meta, rows): meta from the '#' lines ('key: value' pairs split on ';'), rows as dicts."""
    meta, body = {"title": ""}, []
    for line in pathlib.Path(path).read_text().splitlines():
        if line.startswith("#"):
            text = line[1:].strip()
            if not meta["title"]:
                meta["title"] = text
            for part in text.split("; "):
                key, sep, value = part.partition(": ")
                if sep and key.isalpha():
                    meta[key] = value
        elif line.strip():
            body.append(line)
    rows = list(csv.DictReader(body))
    for r in rows:
        r["threads"] = int(r["threads"])
        r["sigma"] = int(r["sigma"]) if r["sigma"].isdigit() else r["sigma"]   # 1, 3, or "u8": U(-8, 8)
        r["gelem_s"] = float(r["gelem_s"])
        r["ratio"] = float(r["ratio"]) if r["ratio"] else None
    return meta, rows


def label(r):
    size = "" if r["elements"] == "262144" else f", {int(r['elements']) >> 20}M"
    return f"{r['function']} {r['dtype']}{size}\nvs {r['vs']}"


def plot(path, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    meta, rows = load(path)
    rows = [r for r in rows if r["ratio"] is not None]
    keys = list(dict.fromkeys((r["function"], r["dtype"], r["elements"], r["vs"]) for r in rows))
    cell = {(r["function"], r["dtype"], r["elements"], r["vs"], r["build"], r["threads"], r["sigma"]): r["ratio"]
            for r in rows}
    names = {k: label(dict(zip(("function", "dtype", "elements", "vs"), k))) for k in keys}
    ratios = [r["ratio"] for r in rows]
    lo, hi = min(ratios) / 1.25, max(ratios) * 1.45
    builds = [(b, t) for b, t in BUILDS if any(r["build"] == b for r in rows)]   # AVX2-only CPUs: one panel
    fig, axes = plt.subplots(1, len(builds), figsize=(max(10.0, 6.5 * len(builds)), 0.62 * len(keys) + 2.2), sharey=True,
                             squeeze=False)
    axes = axes[0]
    h = 0.8 / len(BARS)
    for ax, (build, title) in zip(axes, builds):
        for j, ((t, s, name), color) in enumerate(zip(BARS, COLORS)):
            ys = [i + (j - (len(BARS) - 1) / 2) * h for i in range(len(keys))]
            vals = [cell.get((*k, build, t, s)) for k in keys]
            pts = [(y, v) for y, v in zip(ys, vals) if v is not None]
            ax.barh([y for y, _ in pts], [v for _, v in pts], height=h, color=color, label=name,
                    edgecolor="white", linewidth=0.3)
            for y, v in pts:
                ax.text(v * 1.02, y, f"{v:.2f}", va="center", fontsize=6.5)
        ax.axvline(1, color="k", lw=1)
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        ticks = [t for t in (0.5, 0.75, 1, 1.5, 2, 3, 4, 5) if lo <= t <= hi]
        ax.set_xticks(ticks, [f"{t:g}x" for t in ticks])
        ax.minorticks_off()
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("fastgelu's speed over the competitor's (log; right of 1x: fastgelu faster)", fontsize=8)
        ax.grid(axis="x", color="0.85", lw=0.5)
        ax.set_axisbelow(True)
    axes[0].set_yticks(range(len(keys)), [names[k] for k in keys], fontsize=8)
    axes[0].invert_yaxis()
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"{meta.get('cpu', path)}\n{meta.get('date', '')}, commit {meta.get('commit', '?')}; "
                 f"256K elements unless named; command: {meta.get('command', '?')}", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def summary(paths):
    """Exact min-max of each (function, dtype, elements, vs) row's ratios per CPU, build and spread."""
    for path in paths:
        meta, rows = load(path)
        print(f"\n{pathlib.Path(path).name}: {meta.get('cpu', '')}, commit {meta.get('commit', '?')}")
        groups = {}
        for r in rows:
            if r["ratio"] is not None:
                groups.setdefault((r["function"], r["dtype"], r["elements"], r["vs"], r["build"]),
                                  {}).setdefault(r["sigma"], []).append(r["ratio"])
        for (f, dt, n, vs, build), by_sigma in groups.items():
            every = [v for vals in by_sigma.values() for v in vals]
            spans = "  ".join(f"{'U(-8,8)' if s == 'u8' else f'σ={s}'} {min(v):.2f}-{max(v):.2f}x"
                              for s, v in sorted(by_sigma.items(), key=lambda kv: str(kv[0])))
            print(f"  {build:6} {f} {dt} {n} vs {vs}: {spans}  all {min(every):.2f}-{max(every):.2f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="*", help="speed tables (default: docs/data/speed-*.csv)")
    ap.add_argument("--summary", action="store_true", help="print the ranges instead of drawing")
    ap.add_argument("--outdir", default=str(ROOT / "docs"), help="where the PNGs go (default docs/)")
    args = ap.parse_args()
    paths = args.data or sorted(str(p) for p in (ROOT / "docs" / "data").glob("speed-*.csv"))
    if args.summary:
        summary(paths)
        return
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise SystemExit("plotting needs matplotlib: pip install 'fastgelu[plot]'")
    for path in paths:
        plot(path, pathlib.Path(args.outdir) / (pathlib.Path(path).stem + ".png"))


if __name__ == "__main__":
    main()
