"""Resources: no memory or thread growth over 10**5 calls of every entry point; in place allocates nothing.

Shared helpers: tests/hostile_common.py. Values are compared bit for bit against the same computation on a
fresh contiguous copy."""

import gc
import os
import sys
import threading
import time
import tracemalloc

import numpy as np
import pytest

import fastgelu
from fastgelu import ufuncs

from hostile_common import ALL_FLOATS, APPROX, ENTRIES, ENTRY_IDS, TIMEOUT, assert_same, dy_sample, sample


# ======================================================================================================
# 4. Resources
# ======================================================================================================

def _rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _os_threads():
    with open("/proc/self/status") as fh:
        return int(next(line for line in fh if line.startswith("Threads:")).split()[1])


MiB = 1 << 20
RSS_SLACK = 4 * MiB
CALLS = 10 ** 5


def _leak_loop(f, calls):
    for _ in range(calls):
        f()


def _measure(f, calls=CALLS, warm=3000):
    _leak_loop(f, warm)
    gc.collect()
    rss0, blocks0 = _rss(), sys.getallocatedblocks()
    _leak_loop(f, calls)
    gc.collect()
    return _rss() - rss0, sys.getallocatedblocks() - blocks0


def _entry_variants(entry):
    """One callable per call style (new result, out=, scalar, where=, float32), used in rotation."""
    f = ENTRIES[entry]
    x = np.linspace(-5, 5, 32)
    dy = np.linspace(2, -2, 32)
    x32 = x.astype(np.float32)
    dy32 = dy.astype(np.float32)
    out = np.empty(32)
    out32 = np.empty(32, np.float32)
    mask = x > 0
    styles = [lambda: f(x, dy), lambda: f(x, dy, out=out), lambda: f(1.25, 0.5),
              lambda: f(x32, dy32, out=out32, where=mask), lambda: f(x32, np.float32(2))]
    return styles, (x, dy, out, x32, dy32, out32)


@pytest.mark.parametrize("entry", ENTRY_IDS)
def test_no_memory_growth_over_1e5_calls(entry):
    styles, arrays = _entry_variants(entry)
    k = len(styles)
    i = [0]

    def call():
        i[0] += 1
        return styles[i[0] % k]()

    refs = [sys.getrefcount(a) for a in arrays]
    rss, blocks = _measure(call)
    assert rss < RSS_SLACK, f"RSS grew by {rss / MiB:.1f} MiB over {CALLS} calls of {entry}"
    assert blocks < 500, f"{blocks} Python memory blocks more after {CALLS} calls of {entry}"
    assert [sys.getrefcount(a) for a in arrays] == refs, "reference leak on the arguments"


