"""tools/p5_table.py times issue 42's workloads through the package's calls (p5 of shuffled single calls, one
process per build and thread count, one per library beyond one thread): it runs, and its table has a line per
build and thread count with a figure in every cell the workload has."""
import os
import re
import subprocess
import sys

import pytest

from fastgelu import _dispatch

TOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "p5_table.py")


def test_p5_table_runs_and_fills_every_cell():
    isas = [i for i in _dispatch.available() if i != "generic"]
    if not isas:
        pytest.skip("no SIMD build on this CPU")
    r = subprocess.run([sys.executable, TOOL, "--isa", isas[0], "--threads", "1,2", "--rounds", "2", "-n", "4096"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith(f"| {isas[0]}, ")]
    assert [row.split("|")[1].strip() for row in rows] == [f"{isas[0]}, 1T", f"{isas[0]}, 2T"], r.stdout
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")[1:]]
        assert len(cells) == 13, row
        # fastgelu's own time in every cell; a ratio where the competitor is installed
        assert all(re.fullmatch(r"(\d+\.\d\dx|-) \(\d+\.\d{3}\)", c) for c in cells), row
