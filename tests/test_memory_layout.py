"""Odd memory: byte-swapped, misaligned, strided, reversed, Fortran, overlapping, 0-d, empty,
memory-mapped, where=, > 2**31 elements (opt-in: --run-huge): the same bits as the contiguous case.

Shared helpers: tests/hostile_common.py. Values are compared bit for bit against the same computation on a
fresh contiguous copy."""

import importlib

import numpy as np
import pytest

import fastgelu
from fastgelu import ufuncs

from hostile_common import (
    ALL_FLOATS, ALL_FLOAT_IDS, APPROX, BF16, ENTRIES, ENTRY_IDS, ENTRY_UFUNC, FLOATS, FLOAT_IDS, GRAD, ISAS,
    NAMES, PARALLEL_N, SERIAL_MAX, UF, _specials, assert_same, assert_untouched, bits, dy_sample, misaligned,
    native, sample, sentinel, ucall)


# ======================================================================================================
# 2. Odd memory: every layout gives the contiguous bits
# ======================================================================================================

def _ufs(isa):
    return importlib.import_module(f"fastgelu._kernels_{isa}").UFUNCS


UF_DISPATCH = _ufs(ufuncs.ISA)


@pytest.fixture(params=ISAS)
def isa_uf(request):
    """The six ufuncs of each ISA build this CPU runs (the loops are compiled once per ISA)."""
    return _ufs(request.param)


def _layout_case(uf, name, dtype, n):
    x = sample(dtype, n)
    dy = dy_sample(dtype, n) if name in GRAD else None
    want = ucall(uf[name], x, dy)
    return x, dy, want


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", NAMES)
def test_byte_swapped(isa_uf, name, dtype):
    u = isa_uf[name]
    for n in (1000, 20_001):
        x, dy, want = _layout_case(isa_uf, name, dtype, n)
        sw = np.dtype(dtype).newbyteorder()
        xs = x.astype(sw)
        dys = None if dy is None else dy.astype(sw)
        assert xs.dtype.byteorder in "<>" and not xs.dtype.isnative
        assert_same(ucall(u, xs, dys), want, "byte-swapped x")
        if dy is not None:
            assert_same(ucall(u, x, dys), want, "byte-swapped dy")
            assert_same(ucall(u, xs, dy), want, "byte-swapped x, native dy")
        out = np.full(n, 7, sw)
        assert ucall(u, x, dy, out=out) is out
        assert_same(native(out), want, "byte-swapped out")
        out2 = np.full(n, 7, sw)
        ucall(u, xs, dys, out=out2)
        assert_same(native(out2), want, "all byte-swapped")
        inplace = xs.copy()
        ucall(u, inplace, dys, out=inplace)
        assert_same(native(inplace), want, "byte-swapped in place")


@pytest.mark.parametrize("explicit", [">f4", ">f8", "<f4", "<f8"] + ([">f2", "<f2"] if "e->e" in ufuncs.gelu.types
                                                                    else []))
