"""python -m fastgelu info | check | bench: each runs and says what it should."""
import subprocess
import sys

import numpy as np
import pytest

import fastgelu
from fastgelu.__main__ import main
from fastgelu.bench import cli


def run(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "fastgelu", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_info_matches_config():
    res = run("info")
    assert res.returncode == 0, res.stderr
    cfg = fastgelu.get_config()
    for key in ("version", "isa", "isa_available", "openmp", "build", "num_threads", "numpy"):
        assert key in res.stdout
    assert cfg["isa"] in res.stdout and cfg["version"] in res.stdout


def test_check_passes_and_prints_every_row():
    res = run("check")
    assert res.returncode == 0, res.stdout + res.stderr
    for name in ("gelu ", "gelu_tanh ", "gelu_sigmoid ", "gelu_grad ", "gelu_tanh_grad ", "gelu_sigmoid_grad "):
        assert res.stdout.count(name) == 2  # float32 and float64 rows
    assert "all bounds hold" in res.stdout


def test_check_fails_when_a_bound_is_exceeded(monkeypatch, capsys):
    from fastgelu import _check
    monkeypatch.setitem(_check.BOUND, __import__("numpy").float32, 0.0)
    assert main(["check"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_bench_quick_report(tmp_path):
    res = run("bench", "--quick")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "Gelem/s" in out and "Speed goals" in out
    assert "issue" not in out.lower() and "Targets" not in out  # no tracker numbers in a user's report
    assert "3,072" in out and "262,144" in out and "randn*3" in out  # wide inputs measured too
    assert "vs numpy" in out  # SciPy is in the test extra
    assert "Threads: float32 exact forward" in out and "from 1 to" in out  # thread scaling
    assert "[" in res.stderr or "it/s" in res.stderr or "row" in res.stderr  # progress on stderr


def test_bench_plot(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "bench.png"
    res = run("bench", "--quick", "--plot", str(png))
    assert res.returncode == 0, res.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_usage_errors():
    assert run().returncode == 2
    assert run("bench", "--nope").returncode == 2


FAKE = {("none", "fwd", np.float32, 3072, 1): {"fastgelu": 1.5, "numpy": 0.5},
        ("none", "fwd", np.float64, 262144, 3): {"fastgelu": 12.25, "numpy": 0.25, "torch": 3.0}}
GOALS = [("f32 exact fwd 256K vs torch", "-", ">= 1.5x", None),
         ("a longer goal text than the column would hold at a fixed width", "123.45 KiB", "< 1024 KiB", True)]


def _columns(lines):
    """Start offsets of each whitespace-separated cell, per line."""
    import re
    return [[m.start() for m in re.finditer(r"\S+", ln)] for ln in lines]


def test_report_aligns_columns_and_says_what_is_missing(monkeypatch):
    real = cli.importlib.util.find_spec
    monkeypatch.setattr(cli.importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    text = cli.report(FAKE, GOALS, quick=True)
    lines = text.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("variant"))
    table = lines[head:head + 3]
    ends = [[m.end() for m in __import__("re").finditer(r"\S+", ln)] for ln in table]
    assert len({e[-1] for e in ends}) == 1 and len({e[5] for e in ends}) == 1, table  # right-aligned
    assert "vs torch" in table[0] and table[1].rstrip().endswith("-")
    assert "torch is not installed" in text
    assert "download.pytorch.org/whl/cpu" in text and "pip install torch\n" not in text + "\n"
    goals = lines[lines.index("Speed goals (quick run: smaller sizes than the full run)") + 1:]
    assert len({ln.index(">= 1.5x") if ">= 1.5x" in ln else ln.index("< 1024") for ln in goals[1:3]}) == 1
    assert "not measured" in goals[1] and "issue" not in text.lower()


def test_serial_build_says_so(monkeypatch, capsys):
    cfg = dict(fastgelu.get_config(), openmp=False)
    monkeypatch.setattr(fastgelu, "get_config", lambda: cfg)
    assert "SERIAL BUILD" in cli.report(FAKE, GOALS, quick=False)
    assert fastgelu.get_config()["build"].startswith("parallel" if fastgelu.ufuncs._kernels.OPENMP
                                                          else "SERIAL")


def test_source_folder_import_is_a_clear_error(tmp_path):
    """The uncompiled source folder (what `python -m pytest` in a checkout imports) says what to run."""
    import pathlib
    import shutil
    src = pathlib.Path(fastgelu.__file__).parent
    shutil.copytree(src, tmp_path / "fastgelu", ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    import os
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}  # conftest sets it; a user has not
    res = subprocess.run([sys.executable, "-c", "import fastgelu"], cwd=tmp_path, capture_output=True, text=True,
                         env=env)
    assert res.returncode == 1 and "ImportError" in res.stderr
    assert "compiled kernels are missing" in res.stderr and "pip install -e ." in res.stderr
