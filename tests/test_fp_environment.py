"""Floating-point environment: no FP warnings for any input; the caller's MXCSR / fenv state
survives every call.

Shared helpers: tests/hostile_common.py. Values are compared bit for bit against the same computation on a
fresh contiguous copy."""

import ctypes
import ctypes.util
import os
import warnings

import numpy as np
import pytest

import fastgelu
from fastgelu import ufuncs

from hostile_common import (
    ALL_FLOATS, ALL_FLOAT_IDS, APPROX, BF16, ENTRIES, ENTRY_IDS, FLOATS, FLOAT_IDS, NAMES, PARALLEL_N, UF,
    _specials, assert_same, bits, sample, ucall)


# ======================================================================================================
# 5. Floating-point environment
# ======================================================================================================

def _hostile_xdy(dtype, n):
    calc = np.float32 if np.dtype(dtype).itemsize <= 2 else dtype
    x = sample(calc, n)
    rng = np.random.default_rng(n)
    dy = rng.permutation(sample(calc, n, seed=9))  # hostile gradients too: inf, nan, 0, huge, subnormal
    dy[::4] = 1.0
    with np.errstate(all="ignore"):
        return x.astype(dtype), dy.astype(dtype)


@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=ALL_FLOAT_IDS)
@pytest.mark.parametrize("entry", ENTRY_IDS)
def test_no_fp_warnings_for_any_input(entry, dtype):
    f = ENTRIES[entry]
    for n in (997, PARALLEL_N):
        x, dy = _hostile_xdy(dtype, n)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="raise"):
                f(x, dy)
                f(x[::-3], dy[::-3])
                f(x.reshape(-1, 1)[:n - n % 7].reshape(-1, 7), dy[:n - n % 7].reshape(-1, 7)[0])
                y = x.copy()
                f(y, dy, out=y)
                f(x, dy, out=np.empty_like(x), where=np.arange(n) % 2 == 0)
                if dtype.isnative and dtype != BF16:
                    f(x.astype(dtype.newbyteorder()), dy.astype(dtype.newbyteorder()))
                for v in _specials(np.float32 if dtype.itemsize <= 4 else np.float64):
                    with np.errstate(all="ignore"):
                        s = np.array(v).astype(dtype)
                    f(s, s)
                    f(s[()], np.ones((), dtype))


@pytest.mark.parametrize("approximate", APPROX)
def test_no_fp_warnings_with_bias(approximate):
    for dtype in ALL_FLOATS:
        x, dy = _hostile_xdy(dtype, 64 * 1001)
        x = x.reshape(64, 1001)
        dy = dy.reshape(64, 1001)
        b = x[7].copy()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="raise"):
                fastgelu.gelu(x, approximate=approximate, bias=b)
                fastgelu.gelu_grad(x, dy, approximate=approximate, bias=b)
                fastgelu.gelu_grad(x, approximate=approximate, bias=b)


def _mxcsr_hook():
    hook = getattr(ufuncs._kernels, "_mxcsr", None)
    if hook is None or hook() is None:
        pytest.skip("no MXCSR on this machine")
    return hook


CONTROL = 0xFFC0        # everything but the six sticky flags: DAZ, masks, rounding, FTZ
FLAGS = 0x3F
STD_FLAGS = 0x3D        # the five C99 flags (IE, ZE, OE, UE, PE); DE (bit 1) is not one of them
MODES = {"FTZ": 0x8000, "DAZ": 0x0040, "FTZ+DAZ": 0x8040, "round down": 0x2000, "round up": 0x4000,
         "round to zero": 0x6000, "FTZ+DAZ+round up": 0xC040, "all + flags": 0xE07F}


def _calls_for_env():
    """(label, callable) over every entry point, small (serial) and large (parallel) calls, and bias."""
    small = sample(np.float32, 500)
    large = sample(np.float32, PARALLEL_N)
    small64 = sample(np.float64, 500)
    large64 = sample(np.float64, PARALLEL_N)
    x2 = sample(np.float32, 64 * 1024).reshape(64, 1024)
    b = np.linspace(-1, 1, 1024).astype(np.float32)
    out = []
    for e in ENTRY_IDS:
        for label, x in (("small f32", small), ("large f32", large), ("small f64", small64),
                         ("large f64", large64)):
            out.append((f"{e} {label}", (lambda e, x: lambda: ENTRIES[e](x, x))(e, x)))
    out.append(("gelu bias", lambda: fastgelu.gelu(x2, bias=b)))
    out.append(("gelu_grad bias", lambda: fastgelu.gelu_grad(x2, x2, approximate="tanh", bias=b)))
    return out


