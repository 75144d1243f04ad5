"""Helpers shared by the hostile-input tests (test_bad_arguments, test_memory_layout, test_concurrency,
test_memory_leaks, test_fp_environment): entry points, hostile samples, bit-exact comparisons."""
import concurrent.futures as cf
import ctypes
import ctypes.util
import gc
import importlib
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
import tracemalloc
import warnings
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache

import numpy as np
import pytest

import fastgelu
from fastgelu import ufuncs
from fastgelu._dispatch import available

NAMES = ("gelu", "gelu_tanh", "gelu_sigmoid", "gelu_grad", "gelu_tanh_grad", "gelu_sigmoid_grad")
FWD = NAMES[:3]
GRAD = NAMES[3:]
APPROX = ("none", "tanh", "sigmoid")
FWD_OF = dict(zip(APPROX, FWD))
GRAD_OF = dict(zip(APPROX, GRAD))
UF = {name: getattr(ufuncs, name) for name in NAMES}
ISAS = available()
BF16 = getattr(ufuncs, "BFLOAT16", None)

# float dtypes that have their own loops (float16 and bfloat16 once they are built in)
FLOATS = [np.dtype(np.float32), np.dtype(np.float64)]
if "e->e" in ufuncs.gelu.types:
    FLOATS.insert(0, np.dtype(np.float16))
FLOAT_IDS = [str(d) for d in FLOATS]
ALL_FLOATS = FLOATS + ([BF16] if BF16 is not None else [])
ALL_FLOAT_IDS = [str(d) for d in ALL_FLOATS]

PARALLEL_N = 70_001    # well above the parallel threshold (8192): calls split over the team
SERIAL_MAX = 30_000    # below it: calls stay on the calling thread
TIMEOUT = 60           # seconds before a child process or a thread counts as hung


# ---- entry points --------------------------------------------------------------------------------------------

def _ufunc_entry(name):
    u = UF[name]
    if u.nin == 1:
        return lambda x, dy, **kw: u(x, **kw)
    return lambda x, dy, **kw: u(x, dy, **kw)


def _wrapper_entries():
    out = {}
    for a in APPROX:
        out[f"gelu[{a}]"] = (lambda a: lambda x, dy, **kw: fastgelu.gelu(x, approximate=a, **kw))(a)
        out[f"gelu_grad[{a}]"] = (
            lambda a: lambda x, dy, **kw: fastgelu.gelu_grad(x, approximate=a, **kw))(a)
        out[f"gelu_grad[{a}]+dy"] = (
            lambda a: lambda x, dy, **kw: fastgelu.gelu_grad(x, dy, approximate=a, **kw))(a)
    return out


# every public way to compute: the six raw ufuncs and the wrapper (3 variants x gelu / gelu_grad / +dy)
ENTRIES = {**{f"ufuncs.{n}": _ufunc_entry(n) for n in NAMES}, **_wrapper_entries()}
ENTRY_IDS = list(ENTRIES)
# the ufunc that computes each entry point (gradient entries without dy are the ufunc with dy = 1)
ENTRY_UFUNC = {**{f"ufuncs.{n}": n for n in NAMES},
               **{f"gelu[{a}]": FWD_OF[a] for a in APPROX},
               **{f"gelu_grad[{a}]": GRAD_OF[a] for a in APPROX},
               **{f"gelu_grad[{a}]+dy": GRAD_OF[a] for a in APPROX}}


def ucall(u, x, dy=None, **kw):
    """Call ufunc `u` (a ufunc or a name) on x, with dy (default ones) when it is a gradient."""
    if isinstance(u, str):
        u = UF[u]
    if u.nin == 1:
        return u(x, **kw)
    if dy is None:
        dy = np.ones_like(x)
    return u(x, dy, **kw)


# ---- data --------------------------------------------------------------------------------------------------

def _specials(dtype):
    fi = np.finfo(dtype)
    tail = {2: [-5.0, -8.0, -17.0], 4: [-9.0, -13.0, -14.5, -18.0, -20.0],
            8: [-20.0, -27.0, -37.5, -38.6, -39.0, -40.0]}[np.dtype(dtype).itemsize]
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, float(fi.max), -float(fi.max), float(fi.tiny),
            -float(fi.tiny), float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
            float(fi.tiny) / 2, -float(fi.tiny) / 3, 1.0, -1.0, -0.7517916, 0.5, 3.0, 1e4, -1e4,
            float(fi.max) ** (1 / 3) * 1.5, -float(fi.max) ** (1 / 3) * 1.5] + tail
    return vals


