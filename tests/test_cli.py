"""python -m fastgelu info | check | bench: each runs and says what it should."""
import subprocess
import sys

import pytest

import fastgelu
from fastgelu import __main__ as cli


def run(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "fastgelu", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_info_matches_config():
    res = run("info")
    assert res.returncode == 0, res.stderr
    cfg = fastgelu.get_config()
    for key in ("version", "isa", "isa_available", "openmp", "num_threads", "numpy"):
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
    assert cli.main(["check"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_bench_quick_report(tmp_path):
    res = run("bench", "--quick")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "Gelem/s" in out and "Targets" in out
    assert "none    fwd  float32     3,072" in out and "262,144" in out
    assert "vs numpy" in out  # SciPy is in the test extra
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
