"""Concurrency: many Python threads, threadpoolctl, PyTorch's OpenMP, fork after a parallel region.

Shared helpers: tests/hostile_common.py. Values are compared bit for bit against the same computation on a
fresh contiguous copy."""

import concurrent.futures as cf
import importlib
import multiprocessing as mp
import os
import signal
import threading
import time

import numpy as np
import pytest

import fastgelu
from fastgelu import ufuncs

from hostile_common import (
    ENTRIES, ENTRY_IDS, ENTRY_UFUNC, GRAD, ISAS, NAMES, TIMEOUT, assert_same, bits, dy_sample, sample, ucall)


def _ufs(isa):
    return importlib.import_module(f"fastgelu._kernels_{isa}").UFUNCS



# ======================================================================================================
# 3. Concurrency
# ======================================================================================================

def _run_in_daemon_threads(funcs, timeout=TIMEOUT):
    """Run each callable in its own daemon thread; return results; fail (not hang) on a timeout."""
    results = [None] * len(funcs)
    errors = []
    start = threading.Barrier(len(funcs))

    def runner(i, f):
        try:
            start.wait(timeout)
            results[i] = f()
        except BaseException as e:  # noqa: B902 - reported below
            errors.append((i, e))

    threads = [threading.Thread(target=runner, args=(i, f), daemon=True) for i, f in enumerate(funcs)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    alive = [i for i, t in enumerate(threads) if t.is_alive()]
    if alive:
        pytest.fail(f"threads {alive} still running after {timeout} s: hang")
    if errors:
        raise errors[0][1]
    return results


def _serial_results(xs, dys):
    return {(e, k): ENTRIES[e](xs[k], dys[k]) for e in ENTRY_IDS for k in xs}


@pytest.fixture(scope="module")
def shared_data():
    xs = {"small": sample(np.float32, 3000), "large": sample(np.float32, 120_000),
          "f64": sample(np.float64, 50_000)}
    dys = {k: dy_sample(v.dtype, v.size) for k, v in xs.items()}
    for a in list(xs.values()) + list(dys.values()):
        a.flags.writeable = False
    return xs, dys, _serial_results(xs, dys)


def test_many_threads_shared_input_private_outputs(shared_data):
    xs, dys, want = shared_data
    jobs = [(e, k) for e in ENTRY_IDS for k in xs]

    def work(seed):
        order = np.random.default_rng(seed).permutation(len(jobs))
        bad = []
        for rep in range(2):
            for j in order:
                e, k = jobs[j]
                out = np.empty_like(xs[k])
                res = ENTRIES[e](xs[k], dys[k], out=out)
                if res is not out or not np.array_equal(bits(out), bits(want[e, k])):
                    bad.append((e, k, rep))
                if not np.array_equal(bits(ENTRIES[e](xs[k], dys[k])), bits(want[e, k])):
                    bad.append((e, k, "new"))
        return bad

    with cf.ThreadPoolExecutor(max_workers=16) as ex:
        futures = [ex.submit(work, s) for s in range(16)]
        bad = [b for f in cf.as_completed(futures, timeout=TIMEOUT) for b in f.result(timeout=TIMEOUT)]
    assert not bad, bad[:10]


def test_many_threads_private_arrays_in_place(shared_data):
    xs, dys, want = shared_data

    def work(seed):
        bad = []
        for e in np.random.default_rng(seed).permutation(ENTRY_IDS):
            for k in xs:
                mine = xs[k].copy()
                ENTRIES[e](mine, dys[k], out=mine)
                if not np.array_equal(bits(mine), bits(want[e, k])):
                    bad.append((e, k))
                if ENTRY_UFUNC[e] in GRAD and (e.startswith("ufuncs") or e.endswith("+dy")):
                    d = dys[k].copy()
                    ENTRIES[e](xs[k], d, out=d)
                    if not np.array_equal(bits(d), bits(want[e, k])):
                        bad.append((e, k, "over dy"))
        return bad

    with cf.ThreadPoolExecutor(max_workers=12) as ex:
        bad = [b for r in ex.map(work, range(12), timeout=TIMEOUT) for b in r]
    assert not bad, bad[:10]


def test_many_threads_every_isa_at_once():
    x = sample(np.float64, 60_000)
    dy = dy_sample(np.float64, 60_000)
    want = {(isa, n): ucall(_ufs(isa)[n], x, dy) for isa in ISAS for n in NAMES}

    def work(i):
        isa = ISAS[i % len(ISAS)]
        return [(isa, n) for n in NAMES if not np.array_equal(bits(ucall(_ufs(isa)[n], x, dy)),
                                                              bits(want[isa, n]))]

    bad = [b for r in _run_in_daemon_threads([lambda i=i: work(i) for i in range(9)]) for b in r]
    assert not bad, bad


@pytest.fixture
def restore_threads():
    before = fastgelu.get_num_threads()
    yield
    fastgelu.set_num_threads(max(1, before))


@pytest.mark.parametrize("limit", [1, 2])
def test_under_threadpool_limits(limit, shared_data, restore_threads):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    xs, dys, want = shared_data
    with threadpoolctl.threadpool_limits(limit):
        assert fastgelu.get_num_threads() <= limit
        for e in ENTRY_IDS:
            for k in xs:
                assert_same(ENTRIES[e](xs[k], dys[k]), want[e, k], f"{e} {k} under limit {limit}")

    def work():  # threadpool_limits applies per calling thread: set it in each worker as well
        bad = []
        with threadpoolctl.threadpool_limits(limit, user_api="openmp"):
            n = fastgelu.get_num_threads()
            for e in ENTRY_IDS:
                if not np.array_equal(bits(ENTRIES[e](xs["large"], dys["large"])), bits(want[e, "large"])):
                    bad.append(e)
        return bad, n

    res = _run_in_daemon_threads([work] * 8)
    assert all(n <= limit for _, n in res), res
    assert not [b for r, _ in res for b in r]


def test_set_num_threads_changing_while_others_compute(shared_data, restore_threads):
    xs, dys, want = shared_data
    stop = threading.Event()

    def toggler():
        k = 0
        while not stop.is_set():
            fastgelu.set_num_threads(1 + k % 3)
            k += 1
            time.sleep(0.0005)
        return k

    def work(seed):
        bad = []
        for e in np.random.default_rng(seed).permutation(ENTRY_IDS):
            if not np.array_equal(bits(ENTRIES[e](xs["large"], dys["large"])), bits(want[e, "large"])):
                bad.append(e)
        return bad

    t = threading.Thread(target=toggler, daemon=True)
    t.start()
    try:
        res = _run_in_daemon_threads([lambda s=s: work(s) for s in range(6)])
    finally:
        stop.set()
        t.join(TIMEOUT)
    assert not t.is_alive()
    assert not [b for r in res for b in r], res


def test_concurrent_with_pytorch_parallel_ops(shared_data):
    torch = pytest.importorskip("torch")
    xs, dys, want = shared_data
    a = torch.randn(400, 400, generator=torch.Generator().manual_seed(0))
    t_in = torch.randn(1_000_000, generator=torch.Generator().manual_seed(1))
    torch_want = (torch.nn.functional.gelu(t_in).clone(), a @ a)
    stop = threading.Event()

    def torch_work():
        bad = 0
        n = 0
        while not stop.is_set() or n < 3:
            g = torch.nn.functional.gelu(t_in)
            m = a @ a
            bad += int(not torch.equal(g, torch_want[0])) + int(not torch.allclose(m, torch_want[1]))
            n += 1
        return bad, n

    def our_work(seed):
        bad = []
        for e in np.random.default_rng(seed).permutation(ENTRY_IDS):
            for k in xs:
                if not np.array_equal(bits(ENTRIES[e](xs[k], dys[k])), bits(want[e, k])):
                    bad.append((e, k))
        return bad

    torch_threads = []
    torch_results = []
    for _ in range(2):
        th = threading.Thread(target=lambda: torch_results.append(torch_work()), daemon=True)
        th.start()
        torch_threads.append(th)
    try:
        res = _run_in_daemon_threads([lambda s=s: our_work(s) for s in range(6)])
    finally:
        stop.set()
        for th in torch_threads:
            th.join(TIMEOUT)
    assert not any(th.is_alive() for th in torch_threads), "PyTorch threads hung"
    assert not [b for r in res for b in r]
    assert len(torch_results) == 2 and all(b == 0 for b, _ in torch_results), torch_results
    # and fastgelu right after PyTorch in the same thread
    torch.nn.functional.gelu(t_in)
    assert_same(fastgelu.gelu(xs["large"]), want["gelu[none]", "large"], "after torch")


# ---- fork ------------------------------------------------------------------------------------------------

def _wait_child(pid, timeout=TIMEOUT):
    """waitpid with a deadline: kill the child and fail on a hang. Returns the exit code."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"forked child {pid} hung for {timeout} s and was killed")
        time.sleep(0.01)


def _in_child(check):
    """To be run in a forked child: exit 0 if check() is true, 1 if false, 2 on an exception."""
    code = 2
    try:
        code = 0 if check() else 1
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        os._exit(code)


@pytest.fixture(scope="module")
def fork_data():
    """Large arrays (parallel calls) and their results, computed in the parent's parallel regions."""
    x32 = sample(np.float32, 1_200_000)
    x64 = sample(np.float64, 1_000_000)
    dy32 = dy_sample(np.float32, x32.size)
    want = {}
    for name in NAMES:
        want[name, 32] = ucall(name, x32, dy32)
        want[name, 64] = ucall(name, x64)
    return x32, x64, dy32, want


def _child_checks(fork_data, repeats=1):
    x32, x64, dy32, want = fork_data
    ok = True
    for _ in range(repeats):
        for name in NAMES:
            ok &= np.array_equal(bits(ucall(name, x32, dy32)), bits(want[name, 32]))
            ok &= np.array_equal(bits(ucall(name, x64)), bits(want[name, 64]))
        y = x32.copy()
        fastgelu.gelu(y, approximate="tanh", out=y)
        ok &= np.array_equal(bits(y), bits(want["gelu_tanh", 32]))
    return bool(ok)


def _parent_parallel_region(fork_data):
    x32 = fork_data[0]
    assert fastgelu.get_num_threads() >= 1
    for name in NAMES:
        ucall(name, x32)


def test_fork_after_parallel_region_multiprocessing(fork_data):
    _parent_parallel_region(fork_data)
    ctx = mp.get_context("fork")
    p = ctx.Process(target=_in_child, args=(lambda: _child_checks(fork_data, 2),))
    p.start()
    p.join(TIMEOUT)
    if p.is_alive():
        p.kill()
        p.join()
        pytest.fail("child forked after a parallel region hung")
    assert p.exitcode == 0, p.exitcode
    # the parent still runs parallel afterwards
    _parent_parallel_region(fork_data)
    assert _child_checks(fork_data)


def test_fork_after_parallel_region_os_fork(fork_data):
    _parent_parallel_region(fork_data)
    pid = os.fork()
    if pid == 0:
        _in_child(lambda: _child_checks(fork_data))
    assert _wait_child(pid) == 0


def test_forked_child_of_a_forked_child(fork_data):
    _parent_parallel_region(fork_data)

    def child():
        if not _child_checks(fork_data):
            return False
        pid = os.fork()
        if pid == 0:
            _in_child(lambda: _child_checks(fork_data))
        deadline = time.monotonic() + TIMEOUT / 2
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                return False
            time.sleep(0.01)
        return os.waitstatus_to_exitcode(status) == 0 and _child_checks(fork_data)

    pid = os.fork()
    if pid == 0:
        _in_child(child)
    assert _wait_child(pid) == 0


def test_fork_while_another_thread_is_in_a_parallel_region(fork_data):
    x32 = fork_data[0]
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            fastgelu.gelu(x32)
            fastgelu.gelu_grad(x32, approximate="sigmoid")

    t = threading.Thread(target=busy, daemon=True)
    t.start()
    try:
        time.sleep(0.05)
        codes = []
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                _in_child(lambda: _child_checks(fork_data))
            codes.append(_wait_child(pid))
    finally:
        stop.set()
        t.join(TIMEOUT)
    assert codes == [0, 0, 0]


def _pool_task(args):
    name, lo, hi = args
    x = _POOL_DATA[0][lo:hi]
    return ucall(name, x)


_POOL_DATA = []


def test_fork_pool_map_after_parallel_region(fork_data):
    _parent_parallel_region(fork_data)
    x32, _, _, want = fork_data
    _POOL_DATA[:] = [x32]
    try:
        chunks = [(name, lo, lo + 400_000) for name in NAMES for lo in (0, 400_000, 800_000)]
        with mp.get_context("fork").Pool(3) as pool:
            res = pool.map_async(_pool_task, chunks).get(TIMEOUT)
        for (name, lo, hi), r in zip(chunks, res):
            assert_same(r, ucall(name, x32[lo:hi]), f"pool {name} [{lo}:{hi}]")
    finally:
        _POOL_DATA.clear()


def test_fork_after_pytorch_and_fastgelu_parallel_regions(fork_data):
    torch = pytest.importorskip("torch")
    t = torch.randn(2_000_000)
    torch.nn.functional.gelu(t)
    _parent_parallel_region(fork_data)

    # (only fastgelu is called in the child: PyTorch's own OpenMP pool is not fork-safe, and a torch op
    # in a child forked after torch ran in parallel hangs -- PyTorch's problem, not the one tested here)
    pid = os.fork()
    if pid == 0:
        _in_child(lambda: _child_checks(fork_data))
    assert _wait_child(pid) == 0