@pytest.mark.parametrize("mode", list(MODES))
def test_mxcsr_control_bits_unchanged(mode):
    hook = _mxcsr_hook()
    orig = hook()
    calls = _calls_for_env()
    bad = []
    try:
        for label, call in calls:
            want = hook(orig | MODES[mode])
            with np.errstate(all="ignore"):
                call()
            got = hook()
            if (got & CONTROL) != (want & CONTROL):
                bad.append((label, hex(want), hex(got)))
    finally:
        hook(orig)
    assert hook() == orig
    assert not bad, bad[:10]


# a direct call of a ufunc's inner loop (NumPy's own machinery clears the FP flags around every ufunc
# call, np.add's included, so only the loop itself can be asked whether it keeps the caller's flags)
_LOOP = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_ssize_t),
                         ctypes.POINTER(ctypes.c_ssize_t), ctypes.c_void_p)


class _UFuncStruct(ctypes.Structure):  # the public head of PyUFuncObject (numpy/ufuncobject.h)
    _fields_ = [("ob_refcnt", ctypes.c_ssize_t), ("ob_type", ctypes.c_void_p), ("nin", ctypes.c_int),
                ("nout", ctypes.c_int), ("nargs", ctypes.c_int), ("identity", ctypes.c_int),
                ("functions", ctypes.POINTER(ctypes.c_void_p)), ("data", ctypes.POINTER(ctypes.c_void_p)),
                ("ntypes", ctypes.c_int), ("reserved1", ctypes.c_int), ("name", ctypes.c_char_p),
                ("types", ctypes.POINTER(ctypes.c_char))]


def _inner_loop(u, dtype):
    s = _UFuncStruct.from_address(id(u))
    assert s.name.decode() == u.__name__ and s.nin == u.nin and s.nargs == u.nin + 1
    for k in range(s.ntypes):
        if all(s.types[k * s.nargs + j][0] == np.dtype(dtype).num for j in range(s.nargs)):
            return _LOOP(s.functions[k]), s.data[k]
    raise LookupError(f"{u.__name__} has no {dtype} loop")


def _loop_call(u, dtype, x):
    loop, data = _inner_loop(u, dtype)
    args = [x] + ([np.ones_like(x)] if u.nin == 2 else []) + [np.empty_like(x)]
    ptrs = (ctypes.c_void_p * len(args))(*[a.ctypes.data for a in args])
    dims = (ctypes.c_ssize_t * 1)(x.size)
    steps = (ctypes.c_ssize_t * len(args))(*[x.itemsize] * len(args))
    return lambda: loop(ptrs, dims, steps, data), args


def _flag_env():
    """(set, get) for the caller's sticky flags. C's fenv is the union of the x87 and SSE status words, and
    glibc's fesetexceptflag writes both: so clear both (feclearexcept), then set the MXCSR flags; read back
    the MXCSR flags (what SSE code sees) and fetestexcept (what C sees)."""
    hook = _mxcsr_hook()
    libm = _libm()
    libm.feclearexcept.argtypes = [ctypes.c_int]
    libm.fetestexcept.argtypes = [ctypes.c_int]
    orig = hook()

    def set_flags(flags):
        libm.feclearexcept(STD_FLAGS)
        hook((orig & ~FLAGS) | flags)

    def get_flags():
        return hook() & FLAGS, libm.fetestexcept(STD_FLAGS) & STD_FLAGS

    def restore():
        libm.feclearexcept(STD_FLAGS)
        hook(orig)

    return set_flags, get_flags, restore


def _flag_problems(flags, got):
    mx, c = got
    out = []
    if mx & flags != flags:
        out.append(f"caller's flags {flags:#x} lost: MXCSR flags {mx:#x}")
    if c & ~flags & STD_FLAGS:
        out.append(f"flags {c & ~flags:#x} raised that the caller did not have ({flags:#x})")
    return out


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", NAMES)
def test_inner_loops_keep_the_callers_sticky_flags(name, dtype):
    hook = _mxcsr_hook()
    orig = hook()
    u = UF[name]
    runs = []
    for n in (333, PARALLEL_N):
        x = sample(dtype, n)
        run, args = _loop_call(u, dtype, x)
        runs.append((n, run, args))
    bad = []
    set_flags, get_flags, restore = _flag_env()
    try:
        for n, run, args in runs:
            for flags in [1 << b for b in range(6)] + [0x3F, 0x3D, 0x21, 0x0]:
                set_flags(flags)
                run()
                got = get_flags()
                restore()
                bad += [(n, p) for p in _flag_problems(flags, got)]
    finally:
        restore()
        hook(orig)
    assert not bad, bad[:10]
    # the direct call computed the same values as the ufunc
    for n, run, args in runs:
        assert_same(args[-1], ucall(u, *args[:-1]), "direct loop call")


