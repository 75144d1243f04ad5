"""Ratio mode of the benchmark suite: every fastgelu speed case also times a reference kernel in the same
rounds (the `ratio` fixture), and `--ratio-fail=PCT` with `--benchmark-compare` judges the per-round ratios
against the compared run's (fastgelu/bench/ratios.py: the test; docs/performance.md: the method and workflow).
A case the run flags SLOWER is re-timed in fresh processes before the verdict stands (`_confirm`)."""
import ctypes
import ctypes.util
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

import pytest

from fastgelu.bench import ratios, speed

FIRST_ROUNDS = 6        # measured rounds of a case's first pass, in its test (pytest-benchmark's table is these)
ROUNDS = 3              # measured rounds of every later pass (each: the reference's calls, then fastgelu's)
PASSES = 12             # passes over every case: the first in its test, the others after the last test
WARMUP_ROUNDS = 1       # per pass
ROUND_ELEMENTS = 1 << 20  # a round calls each kernel ceil(ROUND_ELEMENTS / n) times: fixed, so runs compare
KEEP_ELEMENTS = 1 << 22   # a case up to this size keeps its arrays between passes; a larger one rebuilds them
CONFIRM_PROCESSES = 3   # fresh processes, one after another, that re-time the flagged cases
CONFIRM_PASSES = 4      # passes in each: as many as start within CONFIRM_SPAN seconds, at least 2
CONFIRM_SPACING = 4.0   # seconds from one confirmation pass's start to the next's
CONFIRM_SPAN = 12.0


def pytest_addoption(parser):
    parser.addoption("--ratio-fail", type=float, metavar="PCT", default=None,
                     help="with --benchmark-compare: fail when a case's speed ratio to its same-run reference "
                          "fell by more than PCT percent beyond the noise of both runs' passes, and the fall "
                          "is confirmed in fresh processes")
    parser.addoption("--ratio-confirm", type=int, metavar="N", default=CONFIRM_PROCESSES,
                     help=f"fresh processes that re-time the cases --ratio-fail flags (default "
                          f"{CONFIRM_PROCESSES}; 0: the first verdict stands)")
    parser.addoption("--ratio-confirm-out", metavar="PATH", default=None,
                     help="internal: this run re-times the selected ratio cases for a confirmation and "
                          "writes their passes to PATH")
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


@pytest.hookimpl(trylast=True)  # after pytest-benchmark's, which loads the run to compare against
def pytest_configure(config):
    config._steady_allocator = _steady_allocator()
    pct, bs = config.getoption("--ratio-fail"), getattr(config, "_benchmarksession", None)
    if pct is not None and pct < 0:
        raise pytest.UsageError(f"--ratio-fail must be >= 0, got {pct}")
    if pct is not None and bs is not None and not bs.disabled and not bs.compared_mapping:
        raise pytest.UsageError("--ratio-fail needs --benchmark-compare with a saved run to compare against")
    if config.getoption("--ratio-confirm") < 0:
        raise pytest.UsageError(f"--ratio-confirm must be >= 0, got {config.getoption('--ratio-confirm')}")


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


class _Case:
    """One ratio case for the passes after its test: its (fn, ref) kept, or made afresh by `rebuild` for each
    pass when its arrays are too large to keep."""

    def __init__(self, name, fn, ref, rebuild, elements, record):
        self.name, self.k, self.record = name, calls_per_round(elements), record
        self.rebuild = rebuild if rebuild is not None and elements > KEEP_ELEMENTS else None
        self.kept = None if self.rebuild else (fn, ref)

    def one_pass(self):
        fn, ref = self.kept or self.rebuild()
        self.record.append(_rounds(fn, ref, self.k, ROUNDS, WARMUP_ROUNDS))
        if self.rebuild:
            del fn, ref
            gc.collect()


_cases = []   # the ratio cases, in test order, whose later passes run after the last test


@pytest.fixture
def ratio(request, benchmark, bench_threads):
    """ratio(fn, ref, ref_name, elements, rebuild=None): pytest-benchmark times rounds of fastgelu's fn, each
    right after a round of the reference ref (same calls per round); the per-round ratios ref time / fn time
    go into extra_info["ratio_passes"], one list per pass. The first pass is this test's; PASSES - 1 more run
    after the last test, so that a case's passes sample the machine's phases over the whole run (a shared
    VM's speed shifts for seconds to minutes, and a case's own test lasts under a second). fn and ref are kept
    alive for them, or, above KEEP_ELEMENTS, `rebuild` makes them afresh for each. pytest-benchmark's
    statistics are the first pass's, per round of extra_info["calls_per_round"] calls. In a confirmation's
    process (--ratio-confirm-out) nothing is timed here: `_confirmation_passes` times the case later."""
    def run(fn, ref, ref_name, elements, rebuild=None):
        if request.config.getoption("--ratio-confirm-out"):
            _cases.append(_Case(request.node.nodeid, fn, ref, rebuild, elements, []))
            return
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

        benchmark.pedantic(timed(fn), setup=timed(ref), rounds=FIRST_ROUNDS, warmup_rounds=WARMUP_ROUNDS)
        t_fn, t_ref = times[fn][WARMUP_ROUNDS:], times[ref][WARMUP_ROUNDS:]
        passes = [[float(f"{r / f:.5g}") for r, f in zip(t_ref, t_fn)]]
        benchmark.extra_info.update(calls_per_round=k, ratio_passes=passes)
        _cases.append(_Case(benchmark.fullname, fn, ref, rebuild, elements, passes))
    return run