def test_explicit_byte_orders_through_the_wrapper(explicit):
    dt = np.dtype(explicit)
    x = sample(dt.newbyteorder("="), 5000)
    for a in APPROX:
        assert_same(fastgelu.gelu(x.astype(dt), approximate=a), fastgelu.gelu(x, approximate=a), explicit)
        assert_same(fastgelu.gelu_grad(x.astype(dt), approximate=a), fastgelu.gelu_grad(x, approximate=a))
        dy = dy_sample(dt.newbyteorder("="), 5000)
        assert_same(fastgelu.gelu_grad(x, dy.astype(dt), approximate=a),
                    fastgelu.gelu_grad(x, dy, approximate=a))


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", NAMES)
def test_misaligned(isa_uf, name, dtype):
    u = isa_uf[name]
    size = np.dtype(dtype).itemsize
    for n in (1, 7, 1001, 40_000):
        x, dy, want = _layout_case(isa_uf, name, dtype, n)
        for off in sorted({1, size - 1, size // 2 + 1} - {0, size}):
            xm = misaligned(x, off)
            assert not xm.flags.aligned or size == 1
            dym = None if dy is None else misaligned(dy, off)
            assert_same(ucall(u, xm, dym), want, f"misaligned x (offset {off}, n={n})")
            if dy is not None:
                assert_same(ucall(u, x, dym), want, "misaligned dy")
            out = misaligned(np.zeros(n, dtype), off)
            assert ucall(u, x, dy, out=out) is out
            assert_same(native(out), want, "misaligned out")
            ucall(u, xm, dym, out=xm)
            assert_same(native(xm), want, "misaligned in place")


STRIDES = (slice(None, None, 2), slice(1, None, 3), slice(None, None, 7), slice(None, None, -1),
           slice(None, None, -3), slice(-2, 5, -5), slice(3, -3, 1))


def _check_strided(u, name, dtype, base, dybase, strides=STRIDES, outs=3):
    for sl in strides:
        xv = base[sl]
        dyv = dybase[sl] if name in GRAD else None
        want = ucall(u, native(xv), None if dyv is None else native(dyv))
        assert_same(ucall(u, xv, dyv), want, f"strided x {sl}")
        if dyv is not None:
            assert_same(ucall(u, native(xv), dyv), want, f"strided dy {sl}")
        # strided / reversed out, and in place over a strided view
        store = np.full(2 * xv.size, 9, dtype)
        for out in (store[::-2], store[::2], store[1::2][::-1])[:outs]:
            out[...] = 9
            ucall(u, xv, dyv, out=out)
            assert_same(np.array(out), want, f"strided out for {sl}")
        inplace = base.copy()[sl]
        ucall(u, inplace, dyv, out=inplace)
        assert_same(np.array(inplace), want, f"in place over {sl}")


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", NAMES)
def test_strided_and_reversed(isa_uf, name, dtype):
    _check_strided(isa_uf[name], name, dtype, sample(dtype, SERIAL_MAX), dy_sample(dtype, SERIAL_MAX))


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", NAMES)
def test_strided_and_reversed_parallel(name, dtype):
    n = 2 * PARALLEL_N + 7
    _check_strided(UF[name], name, dtype, sample(dtype, n), dy_sample(dtype, n),
                   (slice(None, None, 2), slice(-1, None, -3)), outs=1)


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", NAMES)
def test_fortran_order_and_nd_views(isa_uf, name, dtype):
    u = isa_uf[name]
    shapes = [(64, 97), (5, 6, 7), (3, 1, 4, 1, 5)] + ([(300, 301)] if isa_uf is UF_DISPATCH else [])
    for shape in shapes:
        n = int(np.prod(shape))
        x = sample(dtype, n).reshape(shape)
        dy = dy_sample(dtype, n).reshape(shape) if name in GRAD else None
        want = ucall(u, x, dy)
        xf = np.asfortranarray(x)
        dyf = None if dy is None else np.asfortranarray(dy)
        assert_same(np.ascontiguousarray(ucall(u, xf, dyf)), want, f"Fortran {shape}")
        if dy is not None:
            assert_same(np.ascontiguousarray(ucall(u, x, dyf)), want, f"C x, Fortran dy {shape}")
        outf = np.asfortranarray(np.zeros(shape, dtype))
        ucall(u, x, dy, out=outf)
        assert_same(np.ascontiguousarray(outf), want, f"Fortran out {shape}")
        ucall(u, xf, dyf, out=xf)
        assert_same(np.ascontiguousarray(xf), want, f"Fortran in place {shape}")
        # transposed, every axis reversed
        xt = x.T
        assert_same(ucall(u, xt, None if dy is None else dy.T), np.ascontiguousarray(want.T), "transposed")
        rev = (slice(None, None, -1),) * x.ndim
        assert_same(ucall(u, x[rev], None if dy is None else dy[rev]), np.ascontiguousarray(want[rev]),
                    "all axes reversed")


@pytest.mark.skipif(BF16 is None, reason="ml_dtypes (bfloat16) not installed")
@pytest.mark.parametrize("name", NAMES)
def test_bfloat16_odd_layouts(name):
    u = UF[name]
    n = 5000
    x = sample(BF16, n)
    dy = dy_sample(BF16, n) if name in GRAD else None
    want = ucall(u, x, dy)
    assert want.dtype == BF16
    xm = misaligned(x, 1)
    assert_same(ucall(u, xm, None if dy is None else misaligned(dy, 1)), want, "misaligned bfloat16")
    out = misaligned(np.zeros(n, BF16), 1)
    ucall(u, x, dy, out=out)
    assert_same(out, want, "misaligned bfloat16 out")
    _check_strided(u, name, BF16, sample(BF16, SERIAL_MAX), dy_sample(BF16, SERIAL_MAX))
    x2 = x[:4900].reshape(70, 70)
    d2 = None if dy is None else dy[:4900].reshape(70, 70)
    assert_same(np.array(ucall(u, np.asfortranarray(x2), None if d2 is None else np.asfortranarray(d2)),
                         order="C"), ucall(u, x2, d2), "Fortran bfloat16")
    _check_overlap(u, name, BF16, 3000, (1, 7))


def _overlap_cases(n, k):
    """(in-slice, out-slice) pairs over one buffer of n + k elements: out shifted by k either way."""
    return {"out before in": (slice(k, n + k), slice(0, n)),
            "out after in": (slice(0, n), slice(k, n + k))}


def _check_overlap(u, name, dtype, n, shifts, repeat=1):
    buf0 = sample(dtype, n + 1000)
    dy0 = dy_sample(dtype, n + 1000)
    for k in [k for k in shifts for _ in range(repeat)]:  # a race may need more than one try to show
        for how, (si, so) in _overlap_cases(n, k).items():
            buf = buf0.copy()
            dy = dy0[:n] if name in GRAD else None
            want = ucall(u, buf[si].copy(), dy)
            ucall(u, buf[si], dy, out=buf[so])
            assert_same(buf[so], want, f"{how}, shift {k}, n={n}")
            if name in GRAD:  # out overlapping dy instead of x
                d = dy0.copy()
                want = ucall(u, buf0[:n], d[si].copy())
                ucall(u, buf0[:n], d[si], out=d[so])
                assert_same(d[so], want, f"out over dy, {how}, shift {k}")


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", NAMES)
def test_overlapping_input_and_output(isa_uf, name, dtype):
    """out a shifted view of x (x[k:] -> x[:-k] and the reverse): NumPy must behave as if it copied x."""
    _check_overlap(isa_uf[name], name, dtype, 3000, (1, 2, 7, 64, 999))


@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=ALL_FLOAT_IDS)
@pytest.mark.parametrize("name", NAMES)
def test_overlapping_input_and_output_parallel(name, dtype):
    """The same over arrays large enough to be split between threads."""
    _check_overlap(UF[name], name, dtype, PARALLEL_N, (1, 64), repeat=3)


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", NAMES)
def test_overlapping_strided_reversed_and_2d(name, dtype):
    u = UF[name]
    for n in (3000, PARALLEL_N):
        base = sample(dtype, 2 * n + 8)
        cases = {
            "strided out before in": (lambda b: b[2::2][:n], lambda b: b[0::2][:n]),
            "strided out after in": (lambda b: b[0::2][:n], lambda b: b[2::2][:n]),
            "reversed over itself": (lambda b: b[:n][::-1], lambda b: b[:n]),
            "reversed shifted": (lambda b: b[1:n + 1][::-1], lambda b: b[:n]),
            "interleaved": (lambda b: b[1::2][:n], lambda b: b[0::2][:n]),
        }
        for how, (fi, fo) in cases.items():
            buf = base.copy()
            dy = dy_sample(dtype, n) if name in GRAD else None
            want = ucall(u, fi(buf).copy(), dy)
            ucall(u, fi(buf), dy, out=fo(buf))
            assert_same(np.array(fo(buf)), want, f"{how} n={n}")
    # 2-D: rows shifted by one, and a square matrix into its own transpose
    m = sample(dtype, 300 * 301).reshape(300, 301)
    dy = dy_sample(dtype, 299 * 301).reshape(299, 301) if name in GRAD else None
    for how, (fi, fo) in {"rows up": (lambda b: b[1:], lambda b: b[:-1]),
                          "rows down": (lambda b: b[:-1], lambda b: b[1:])}.items():
        buf = m.copy()
        want = ucall(u, fi(buf).copy(), dy)
        ucall(u, fi(buf), dy, out=fo(buf))
        assert_same(fo(buf), want, how)
    sq = m[:, :300].copy()
    dsq = dy_sample(dtype, 300 * 300).reshape(300, 300) if name in GRAD else None
    want = ucall(u, sq.T.copy(), dsq)
    ucall(u, sq.T, dsq, out=sq)
    assert_same(sq, want, "transpose into itself")


@pytest.mark.parametrize("approximate", APPROX)
@pytest.mark.parametrize("shape", [(4, 8), (64, 1000)], ids=["small", "parallel"])
def test_overlapping_output_and_bias(approximate, shape):
    """The fused-bias path must read bias as it was, even when bias is a view into out (or into dy)."""
    x = sample(np.float32, int(np.prod(shape))).reshape(shape)
    x[~np.isfinite(x)] = 0.5
    dy = dy_sample(np.float32, x.size).reshape(shape)
    for row in (0, shape[0] // 2, -1):
        buf = x.copy()
        b = buf[row].copy()
        with np.errstate(over="ignore"):  # huge + huge overflows to inf here as in the kernel
            want = fastgelu.gelu(x + b, approximate=approximate)
        fastgelu.gelu(buf, approximate=approximate, bias=buf[row], out=buf)
        assert_same(buf, want, f"gelu(x, bias=x[{row}], out=x)")
        d = dy.copy()
        want = fastgelu.gelu_grad(x + dy[row], dy, approximate=approximate)
        fastgelu.gelu_grad(x, d, approximate=approximate, bias=d[row], out=d)
        assert_same(d, want, f"gelu_grad(x, dy, bias=dy[{row}], out=dy)")
        out = np.zeros_like(x)
        with np.errstate(over="ignore"):
            want = fastgelu.gelu(x + x[row], approximate=approximate)
        o = out.copy()
        o[row] = x[row]
        fastgelu.gelu(x, approximate=approximate, bias=o[row], out=o)
        assert_same(o, want, f"gelu(x, bias=out[{row}], out=out)")


@pytest.mark.parametrize("approximate", APPROX)
def test_overlapping_output_and_x_with_bias(approximate):
    n, w = 200, 300
    flat = sample(np.float64, (n + 1) * w)
    flat[~np.isfinite(flat)] = 1.0
    b = np.linspace(-1, 1, w)
    for how, (si, so) in _overlap_cases(n * w, w).items():
        buf = flat.copy()
        xv, ov = buf[si].reshape(n, w), buf[so].reshape(n, w)
        want = fastgelu.gelu(xv.copy() + b, approximate=approximate)
        fastgelu.gelu(xv, approximate=approximate, bias=b, out=ov)
        assert_same(ov, want, f"bias path, {how}")


@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=ALL_FLOAT_IDS)
@pytest.mark.parametrize("entry", ENTRY_IDS)
def test_zero_d_and_scalars(entry, dtype):
    f = ENTRIES[entry]
    u = UF[ENTRY_UFUNC[entry]]
    for v in _specials(np.float32) + [2.5, -0.3]:
        with np.errstate(all="ignore"):
            x0 = np.array(v, dtype=dtype)
        want = ucall(u, x0.reshape(1), np.ones(1, dtype))
        got = f(x0, np.array(1.0, dtype))
        assert np.ndim(got) == 0 and np.asarray(got).dtype == dtype, (entry, v, type(got))
        assert_same(np.asarray(got).reshape(1), want, f"0-d {v}")
        got = f(x0[()], np.ones((), dtype))  # a NumPy scalar in gives a scalar out
        assert np.isscalar(got) and np.asarray(got).dtype == dtype
        assert_same(np.asarray(got).reshape(1), want, f"scalar {v}")
        out = np.array(7.0, dtype)
        assert f(x0, np.array(1.0, dtype), out=out) is out
        assert_same(out.reshape(1), want, f"0-d out {v}")
        out = np.array(7.0, dtype)
        f(x0, np.array(1.0, dtype), out=out, where=False)
        assert_untouched(out, np.array(7.0, dtype), "0-d out, where=False")


@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=ALL_FLOAT_IDS)
@pytest.mark.parametrize("entry", ENTRY_IDS)
def test_empty(entry, dtype):
    f = ENTRIES[entry]
    for shape in [(0,), (0, 3), (3, 0), (2, 0, 5), (0, 0)]:
        x = np.empty(shape, dtype)
        res = f(x, np.empty(shape, dtype))
        assert res.shape == shape and res.dtype == dtype
        out = np.empty(shape, dtype)
        assert f(x, np.empty(shape, dtype), out=out) is out
        assert f(x, np.empty(shape, dtype), out=out, where=np.empty(shape, bool)) is out
        assert f(x[::-1], np.empty(shape, dtype)).shape == shape
    # empty broadcast against a non-empty gradient shape
    if ENTRY_UFUNC[entry] in GRAD and entry.startswith("ufuncs"):
        assert f(np.empty((0, 4), dtype), np.ones(4, dtype)).shape == (0, 4)