@pytest.mark.parametrize("approximate", APPROX)
def test_bias_path_keeps_the_callers_sticky_flags(approximate):
    """The fused-bias kernel runs outside NumPy's ufunc machinery: the caller's flags must survive it."""
    hook = _mxcsr_hook()
    orig = hook()
    x = sample(np.float32, 256 * 1024).reshape(256, 1024)
    b = np.linspace(-1, 1, 1024).astype(np.float32)
    bad = []
    set_flags, get_flags, restore = _flag_env()
    try:
        for rows in (2, 256):
            for flags in (0x01, 0x04, 0x08, 0x10, 0x20, 0x3D, 0x0):
                for call in (lambda: fastgelu.gelu(x[:rows], approximate=approximate, bias=b),
                             lambda: fastgelu.gelu_grad(x[:rows], approximate=approximate, bias=b)):
                    with np.errstate(all="ignore"):
                        set_flags(flags)
                        call()
                        got = get_flags()
                        restore()
                    bad += [(rows, p) for p in _flag_problems(flags, got)]
    finally:
        restore()
        hook(orig)
    assert not bad, bad


@pytest.mark.parametrize("entry", ENTRY_IDS)
def test_stale_caller_flags_do_not_become_fp_errors(entry):
    """Flags the caller left set (overflow, invalid, ...) are not blamed on a fastgelu call."""
    hook = _mxcsr_hook()
    orig = hook()
    f = ENTRIES[entry]
    x = np.linspace(-4, 4, 1000)
    xl = np.linspace(-4, 4, PARALLEL_N).astype(np.float32)
    try:
        for flags in (0x01, 0x04, 0x08, 0x10, 0x20, 0x3D):
            with np.errstate(all="raise"):
                hook((orig & ~FLAGS) | flags)
                f(x, x)
                hook((orig & ~FLAGS) | flags)
                f(xl, xl)
    finally:
        hook(orig)
    # and the flags end exactly as a NumPy ufunc of the same arrays leaves them
    try:
        hook((orig & ~FLAGS) | 0x3D)
        np.negative(x)
        numpy_after = hook() & STD_FLAGS
        hook((orig & ~FLAGS) | 0x3D)
        f(x, x)
        ours_after = hook() & STD_FLAGS
    finally:
        hook(orig)
    assert ours_after == numpy_after, (hex(ours_after), hex(numpy_after))


def _libm():
    path = ctypes.util.find_library("m")
    if path is None:
        pytest.skip("no libm")
    lib = ctypes.CDLL(path)
    lib.fegetround.restype = ctypes.c_int
    lib.fesetround.argtypes = [ctypes.c_int]
    lib.fesetround.restype = ctypes.c_int
    return lib


# <fenv.h> values on x86 (glibc); the test is skipped elsewhere
FE_MODES = {"FE_TONEAREST": 0x000, "FE_DOWNWARD": 0x400, "FE_UPWARD": 0x800, "FE_TOWARDZERO": 0xC00}


@pytest.mark.skipif(os.uname().machine not in ("x86_64", "i686"), reason="x86 fenv constants")
@pytest.mark.parametrize("mode", list(FE_MODES))
def test_libm_rounding_mode_unchanged(mode):
    libm = _libm()
    assert libm.fegetround() == FE_MODES["FE_TONEAREST"]
    calls = _calls_for_env()
    bad = []
    try:
        assert libm.fesetround(FE_MODES[mode]) == 0
        for label, call in calls:
            with np.errstate(all="ignore"):
                call()
            got = libm.fegetround()
            if got != FE_MODES[mode]:
                bad.append((label, hex(got)))
                libm.fesetround(FE_MODES[mode])
    finally:
        libm.fesetround(FE_MODES["FE_TONEAREST"])
    assert libm.fegetround() == FE_MODES["FE_TONEAREST"]
    assert not bad, bad[:10]