def _later_passes(session):
    """The PASSES - 1 passes over every ratio case after the last test; then extra_info["ratios"]: all
    rounds."""
    for _ in range(PASSES - 1):
        for case in _cases:
            case.one_pass()
    for b in _benchmarks(session):
        if "ratio_passes" in b.extra_info:
            b.extra_info["ratios"] = [r for p in b.extra_info["ratio_passes"] for r in p]


def _confirmation_passes(path):
    """In a confirmation's process: CONFIRM_PASSES passes over its cases, their starts CONFIRM_SPACING
    seconds apart (phases last seconds: passes back to back would sample one), or when a pass takes longer
    (many cases flagged, a slow build), those that start within CONFIRM_SPAN seconds, at least two; written
    to path as JSON {case: [pass, ...]}."""
    start = time.perf_counter()
    for i in range(CONFIRM_PASSES):
        if i >= 2 and time.perf_counter() - start > CONFIRM_SPAN:
            break
        time.sleep(max(0.0, start + i * CONFIRM_SPACING - time.perf_counter()))
        for case in _cases:
            case.one_pass()
    with open(path, "w") as f:
        json.dump({case.name: case.record for case in _cases}, f)


def _benchmarks(session):
    bs = getattr(session.config, "_benchmarksession", None)
    return [b for b in bs.benchmarks if b] if bs is not None else []


def _confirm(config, cases):
    """Re-times `cases` (node ids) in config.getoption("--ratio-confirm") fresh pytest processes, one after
    another (`_confirmation_passes`); (case -> passes, how they were taken, or why not). A fresh process draws afresh what one process keeps (its arrays' placement, its libraries' state),
    and the processes spread the passes over about a minute."""
    runs = {c: [] for c in cases}
    n = config.getoption("--ratio-confirm")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n):
            out = os.path.join(tmp, f"confirm{i}.json")
            cmd = [sys.executable, "-m", "pytest", *cases, "-q", "-p", "no:cacheprovider", "--benchmark-disable",
                   f"--import-mode={config.option.importmode}", f"--rootdir={config.rootpath}",
                   f"--bench-threads={config.getoption('--bench-threads')}", f"--ratio-confirm-out={out}"]
            if config.inipath:
                cmd.append(f"--config-file={config.inipath}")
            done = subprocess.run(cmd, cwd=config.rootpath, capture_output=True, text=True)
            if done.returncode != 0 or not os.path.exists(out):
                tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
                return {}, (f"not made: confirmation process {i + 1} of {n} exited {done.returncode}: "
                            + " / ".join(tail))
            with open(out) as f:
                for case, passes in json.load(f).items():
                    runs[case] += passes
    return runs, (f"re-timed in {n} fresh process(es), {max(map(len, runs.values()))} passes over "
                  f"{time.perf_counter() - t0:.0f} s")


def _judge(session):
    """None, or (compared path, pct, verdicts, confirmations, how, error): this run against the compared
    one, the flagged cases re-timed (their passes saved in extra_info["ratio_confirmation"])."""
    config = session.config
    pct = config.getoption("--ratio-fail")
    bs = getattr(config, "_benchmarksession", None)
    if pct is None or bs is None or bs.disabled:
        return None
    path, old = list(bs.compared_mapping.items())[-1]
    benchmarks = _benchmarks(session)
    new = [{"fullname": b.fullname, "extra_info": b.extra_info} for b in benchmarks]
    ran = {b["fullname"] for b in new}  # cases deselected this time (-k, one file) were not run, not gone
    old_runs = {k: v for k, v in ratios.ratios_of(old.values()).items() if k in ran}
    new_runs = ratios.ratios_of(new)
    error = ratios.threads_differ(old.values(), new, set(old_runs) & set(new_runs))
    if error:
        return path, pct, None, None, "", error
    verdicts = ratios.compare(old_runs, new_runs, pct)
    cases = ratios.flagged(verdicts)
    if not cases or config.getoption("--ratio-confirm") < 1:
        return path, pct, verdicts, [], "confirmation off (--ratio-confirm=0)" if cases else "", None
    runs, how = _confirm(config, cases)
    for b in benchmarks:
        if runs.get(b.fullname):
            b.extra_info["ratio_confirmation"] = runs[b.fullname]
    return path, pct, verdicts, ratios.confirm(verdicts, old_runs, runs, pct), how, None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session):
    """After the last test, before pytest-benchmark saves the run: the ratio cases' later passes, the verdict
    and the confirmation of what it flags (so that the saved run holds the confirmation's passes); in a
    confirmation's process, its passes."""
    yield
    if not _cases or session.shouldstop or session.shouldfail:
        return
    out = session.config.getoption("--ratio-confirm-out")
    if out:
        _confirmation_passes(out)
    else:
        _later_passes(session)
        session.config._ratio_verdicts = _judge(session)
    _cases.clear()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    judged = getattr(session.config, "_ratio_verdicts", None)
    if judged and session.exitstatus == 0:
        _, _, verdicts, confirmations, _, error = judged
        if error or ratios.failed(ratios.settle(verdicts, confirmations)):
            session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, config):
    judged = getattr(config, "_ratio_verdicts", None)
    if judged:
        path, pct, verdicts, confirmations, how, error = judged
        terminalreporter.section(f"speed ratios to same-run references, against {path}")
        if error:
            terminalreporter.write_line(f"ratio check not made: {error}", red=True)
            return
        for line in ratios.report(verdicts, pct, confirmations=confirmations, how=how):
            terminalreporter.write_line(line)
