"""docs/data/accuracy.csv: the measured accuracy maxima, one row per (function, dtype, build, check).

The check tools write it (`--record`): tools/sweep_f32.py (float32, all 2^32 inputs; --gated: the gated
functions), tools/check_f64.py (float64 against mpmath) and tools/check_more.py (float16 and bfloat16 on all
65,536 inputs; gradients with a random dy). A tool's row replaces the row of the same key, so re-running one
check on one build updates just its rows. docs/accuracy.md's table is generated from this file by
tools/doc_tables.py; tests/test_doc_tables.py holds the two equal. Each row names the kernel generation it
measured (docs/data/kernels.txt): the table leaves out rows of replaced kernels until they are measured again.
"""
import csv
import datetime
import os
import pathlib
import platform

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "docs" / "data" / "accuracy.csv"
FIELDS = ("function", "dtype", "build", "check", "bound", "max_ulp", "worst", "kernels", "cpu", "date")
KEY = FIELDS[:4]
# what each check is, as the table states it (tools/doc_tables.py); the keys are the `check` column's values
CHECKS = {
    "all": "all 2^32 float32 inputs",
    "gated": "every 64th float32 gate x 16 (up, dy) pairs",
    "mpmath": "125,011 inputs against mpmath (50 digits)",
    "all16": "all 65,536 inputs",
    "dy": "40M random x in [-12, 12], dy = +-[1, 2) * 2^k, k in [-20, 20)",
}
HEADER = ("# fastgelu's measured accuracy maxima (ULPs of the result type, gradients in ULPs of the larger of their "
          "two terms times |dy|),\n# written by the check tools' --record option (tools/accuracy_data.py says "
          "which); docs/accuracy.md's table: python tools/doc_tables.py --write\n")


def cpu_name():
    """The CPU as /proc/cpuinfo names it (model name, family and model), and the CPU count."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                info.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    name = info.get("model name") or platform.processor() or platform.machine()
    if "cpu family" in info and "model" in info:
        name += f" (family {info['cpu family']} model {info['model']})"
    return f"{name}, {os.cpu_count()} CPUs"


def load(path=DEFAULT):
    """The rows of `path` as dicts (an empty list when it does not exist yet)."""
    path = pathlib.Path(path)
    if not path.exists():
        return []
    lines = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    return list(csv.DictReader(lines))


def current_kernels():
    """{build: generation} of the kernels as they are now (docs/data/kernels.txt)."""
    text = (ROOT / "docs" / "data" / "kernels.txt").read_text()
    return dict(ln.split() for ln in text.splitlines() if ln.strip() and not ln.startswith("#"))


def record(rows, path=DEFAULT):
    """Put `rows` (dicts with FIELDS but kernels, cpu and date, which are filled in: the build's current kernel
    generation, this CPU, today) into `path`, each replacing the row of the same KEY; the file stays sorted."""
    today = str(datetime.date.today())
    cpu = cpu_name()
    generation = current_kernels()
    table = {tuple(r[k] for k in KEY): r for r in load(path)}
    for r in rows:
        if r["check"] not in CHECKS:
            raise ValueError(f"unknown check {r['check']!r}: one of {', '.join(CHECKS)}")
        r = {k: str(r.get(k, "")) for k in FIELDS} | {"kernels": generation[r["build"]], "cpu": cpu, "date": today}
        table[tuple(r[k] for k in KEY)] = r
    path = pathlib.Path(path)
    with open(path, "w", newline="") as f:
        f.write(HEADER)
        w = csv.DictWriter(f, FIELDS, lineterminator="\n")
        w.writeheader()
        for key in sorted(table):
            w.writerow(table[key])
    print(f"recorded {len(rows)} row(s) in {path}")
