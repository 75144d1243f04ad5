#!/usr/bin/env python3
"""The documentation's generated tables, from the data files under docs/data/.

  python tools/doc_tables.py             # print both tables
  python tools/doc_tables.py --write     # put them into README.md and docs/accuracy.md
  python tools/doc_tables.py --check     # exit 1 where a page's table differs from its data

- README.md's speed table, from docs/data/speed-*.csv (written by tools/speed_table.py --csv): one row per
  CPU, for the build that CPU runs by default (its file's `default:`), one thread, 256K elements, randn
  sigma = 1 and 3 and U(-8, 8). A file's rows are shown only where its `kernels:` line names, for that build, the
  generation docs/data/kernels.txt names as current: a kernel change bumps that number, and the figures
  measured before it drop out of the README until the CPU is measured again.
- docs/performance.md's tables per CPU, from the same files: every build measured at its current kernels.
- docs/accuracy.md's table of measured maxima, from docs/data/accuracy.csv (written by the check tools'
  --record: tools/accuracy_data.py), its rows at the current kernels only, as for speed.

Each table stands in its page between a `<!-- begin generated: NAME ... -->` line and an
`<!-- end generated: NAME -->` line; tests/test_doc_tables.py holds the pages equal to this tool's output.
"""
import argparse
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = ROOT / "docs" / "data"
sys.path.insert(0, str(HERE))
import accuracy_data  # noqa: E402
import plot_speed  # noqa: E402

BUILD_NAMES = {"avx512": "AVX-512", "avx2": "AVX2", "generic": "baseline"}

# README speed columns: (heading, function, dtype, spread: randn sigma 1 or 3, or "u8" for U(-8, 8)), one
# thread, 256K elements
SPEED_COLUMNS = (
    ("exact GELU σ=1", "gelu", "float32", 1), ("σ=3", "gelu", "float32", 3), ("U(-8,8)", "gelu", "float32", "u8"),
    ("exact gradient σ=1", "gelu_grad", "float32", 1), ("σ=3", "gelu_grad", "float32", 3),
    ("tanh form σ=1", "gelu_tanh", "float32", 1), ("σ=3", "gelu_tanh", "float32", 3),
    ("U(-8,8)", "gelu_tanh", "float32", "u8"),
    ("gated `gelu_mul` σ=1", "gelu_mul", "float32", 1), ("float64 σ=1", "gelu", "float64", 1),
)


current_kernels = accuracy_data.current_kernels


def measured_kernels(meta):
    """{build: generation} a speed file's `kernels:` line names ("avx512 2, avx2 1"); {} without one."""
    return dict(part.split() for part in meta.get("kernels", "").split(",") if part.strip())


def speed_rows(paths, current):
    """(label, cells) for each file whose default build was measured at that build's current kernels."""
    rows = []
    for path in paths:
        meta, data = plot_speed.load(path)
        build = meta.get("default")
        if build is None or measured_kernels(meta).get(build) != current.get(build):
            continue
        cells = []
        for _, function, dtype, sigma in SPEED_COLUMNS:
            ratio = [r["ratio"] for r in data if (r["function"], r["dtype"], r["build"], r["threads"],
                                                  r["sigma"], r["elements"]) ==
                     (function, dtype, build, 1, sigma, "262144") and r["ratio"] is not None]
            cells.append(f"{ratio[0]:.2f}x" if ratio else "–")
        rows.append((f"{meta.get('short', pathlib.Path(path).stem)} ({BUILD_NAMES[build]})", cells))
    return rows


def speed_table(paths=None, current=None):
    paths = paths or sorted(DATA.glob("speed-*.csv"))
    rows = speed_rows(paths, current or current_kernels())
    lines = ["| CPU (build it runs) | " + " | ".join(h for h, *_ in SPEED_COLUMNS) + " |",
             "|---|" + "---:|" * len(SPEED_COLUMNS)]
    lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in rows]
    return "\n".join(lines)


FUNCTION_NAMES = {"gelu": "exact GELU", "gelu_grad": "exact gradient", "gelu_tanh": "tanh form",
                  "gelu_tanh_grad": "tanh gradient", "gelu_sigmoid": "sigmoid form",
                  "gelu_sigmoid_grad": "sigmoid gradient", "gelu_mul": "gated, exact", "gelu_tanh_mul": "gated, tanh"}
SPREADS = ((1, "σ=1"), (3, "σ=3"), ("u8", "U(-8,8)"))