@pytest.mark.parametrize("approximate", APPROX)
def test_no_memory_growth_with_bias(approximate):
    x = np.linspace(-5, 5, 64).reshape(8, 8)
    b = np.linspace(-1, 1, 8)
    dy = np.ones((8, 8))
    out = np.empty((8, 8))
    styles = [lambda: fastgelu.gelu(x, approximate=approximate, bias=b),
              lambda: fastgelu.gelu(x, approximate=approximate, bias=b, out=out),
              lambda: fastgelu.gelu_grad(x, dy, approximate=approximate, bias=b),
              lambda: fastgelu.gelu_grad(x, approximate=approximate, bias=b, out=out)]
    i = [0]

    def call():
        i[0] += 1
        return styles[i[0] % 4]()

    refs = [sys.getrefcount(a) for a in (x, b, dy, out)]
    rss, blocks = _measure(call, calls=CALLS // 2)
    assert rss < RSS_SLACK and blocks < 500, (rss / MiB, blocks)
    assert [sys.getrefcount(a) for a in (x, b, dy, out)] == refs


def test_no_memory_growth_on_error_paths(tmp_path):
    x = np.linspace(-1, 1, 16)
    ro = np.zeros(16)
    ro.flags.writeable = False
    bad_out = np.zeros(16, np.int32)
    errors = [lambda: fastgelu.gelu(np.ones(4, complex)), lambda: fastgelu.gelu_grad(x, "a"),
              lambda: fastgelu.gelu([[1.0], [2.0, 3.0]]), lambda: fastgelu.gelu(x, approximate="x"),
              lambda: ufuncs.gelu(x, out=ro), lambda: ufuncs.gelu_tanh_grad(x, x, out=bad_out),
              lambda: fastgelu.gelu(x, out=np.zeros(3)), lambda: ufuncs.gelu_sigmoid(None),
              lambda: fastgelu.gelu(x.reshape(4, 4), bias=np.ones(3))]
    i = [0]

    def call():
        i[0] += 1
        try:
            errors[i[0] % len(errors)]()
        except (TypeError, ValueError):
            return
        raise AssertionError("no error")

    refs = [sys.getrefcount(a) for a in (x, ro, bad_out)]
    rss, blocks = _measure(call, calls=CALLS // 2)
    assert rss < RSS_SLACK and blocks < 500, (rss / MiB, blocks)
    assert [sys.getrefcount(a) for a in (x, ro, bad_out)] == refs


def test_no_memory_growth_over_parallel_calls():
    x = sample(np.float32, 70_000)
    out = np.empty_like(x)
    calls = [lambda: ufuncs.gelu(x, out=out), lambda: ufuncs.gelu_tanh_grad(x, x, out=out),
             lambda: fastgelu.gelu(x, approximate="sigmoid", out=out),
             lambda: fastgelu.gelu_grad(x, approximate="none", out=out)]
    i = [0]

    def call():
        i[0] += 1
        return calls[i[0] % 4]()

    rss, blocks = _measure(call, calls=300, warm=50)
    assert rss < RSS_SLACK and blocks < 500, (rss / MiB, blocks)


def _llvm_openmp_loaded():
    try:
        with open("/proc/self/maps") as f:
            return any("libomp.so" in line or "libiomp5" in line for line in f)
    except OSError:
        return False


def test_short_lived_threads_leave_nothing_behind():
    """Each new Python thread that makes a parallel call may get an OpenMP team; they must go away."""
    x = sample(np.float32, 100_000)
    base_threads = _os_threads()

    def burst(k=40):
        ts = [threading.Thread(target=lambda: (fastgelu.gelu(x), fastgelu.gelu_grad(x, x))) for _ in range(k)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(TIMEOUT)
        assert not any(t.is_alive() for t in ts), "hung"

    def settle(limit):
        deadline = time.monotonic() + 10
        while _os_threads() > limit and time.monotonic() < deadline:
            time.sleep(0.05)
        return _os_threads()

    for _ in range(3):
        burst()
    gc.collect()
    # GNU libgomp ends a team with its thread; LLVM libomp (clang builds) parks a bounded pool of idle
    # workers for reuse: there the count must stop growing, not fall back.
    llvm = _llvm_openmp_loaded()
    warm = settle(base_threads)
    rss0 = _rss()
    for _ in range(5):
        burst()
    gc.collect()
    limit = max(base_threads, warm) if llvm else base_threads
    assert settle(limit) <= limit, (_os_threads(), base_threads, warm, llvm)
    assert _rss() - rss0 < 8 * MiB, (_rss() - rss0) / MiB


IN_PLACE = {
    "contiguous": lambda x: x,
    "strided": lambda x: x[::2],
    "reversed": lambda x: x[::-1],
    "fortran 2-D": lambda x: x.reshape(256, -1).T,
}


IN_PLACE_CASES = [(e, d, "contiguous") for e in ENTRY_IDS for d in ALL_FLOATS] + \
    [(e, d, lay) for e in ("ufuncs.gelu_tanh", "ufuncs.gelu_grad", "gelu[sigmoid]", "gelu_grad[none]+dy")
     for d in ALL_FLOATS for lay in list(IN_PLACE)[1:]]


@pytest.mark.parametrize("entry,dtype,layout", IN_PLACE_CASES,
                         ids=[f"{e}-{d}-{lay}" for e, d, lay in IN_PLACE_CASES])
def test_in_place_allocates_nothing(entry, dtype, layout):
    f = ENTRIES[entry]
    with np.errstate(over="ignore"):
        base = sample(np.float32 if dtype.itemsize <= 2 else dtype, 1 << 17).astype(dtype)
    base[~np.isfinite(np.asarray(base, np.float64))] = 1
    dy = np.ones((), dtype)
    xv = IN_PLACE[layout](base)
    want = f(np.ascontiguousarray(xv), dy)
    tracemalloc.start()
    try:
        res = f(xv, dy, out=xv)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert res is xv
    assert_same(np.ascontiguousarray(xv), want, "in place")
    assert peak < 64 * 1024, f"{peak} bytes allocated in place ({entry}, {dtype}, {layout})"


@pytest.mark.parametrize("approximate", APPROX)
def test_gradient_in_place_over_dy_and_bias_in_place_allocate_nothing(approximate):
    x = sample(np.float32, 1 << 20)
    x[~np.isfinite(x)] = 1
    dy = dy_sample(np.float32, 1 << 20)
    b = np.linspace(-1, 1, 1024).astype(np.float32)
    want_grad = fastgelu.gelu_grad(x, dy, approximate=approximate)
    want_bias = fastgelu.gelu(x + np.tile(b, 1024), approximate=approximate)
    xb = x.copy().reshape(1024, 1024)
    tracemalloc.start()
    try:
        fastgelu.gelu_grad(x, dy, approximate=approximate, out=dy)
        fastgelu.gelu(xb, approximate=approximate, bias=b, out=xb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert_same(dy, want_grad, "grad in place over dy")
    assert_same(xb.ravel(), want_bias, "bias in place")
    assert peak < 64 * 1024, peak
