"""Shared-machine helpers (fastgelu.bench.contention): the busy-machine verdict of the bench report and the
multi-process measurement it runs (its speed goals are in benches/test_processes.py)."""
import multiprocessing as mp
import time

import numpy as np
import pytest

from fastgelu.__main__ import main
from fastgelu.bench import cli, contention


def test_busy_verdict():
    assert contention.busy_verdict() is None
    assert contention.busy_verdict(others=0.2, scaling=1.95) is None
    line = contention.busy_verdict(others=1.5)
    assert line.startswith("BUSY machine (other processes kept 1.5 of") and "set_num_threads(1)" in line
    assert "\n" not in line
    assert "2 threads ran 0.90x the speed of 1" in contention.busy_verdict(scaling=0.9)


def test_watch_sees_another_process():
    if contention._cpu_seconds() is None:
        pytest.skip("no /proc/stat")
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    spinner = ctx.Process(target=contention._spin, args=(stop,))
    spinner.start()
    try:
        time.sleep(0.5)  # let it start up
        watch = contention.Watch()
        time.sleep(1.0)
        others = watch.others()  # asked before the child is reaped: its CPU time is not ours
    finally:
        stop.set()
        spinner.join(timeout=30)
    assert others > 0.5


def test_aggregate_runs_spawned_processes():
    assert contention.aggregate(2, 1, seconds=0.2) > 0
    assert contention.aggregate(1, 0, seconds=0.2, adaptive=False) > 0


@pytest.mark.parametrize("verdict", [None, "BUSY machine (a test): re-run when quiet."])
def test_bench_report_says_busy_instead_of_missed(monkeypatch, capsys, verdict):
    monkeypatch.setattr(cli, "workloads", lambda quick: [("none", "fwd", np.float32, 3072, 1)])
    monkeypatch.setattr(cli, "targets", lambda results, quick, bar: [("a goal", "0.50x", ">= 1x", False)])
    monkeypatch.setattr(contention, "bench_targets", lambda quick: [("processes", "0.90x", ">= 0.85x", True)])
    monkeypatch.setattr(contention.Watch, "verdict", lambda self: verdict)
    assert main(["bench", "--quick"]) == 0
    out = capsys.readouterr().out
    goal = next(line for line in out.splitlines() if "a goal" in line)
    if verdict:
        assert goal.endswith("busy") and verdict in out and "MISSED" not in out
    else:
        assert goal.endswith("MISSED") and "BUSY" not in out
    assert any("processes" in line and line.endswith("met") for line in out.splitlines())
