"""Ratio mode of the benchmark suite: every fastgelu speed case also times a reference kernel in the same
rounds (the `ratio` fixture), and `--ratio-fail=PCT` with `--benchmark-compare` judges the per-round ratios
against the compared run's (fastgelu/bench/ratios.py: the test, docs/performance.md: the workflow)."""
import ctypes
import ctypes.util
import time

import pytest

from fastgelu.bench import ratios, speed

ROUNDS = 6              # measured rounds per pass (each: the reference's calls, then fastgelu's)
PASSES = 4              # passes over every case: the first in its test, the others after the last test
WARMUP_ROUNDS = 1       # per pass
ROUND_ELEMENTS = 1 << 20  # a round calls each kernel ceil(ROUND_ELEMENTS / n) times: fixed, so runs compare


def pytest_addoption(parser):
    parser.addoption("--ratio-fail", type=float, metavar="PCT", default=None,
                     help="with --benchmark-compare: fail when a case's speed ratio to its same-run reference "
                          "fell by more than PCT percent beyond the noise of both runs' rounds")
    parser.addoption("--bench-threads", type=int, metavar="N", default=1,
                     help="threads of fastgelu, PyTorch and ONNX Runtime in benches/test_speed.py (default 1)")


def _steady_allocator():
    """Keep freed blocks in glibc's heap for the whole run. By default malloc returns a large block to the
    kernel when it is freed and maps fresh zeroed pages for the next one, until its adaptive threshold has
    grown past that size: whether a competitor that allocates temporaries (PyTorch's x * sigmoid(1.702 x))
    pays page faults on every call would depend on what the process did before, and its ratio with it
    (docs/performance.md, "The benchmark suite"). True when set (glibc only)."""
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return any(mallopt(m_mmap_threshold, size) for size in (1 << 30, 32 << 20)) and \
        bool(mallopt(m_trim_threshold, 1 << 31))


def pytest_configure(config):
    config._steady_allocator = _steady_allocator()


@pytest.fixture(scope="session")
def bench_threads(request):
    """Every library's thread count in the speed cases, held fixed (--bench-threads). Left to fastgelu's
    load-aware policy, a 2-core machine's thread decisions (this run two threads, the next one) move a case's
    ratio between two runs of one build; one thread is the count a busy machine does not change. The
    threading policy has its own goals (benches/test_processes.py, tools/threads_runs.py)."""
    n = request.config.getoption("--bench-threads")
    if n < 1:
        raise pytest.UsageError(f"--bench-threads must be >= 1, got {n}")
    speed.hold_threads(n)
    yield n
    speed.hold_threads(None)


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


def _rounds(fn, ref, k, rounds, warmup):
    """Per-round ratios ref time / fn time, each round k calls of ref then k calls of fn."""
    out = []
    for i in range(warmup + rounds):
        t0 = time.perf_counter()
        for _ in range(k):
            ref()
        t1 = time.perf_counter()
        for _ in range(k):
            fn()
        t2 = time.perf_counter()
        if i >= warmup:
            out.append(float(f"{(t1 - t0) / (t2 - t1):.5g}"))
    return out


_later = []   # (benchmark, rebuild, k): the cases whose later passes run after the last test


@pytest.fixture
def ratio(benchmark, bench_threads):
    """ratio(fn, ref, ref_name, elements, rebuild=None): pytest-benchmark times rounds of fastgelu's fn, each
    right after a round of the reference ref (same calls per round); the per-round ratios ref time / fn time
    go into extra_info["ratio_passes"], one list per pass. The first pass is this test's; PASSES - 1 more run
    after the last test, spread over the session, so a case's rounds sample the machine's slow phases (a
    shared VM's speed shifts for seconds to minutes, and a case's own test lasts under a second): `rebuild`
    makes (fn, ref) afresh for them, else fn and ref are kept alive until then. pytest-benchmark's statistics are
    the first pass's, per round of extra_info["calls_per_round"] calls."""
    def run(fn, ref, ref_name, elements, rebuild=None):
        benchmark.extra_info.update(elements=elements, reference=ref_name, threads=bench_threads)
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
        benchmark.extra_info.update(calls_per_round=k,
                                    ratio_passes=[[float(f"{r / f:.5g}") for r, f in zip(t_ref, t_fn)]])
        _later.append((benchmark, rebuild if rebuild is not None else (lambda kept=(fn, ref): kept), k))
    return run


def _later_passes():
    """The PASSES - 1 passes over every ratio case after the last test; then extra_info["ratios"]: all rounds."""
    import gc
    for _ in range(PASSES - 1):
        for benchmark, rebuild, k in _later:
            fn, ref = rebuild()
            benchmark.extra_info["ratio_passes"].append(_rounds(fn, ref, k, ROUNDS, WARMUP_ROUNDS))
            del fn, ref
            gc.collect()
    for benchmark, _, _ in _later:
        benchmark.extra_info["ratios"] = [r for p in benchmark.extra_info["ratio_passes"] for r in p]
    _later.clear()


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
    old_runs = {k: v for k, v in ratios.ratios_of(old.values()).items() if k in ran}
    new_runs = ratios.ratios_of(new)
    error = ratios.threads_differ(old.values(), new, set(old_runs) & set(new_runs))
    if error:
        return path, pct, None, error
    return path, pct, ratios.compare(old_runs, new_runs, pct), None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session):
    """After the last test, before pytest-benchmark saves the run: the ratio cases' later passes."""
    yield
    if _later and not session.shouldstop and not session.shouldfail:
        _later_passes()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    judged = _judge(session.config)
    session.config._ratio_verdicts = judged
    if judged and (judged[3] or ratios.failed(judged[2])) and session.exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, config):
    judged = getattr(config, "_ratio_verdicts", None)
    if judged:
        path, pct, verdicts, error = judged
        terminalreporter.section(f"speed ratios to same-run references, against {path}")
        if error:
            terminalreporter.write_line(f"ratio check not made: {error}", red=True)
            return
        for line in ratios.report(verdicts, pct):
            terminalreporter.write_line(line)