def cpu_tables(paths=None, current=None):
    """docs/performance.md's table per CPU and build, for every build measured at its current kernels: Gelem/s
    and the ratio, 1 and 2 threads, each spread."""
    paths = paths or sorted(DATA.glob("speed-*.csv"))
    current = current or current_kernels()
    out = []
    for path in paths:
        meta, data = plot_speed.load(path)
        measured = measured_kernels(meta)
        builds = [b for b in BUILD_NAMES if b in measured and measured[b] == current.get(b)]
        if not builds:
            continue
        name = pathlib.Path(path).name
        software = [ln.rsplit("; ", 1)[-1] for ln in pathlib.Path(path).read_text().splitlines()
                    if ln.startswith("# date:")]
        command, _, how = meta.get("command", "").partition("  (")
        out += [f"### {meta.get('short', pathlib.Path(path).stem)}", "",
                f"{meta.get('cpu', '')}; measured {meta.get('date', '')} with {', '.join(software)}; "
                f"`{command}` ({how.rstrip(')')}). Data: [data/{name}](data/{name}).", ""]
        threads = sorted({r["threads"] for r in data})
        for build in builds:
            rows = [r for r in data if r["build"] == build]
            note = " (the CPU's default)" if build == meta.get("default") else \
                " (as an AVX2-only CPU runs it; PyTorch held to its AVX2 kernels)" if build == "avx2" else ""
            out += [f"{BUILD_NAMES[build]} build{note}: Gelem/s (speed over the competitor's)", "",
                    "| function | dtype | elements | vs | " + " | ".join(
                        f"{t}T {name}" for t in threads for _, name in SPREADS) + " |",
                    "|---|---|---:|---|" + "---:|" * (len(threads) * len(SPREADS))]
            keys = list(dict.fromkeys((r["function"], r["dtype"], r["elements"], r["vs"]) for r in rows))
            cell = {(r["function"], r["dtype"], r["elements"], r["vs"], r["threads"], r["sigma"]): r for r in rows}
            for key in keys:
                cells = []
                for t in threads:
                    for sigma, _ in SPREADS:
                        r = cell.get((*key, t, sigma))
                        cells.append("–" if r is None else f"{r['gelem_s']:.2f}"
                                     + (f" ({r['ratio']:.2f}x)" if r["ratio"] is not None else ""))
                f, dt, n, vs = key
                out.append(f"| {FUNCTION_NAMES.get(f, f)} | {dt} | {int(n):,} | {vs or '–'} | "
                           + " | ".join(cells) + " |")
            out.append("")
    return "\n".join(out).rstrip()


# accuracy table rows: (label, function, dtype, check); columns: the builds
ACCURACY_ROWS = [(f"`{f}`", f, "float32", "all") for f in
                 ("gelu", "gelu_tanh", "gelu_sigmoid", "gelu_grad", "gelu_tanh_grad", "gelu_sigmoid_grad")]
ACCURACY_ROWS += [(f"`{f}`, any dy", f, "float32", "dy") for f in ("gelu_grad", "gelu_tanh_grad",
                                                                    "gelu_sigmoid_grad")]
ACCURACY_ROWS += [(f"`{f}`", f, "float32", "gated") for f in
                  ("gelu_mul", "gelu_tanh_mul", "gelu_sigmoid_mul", "gelu_mul_grad", "gelu_tanh_mul_grad",
                   "gelu_sigmoid_mul_grad")]
ACCURACY_ROWS += [(f"`{f}`", f, "float64", "mpmath") for f in
                  ("gelu", "gelu_tanh", "gelu_sigmoid", "gelu_grad", "gelu_tanh_grad", "gelu_sigmoid_grad")]
ACCURACY_ROWS += [(f"`{f}`", f, t, "all16") for t in ("float16", "bfloat16") for f in
                  ("gelu", "gelu_tanh", "gelu_sigmoid", "gelu_grad", "gelu_tanh_grad", "gelu_sigmoid_grad")]
ACCURACY_BUILDS = ("avx512", "avx2", "generic")


def accuracy_table(path=accuracy_data.DEFAULT):
    """The measured maxima per (function, dtype, check) and build; a blank where none is recorded."""
    current = current_kernels()
    recorded = {(r["function"], r["dtype"], r["check"], r["build"]): r for r in accuracy_data.load(path)
                if r["kernels"] == current.get(r["build"])}    # rows of replaced kernels: not shown
    lines = ["| function | dtype | inputs | bound | " + " | ".join(
                 f"{BUILD_NAMES[b]} build" + (" (and NEON)" if b == "avx2" else "") for b in ACCURACY_BUILDS)
             + " |", "|---|---|---|---:|" + "---:|" * len(ACCURACY_BUILDS)]
    for label, function, dtype, check in ACCURACY_ROWS:
        got = [recorded.get((function, dtype, check, b)) for b in ACCURACY_BUILDS]
        if not any(got):
            continue
        bound = next(r["bound"] for r in got if r)
        cells = []
        for r in got:
            if r is None:
                cells.append("")
            elif check == "all":    # the whole input range: the worst input is worth naming
                cells.append(f"{r['max_ulp']} at {r['worst']}")
            else:
                cells.append(r["max_ulp"])
        lines.append(f"| {label} | {dtype} | {accuracy_data.CHECKS[check]} | {bound} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


PAGES = {"speed": (ROOT / "README.md", speed_table), "cpus": (ROOT / "docs" / "performance.md", cpu_tables),
         "accuracy": (ROOT / "docs" / "accuracy.md", accuracy_table)}


def splice(text, name, table):
    """`text` with the lines between its begin/end markers for `name` replaced by `table`."""
    lines = text.splitlines()
    begin = [i for i, ln in enumerate(lines) if ln.startswith(f"<!-- begin generated: {name} ")]
    end = [i for i, ln in enumerate(lines) if ln.startswith(f"<!-- end generated: {name} ")]
    if len(begin) != 1 or len(end) != 1 or end[0] < begin[0]:
        raise ValueError(f"expected one '<!-- begin generated: {name} ...' line and one '<!-- end generated: "
                         f"{name} -->' after it")
    return "\n".join(lines[:begin[0] + 1] + table.splitlines() + lines[end[0]:]) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="put the tables into their pages")
    ap.add_argument("--check", action="store_true", help="exit 1 where a page differs from its data")
    args = ap.parse_args()
    stale = []
    for name, (page, make) in PAGES.items():
        table = make()
        if not (args.write or args.check):
            print(f"{name} ({page.relative_to(ROOT)}):\n{table}\n")
            continue
        text = page.read_text()
        new = splice(text, name, table)
        if new != text:
            stale.append(str(page.relative_to(ROOT)))
            if args.write:
                page.write_text(new)
    if args.write:
        print("rewrote " + ", ".join(stale) if stale else "the pages hold the tables already")
    elif args.check and stale:
        print("tables that differ from docs/data: " + ", ".join(stale) + " (python tools/doc_tables.py --write)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