@pytest.mark.parametrize("dtype", FLOATS, ids=FLOAT_IDS)
@pytest.mark.parametrize("name", NAMES)
def test_memory_mapped_files(name, dtype, tmp_path):
    u = UF[name]
    for n in (5000, PARALLEL_N):
        x, dy, want = _layout_case(UF, name, dtype, n)
        px, po = tmp_path / f"x{n}.bin", tmp_path / f"out{n}.bin"
        x.tofile(px)
        mx = np.memmap(px, dtype=dtype, mode="r", shape=(n,))
        assert_same(ucall(u, mx, dy), want, "read-only memmap input")
        mo = np.memmap(po, dtype=dtype, mode="w+", shape=(n,))
        assert ucall(u, mx, dy, out=mo) is mo
        mo.flush()
        del mo
        assert_same(np.fromfile(po, dtype=dtype), want, "memmap out, from disk")
        # in place in a file
        mrw = np.memmap(px, dtype=dtype, mode="r+", shape=(n,))
        ucall(u, mrw, dy, out=mrw)
        mrw.flush()
        del mrw
        assert_same(np.fromfile(px, dtype=dtype), want, "memmap in place, from disk")
        # copy-on-write: the array changes, the file does not
        x.tofile(px)
        mc = np.memmap(px, dtype=dtype, mode="c", shape=(n,))
        ucall(u, mc, dy, out=mc)
        assert_same(np.array(mc), want, "copy-on-write memmap")
        del mc
        assert_same(np.fromfile(px, dtype=dtype), x, "file under a copy-on-write memmap")
        # at a misaligned offset inside the file, 2-D, Fortran order
        pm = tmp_path / f"m{n}.bin"
        with open(pm, "wb") as fh:
            fh.write(b"\x01" + x.tobytes())
        mm = np.memmap(pm, dtype=dtype, mode="r+", offset=1, shape=(n,))
        assert_same(ucall(u, mm, dy), want, "memmap at byte offset 1")
        ucall(u, mm, dy, out=mm)
        mm.flush()
        del mm
        assert_same(np.frombuffer(pm.read_bytes()[1:], dtype=dtype), want, "misaligned memmap in place")
    m2 = np.memmap(tmp_path / "f.bin", dtype=dtype, mode="w+", shape=(50, 60), order="F")
    src = sample(dtype, 3000).reshape(50, 60)
    m2[...] = src
    d2 = dy_sample(dtype, 3000).reshape(50, 60) if name in GRAD else None
    ucall(u, m2, d2, out=m2)
    assert_same(np.ascontiguousarray(m2), ucall(u, src, d2), "Fortran memmap in place")