@pytest.mark.parametrize("mode", ["FTZ", "DAZ", "FTZ+DAZ", "round down", "round up", "round to zero"])
def test_results_do_not_depend_on_which_thread_computes_them(mode):
    """Under a caller's FTZ/DAZ or rounding mode (torch.set_flush_denormal, ICC-built libraries...), an
    element's value must not depend on the path: serial call, parallel call and strided call agree."""
    hook = _mxcsr_hook()
    orig = hook()
    x = sample(np.float32, PARALLEL_N)
    bad = []
    try:
        for name in NAMES:
            u = UF[name]
            hook(orig | MODES[mode])
            with np.errstate(all="ignore"):
                big = ucall(u, x)
                pieces = np.concatenate([ucall(u, x[i:i + 1000]) for i in range(0, x.size, 1000)])
                strided = ucall(u, np.repeat(x, 2)[::2])
            hook(orig)
            for what, got in (("parallel", big), ("strided", strided)):
                same = (bits(got) == bits(pieces)) | (np.isnan(got) & np.isnan(pieces))
                if not same.all():
                    i = int(np.flatnonzero(~same)[0])
                    bad.append((name, what, int((~same).sum()), float(x[i]), float(got[i]), float(pieces[i])))
    finally:
        hook(orig)
    assert not bad, bad


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("mode", ["round down", "round up", "round to zero"])
def test_accuracy_under_the_callers_rounding_mode(mode, dtype):
    """A caller's directed rounding mode (interval arithmetic, fesetround) costs at most a rounding or so:
    float32 stays within 4 ULP of the reference; float64 within 1e-13 (relative to the error scale) of
    its own round-to-nearest result. Serial and parallel calls both."""
    from fastgelu._reference import dense_sample, ref64, ulp_error
    hook = _mxcsr_hook()
    orig = hook()
    x = dense_sample(dtype, 40_000, seed=3)
    bad = []
    for name in NAMES:
        u = UF[name]
        nearest = ucall(u, x)
        try:
            hook(orig | MODES[mode])
            with np.errstate(all="ignore"):
                serial = np.concatenate([ucall(u, x[i:i + 4096]) for i in range(0, x.size, 4096)])
                parallel = ucall(u, np.concatenate([x, x]))[:x.size]
        finally:
            hook(orig)
        ref, scale = ref64(name, x)
        for path, y in (("serial", serial), ("parallel", parallel)):
            with np.errstate(all="ignore"):
                if dtype == np.float32:
                    err = ulp_error(y, ref, scale, np.float32)
                    limit = 4.0
                else:
                    same = (y == nearest) | (np.isnan(y) & np.isnan(nearest))
                    err = np.where(same, 0.0, np.abs(y - nearest) / np.maximum(scale, 1e-300))
                    err = np.where(np.isnan(err), np.inf, err)
                    limit = 1e-13
            if err.max() > limit:
                i = int(np.argmax(err))
                bad.append((name, path, f"error {err[i]:.3g}", f"x={x[i]!r}", f"got {y[i]!r}",
                            f"round-to-nearest {nearest[i]!r}", f"reference {ref[i]!r}"))
    assert not bad, bad


# Arm64: the caller's FPCR (FZ: flush-to-zero, as torch.set_flush_denormal sets it; FZ16; DN; rounding) must
# neither change results nor be changed by a call
FPCR_MODES = {"FZ": 1 << 24, "FZ+FZ16": (1 << 24) | (1 << 19), "DN": 1 << 25, "round up": 1 << 22,
              "round to zero": 3 << 22, "FZ+DN+round down": (1 << 24) | (1 << 25) | (2 << 22)}


@pytest.mark.parametrize("mode", list(FPCR_MODES))
def test_fpcr_mode_changes_no_result_and_survives(mode):
    hook = getattr(ufuncs._kernels, "_fpcr", None)
    if hook is None or hook() is None:
        pytest.skip("no FPCR on this machine")
    orig = hook()
    bad = []
    for dtype in (np.float32, np.float64, np.float16):
        x = sample(np.float32 if dtype == np.float16 else dtype, PARALLEL_N)
        with np.errstate(all="ignore"):
            x = x.astype(dtype)
            # subnormal inputs and results: what flush-to-zero would change
            x[:64] = np.linspace(-np.finfo(dtype).tiny * 4, np.finfo(dtype).tiny * 4, 64).astype(dtype)
            x[64:128] = -np.linspace(10, 40, 64).astype(dtype)
        for name in NAMES:
            u = UF[name]
            with np.errstate(all="ignore"):
                want = ucall(u, x)
            try:
                hook(orig | FPCR_MODES[mode])
                with np.errstate(all="ignore"):
                    large = ucall(u, x)
                    small = np.concatenate([ucall(u, x[i:i + 1000]) for i in range(0, 4000, 1000)])
                after = hook()
            finally:
                hook(orig)
            if after != orig | FPCR_MODES[mode]:
                bad.append((name, np.dtype(dtype).name, "FPCR changed", hex(after)))
            for what, got, ref in (("parallel", large, want), ("serial", small, want[:4000])):
                same = (bits(got) == bits(ref)) | (np.isnan(got) & np.isnan(ref))
                if not same.all():
                    i = int(np.flatnonzero(~same)[0])
                    bad.append((name, np.dtype(dtype).name, what, int((~same).sum()), float(x[i]), float(got[i]),
                                float(ref[i])))
    assert hook() == orig
    assert not bad, bad[:10]
