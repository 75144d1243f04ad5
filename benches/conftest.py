"""Ratio mode of the benchmark suite: every fastgelu speed case also times a reference kernel in the same
rounds (the `ratio` fixture), and `--ratio-fail=PCT` with `--benchmark-compare` judges the per-round ratios
against the compared run's (fastgelu/_ratios.py: the test, docs/performance.md: the workflow)."""
import time

import pytest

from fastgelu import _ratios

ROUNDS = 21             # measured rounds per case (each: the reference's calls, then fastgelu's)
WARMUP_ROUNDS = 2
ROUND_ELEMENTS = 1 << 20  # a round calls each kernel ceil(ROUND_ELEMENTS / n) times: fixed, so runs compare


def pytest_addoption(parser):
    parser.addoption("--ratio-fail", type=float, metavar="PCT", default=None,
                     help="with --benchmark-compare: fail when a case's speed ratio to its same-run reference "
                          "fell by more than PCT percent beyond the noise of both runs' rounds")


def pytest_collection_modifyitems(config, items):
    """benches/test_processes.py times minutes of whole processes against goals that need a quiet machine
    (issue 13: run it under the quiet lock): timed only when named (`pytest benches/test_processes.py`);
    with --benchmark-disable (CI) it runs briefly as part of `pytest benches`."""
    if config.getoption("benchmark_disable") or any("test_processes" in str(a) for a in config.args):
        return
    skip = pytest.mark.skip(reason="process goals need a quiet machine: run `pytest benches/test_processes.py`")
    for item in items:
        if item.path.name == "test_processes.py":
            item.add_marker(skip)


def calls_per_round(n):
    return max(1, -(-ROUND_ELEMENTS // n))


@pytest.fixture
def ratio(benchmark):
    """ratio(fn, ref, ref_name, elements): pytest-benchmark times rounds of fastgelu's fn, each right after a
    round of the reference ref (same calls per round); the per-round ratios ref time / fn time go into
    extra_info["ratios"]. pytest-benchmark's statistics are per round of extra_info["calls_per_round"] calls."""
    def run(fn, ref, ref_name, elements):
        benchmark.extra_info.update(elements=elements, reference=ref_name)
        if benchmark.disabled:
            ref()
            benchmark(fn)
            return
        k = calls_per_round(elements)
        times = {fn: [], ref: []}

        def timed(f):
            def one_round():
                t0 = time.perf_counter()
                for _ in range(k):
                    f()
                times[f].append(time.perf_counter() - t0)
            return one_round

        benchmark.pedantic(timed(fn), setup=timed(ref), rounds=ROUNDS, warmup_rounds=WARMUP_ROUNDS)
        t_fn, t_ref = times[fn][WARMUP_ROUNDS:], times[ref][WARMUP_ROUNDS:]
        benchmark.extra_info.update(calls_per_round=k, ratios=[float(f"{r / f:.5g}") for r, f in zip(t_ref, t_fn)])
    return run


def _judge(config):
    pct = config.getoption("--ratio-fail")
    bs = getattr(config, "_benchmarksession", None)
    if pct is None or bs is None or bs.disabled:
        return None
    if not bs.compared_mapping:
        raise pytest.UsageError("--ratio-fail needs --benchmark-compare with a saved run to compare against")
    path, old = list(bs.compared_mapping.items())[-1]
    new = [{"fullname": b.fullname, "extra_info": b.extra_info} for b in bs.benchmarks if b]
    ran = {b["fullname"] for b in new}  # cases deselected this time (-k, one file) were not run, not gone
    old_runs = {k: v for k, v in _ratios.ratios_of(old.values()).items() if k in ran}
    new_runs = _ratios.ratios_of(new)
    return path, pct, _ratios.compare(old_runs, new_runs, pct)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    judged = _judge(session.config)
    session.config._ratio_verdicts = judged
    if judged and _ratios.failed(judged[2]) and session.exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, config):
    judged = getattr(config, "_ratio_verdicts", None)
    if judged:
        path, pct, verdicts = judged
        terminalreporter.section(f"speed ratios to same-run references, against {path}")
        for line in _ratios.report(verdicts, pct):
            terminalreporter.write_line(line)