@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=ALL_FLOAT_IDS)
@pytest.mark.parametrize("entry", ENTRY_IDS)
def test_where_writes_only_where_true(entry, dtype):
    f = ENTRIES[entry]
    rng = np.random.default_rng(3)
    for n in (1000, PARALLEL_N):
        calc = np.float32 if dtype.itemsize <= 2 else dtype
        with np.errstate(over="ignore"):
            x = sample(calc, n).astype(dtype)
            dy = dy_sample(calc, n).astype(dtype)
        full = f(x, dy)
        masks = {"random": rng.random(n) < 0.5, "all false": np.zeros(n, bool)}
        if n < PARALLEL_N:
            masks.update({"x > 0": np.asarray(x, np.float64) > 0, "all true": np.ones(n, bool),
                          "single": np.arange(n) == n // 2, "list": (np.arange(n) % 3 == 0).tolist()})
        for how, mask in masks.items():
            out = sentinel(n, dtype)
            before = out.copy()
            assert f(x, dy, out=out, where=mask) is out
            m = np.asarray(mask, bool)
            assert_untouched(out[~m], before[~m], f"where={how}: untouched part")
            assert_same(out[m], full[m], f"where={how}: written part")
        out = sentinel(n, dtype)
        before = out.copy()
        f(x, dy, out=out, where=False)
        assert_untouched(out, before, "where=False")
    # broadcast masks in 2-D, strided out
    with np.errstate(over="ignore"):
        x2 = sample(np.float32 if dtype.itemsize <= 2 else dtype, 60 * 50).astype(dtype).reshape(60, 50)
    full = f(x2, np.ones_like(x2))
    for mask in (np.arange(50) % 2 == 0, (np.arange(60) % 3 == 0)[:, None]):
        store = sentinel((60, 100), dtype)
        before = store.copy()
        out = store[:, ::2]
        f(x2, np.ones_like(x2), out=out, where=mask)
        m = np.broadcast_to(mask, (60, 50))
        assert_same(out[m], full[m], "broadcast where")
        assert_untouched(out[~m], before[:, ::2][~m], "broadcast where, untouched")
        assert_untouched(store[:, 1::2], before[:, 1::2], "where with strided out: gaps")


@pytest.mark.parametrize("approximate", APPROX)
def test_where_with_bias_writes_only_where_true(approximate):
    x = sample(np.float64, 40 * 30).reshape(40, 30)
    b = np.linspace(-2, 2, 30)
    mask = np.random.default_rng(0).random((40, 30)) < 0.3
    for func in (fastgelu.gelu, fastgelu.gelu_grad):
        full = func(x, approximate=approximate, bias=b)
        out = sentinel((40, 30), np.float64)
        before = out.copy()
        func(x, approximate=approximate, bias=b, out=out, where=mask)
        assert_untouched(out[~mask], before[~mask], "bias where: untouched")
        assert_same(out[mask], full[mask], "bias where: written")


@pytest.mark.huge
def test_more_than_2_31_elements_in_place():
    """In place over 2**31 + 1000 float32 (~8.6 GB): indices past 2**31 and the end are right."""
    n = 2 ** 31 + 1000
    period = 1 << 16
    pattern = sample(np.float32, period, seed=42)
    pattern[~np.isfinite(pattern)] = -1.5
    try:
        x = np.empty(n, np.float32)
    except MemoryError:
        pytest.fail("could not allocate 8.6 GB (leave out --run-huge on small machines)")
    whole = n - n % period
    x[:whole].reshape(-1, period)[...] = pattern
    x[whole:] = pattern[:n - whole]
    rng = np.random.default_rng(0)
    idx = np.unique(np.concatenate([
        np.arange(0, 70), np.arange(2 ** 31 - 300, 2 ** 31 + 300), np.arange(2 ** 30 - 40, 2 ** 30 + 40),
        np.arange(n - 1100, n), rng.integers(0, n, 20000), [2 ** 31 - 1, 2 ** 31, 2 ** 32 // 2 + 999]]))
    assert fastgelu.gelu(x, out=x) is x
    want = fastgelu.gelu(pattern)
    assert_same(x[idx], want[idx % period], "gelu in place over 2**31 + 1000")
    # the gradient in place (one dy for all) over the result
    assert fastgelu.gelu_grad(x, approximate="tanh", out=x) is x
    assert_same(x[idx], fastgelu.gelu_grad(want, approximate="tanh")[idx % period], "gelu_grad in place")
    del x