@lru_cache(maxsize=None)
def _sample(dtype, n, seed=0):
    """n hostile values of `dtype`: specials, subnormals, huge, the negative tail, random; read-only."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed + 17 * n)
    calc = np.float64 if dtype == np.float64 else np.float32
    fi = np.finfo(calc)
    k = n // 6 + 1
    parts = [
        np.array(_specials(calc if dtype.itemsize > 2 else np.float16)),
        rng.standard_normal(k) * 3,
        rng.uniform(-40 if calc == np.float64 else -16, -3, k),
        np.sign(rng.standard_normal(k)) * 10.0 ** rng.uniform(-40, 38 if calc == np.float32 else 300, k),
        rng.uniform(-1, 1, k) * float(fi.tiny),
        rng.uniform(-6, 6, k),
    ]
    with np.errstate(all="ignore"):
        x = np.concatenate(parts)
        x = rng.permutation(x)
        x = np.resize(x, n).astype(calc).astype(dtype)
    x.flags.writeable = False
    return x


def sample(dtype, n, seed=0):
    return _sample(np.dtype(dtype), n, seed).copy()


def dy_sample(dtype, n, seed=1):
    rng = np.random.default_rng(seed + n)
    dy = rng.standard_normal(n) * 2
    dy[::11] = 1.0
    dy[::29] = 0.0
    dy[::37] = -3.5
    return dy.astype(np.float32).astype(dtype)


def bits(a):
    a = np.array(a, order="C")  # (keeps 0-d arrays 0-d, unlike ascontiguousarray)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.itemsize in (1, 2, 4, 8) else a.view(np.uint8)


def assert_same(got, want, what="", any_nan=True):
    """Same shape, same dtype, same values bit for bit (any NaN matches any NaN unless any_nan=False)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    if got.dtype.kind in "biuOcV" and got.dtype != BF16:
        assert got.tobytes() == want.tobytes() if got.dtype.kind != "O" else \
            [repr(v) for v in got.ravel()] == [repr(v) for v in want.ravel()], what
        return
    g = np.asarray(got, dtype=np.float64) if got.dtype.itemsize == 2 else got
    w = np.asarray(want, dtype=np.float64) if want.dtype.itemsize == 2 else want
    nan = np.isnan(g) & np.isnan(w) if any_nan else np.zeros(g.shape, bool)
    diff = (bits(got) != bits(want)) & ~nan
    if diff.any():
        idx = np.argwhere(diff)[:5]
        detail = [(tuple(int(v) for v in i), g[tuple(i)], w[tuple(i)]) for i in idx]
        pytest.fail(f"{what}: {int(diff.sum())} of {diff.size} elements differ, first (index, got, want): "
                    f"{detail}")


def assert_untouched(got, before, what=""):
    """Every byte as it was (NaN payloads included)."""
    assert_same(got, before, what, any_nan=False)


def native(a):
    """A fresh, aligned, native-byte-order, C-contiguous copy of a."""
    a = np.asarray(a)
    return np.ascontiguousarray(a.astype(a.dtype.newbyteorder("=")))


def misaligned(a, offset=1):
    """A copy of a at byte offset `offset` in a uint8 buffer (not aligned for the element size)."""
    a = np.asarray(a)
    buf = np.zeros(a.nbytes + offset + 16, np.uint8)
    m = buf[offset:offset + a.nbytes].view(a.dtype).reshape(a.shape)
    m[...] = a
    return m


def sentinel(shape, dtype, seed=5):
    """A recognizable out array: random junk and NaNs (whose bits must survive untouched)."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    if dtype.kind in "iu":
        return np.array(rng.integers(-50 if dtype.kind == "i" else 0, 100, size=shape), dtype=dtype)
    if dtype.kind == "b":
        return np.array(rng.integers(0, 2, size=shape), dtype=bool)
    if dtype.kind == "c":
        return np.array(rng.standard_normal(shape) + 1j * rng.standard_normal(shape), dtype=dtype)
    if dtype.kind == "O":
        return np.array(rng.standard_normal(shape), dtype=object)
    a = np.array(np.asarray(rng.standard_normal(shape) * 1e3).astype(np.float32), dtype=dtype)
    a.reshape(-1)[::3] = np.nan
    return a
