"""The hostile matrix (issue 38): hypothesis strategies over shapes (broadcasting included), strides and layouts
(Fortran order, steps, reversed, stride 0, misaligned, byte-swapped), dtypes (float16/32/64, bfloat16, integers,
bool), aliasing (out over an input) and special values (signed zeros, subnormals, huge, the negative tail past
underflow, +-inf and NaN, in inputs and in grad_output) for every public call of the NumPy API: gelu and
gelu_grad (with and without a fused bias), gelu_mul, gelu_mul_grad, geglu, geglu_grad and the GELU / GeGLU
layers; and for the PyTorch operators when torch is installed. Each result is checked against
fastgelu._reference (values within the documented bounds, the sign of an underflowed result, NaN and inf where
the exact value has them) and against the same call on contiguous copies (bit for bit); each refusal against
the documented error (type, the argument named, nothing written)."""
import numpy as np
import pytest

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import fastgelu  # noqa: E402
from fastgelu import ufuncs  # noqa: E402
from fastgelu._reference import _product, ref64, ref_gated, ulp_error  # noqa: E402
from hostile_common import misaligned, sentinel, assert_untouched  # noqa: E402

APPROX = ("none", "tanh", "sigmoid")
PLAIN = {"none": "gelu", "tanh": "gelu_tanh", "sigmoid": "gelu_sigmoid"}
GATED = {"none": "gelu_mul", "tanh": "gelu_tanh_mul", "sigmoid": "gelu_sigmoid_mul"}
BF16 = ufuncs.BFLOAT16
FLOATS = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)] + ([BF16] if BF16 is not None else [])
INTS = [np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int32, np.int64)]

# bounds, in ULPs of the result type (docs/accuracy.md, docs/gated.md): float32 2 (forward and dy = 1), a
# product with another factor one rounding more; 16-bit types are computed in float32 and rounded once
F32_ULP, F32_ULP_PRODUCT, HALF_ULP = 2.0, 5.0, 1.0
F64_REL, F64_ABS = 1e-12, 1e-305   # ref64 is a float64 reference: a loose bound for float64 results

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


# ---- strategies -------------------------------------------------------------------------------------------

def _specials(tail):
    return [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -1e-310, 1e-40, -1e-40, 3e38, -3e38, 1e300, -1e300,
            -0.7517916, 5.9, -5.5, -13.2, -14.5, -20.0, -37.6, -38.6, -40.0, -60.0, -1e4, 2.7, tail]


def hostile(dtype):
    """Values of dtype: specials (cast to it: huge ones become inf in narrow types), the line, the tail."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.one_of(st.integers(max(info.min, -50), min(info.max, 50)),
                         st.sampled_from([int(info.min), int(info.max), 0]))
    tail = -41.0 if dtype == np.float64 else -16.0
    return st.one_of(st.floats(-6.0, 6.0), st.floats(tail, -3.0), st.sampled_from(_specials(tail)),
                     st.floats(allow_nan=True, allow_infinity=True))


def _cast(values, dtype):
    with np.errstate(all="ignore"):
        return np.asarray(values, np.float64).astype(np.float32 if np.dtype(dtype).itemsize == 2 else
                                                     np.float64).astype(dtype)


LAYOUTS = ["C", "F", "steps", "reversed", "misaligned", "swapped", "stride0"]


@st.composite
def operand(draw, dtype, shape, elements=None):
    """An array of `shape` and `dtype` in a drawn memory layout (the values drawn from `elements`)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    vals = draw(st.lists(hostile(dtype) if elements is None else elements, min_size=n, max_size=n))
    a = (np.array(vals, dtype) if dtype.kind in "biu" else _cast(vals, dtype)).reshape(shape)
    layout = draw(st.sampled_from(LAYOUTS))
    if layout == "F":
        a = np.asfortranarray(a)
    elif layout == "steps" and a.ndim:
        buf = np.zeros(tuple(2 * k + 1 for k in shape), dtype)
        view = buf[tuple(slice(1, None, 2) for _ in shape)]
        view[...] = a
        a = view
    elif layout == "reversed" and a.ndim:
        a = a[tuple(slice(None, None, -1) for _ in shape)].copy()[tuple(slice(None, None, -1) for _ in shape)]
    elif layout == "misaligned" and dtype.itemsize > 1:
        a = misaligned(a)
    elif layout == "swapped" and dtype.kind == "f" and dtype.itemsize > 1:
        a = a.astype(dtype.newbyteorder())
    elif layout == "stride0" and a.ndim and a.size:
        a = np.broadcast_to(a[(slice(0, 1),) + (slice(None),) * (a.ndim - 1)], shape)
    return a


def shapes2(n=2, min_dims=0):
    return hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=min_dims, max_dims=3, min_side=0,
                                             max_side=5)


def grad_values(dtype):
    """grad_output: 1, 0, +-inf, NaN, huge, tiny, ordinary."""
    if np.dtype(dtype).kind in "biu":
        return hostile(dtype)
    return st.one_of(st.sampled_from([1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -3e38, 1e300, 1e-30]),
                     st.floats(-1e3, 1e3))


def dtypes(ints=True):
    return st.sampled_from(FLOATS + (INTS if ints else []))


# ---- checks -------------------------------------------------------------------------------------------------

def _f64(a):
    return np.asarray(a).astype(np.float64)


def check_values(what, got, ref, scale, rdt, x=None, factor=None, forward=True):
    """got (of result dtype rdt) against (ref, scale) in float64: within the bound, NaN/inf where the exact
    value has them, and an underflowed result of the negative tail with the sign of the exact value."""
    got = np.asarray(got)
    assert got.dtype == rdt, (what, got.dtype, rdt)
    g = _f64(got).ravel()
    ref, scale = np.broadcast_to(ref, got.shape).ravel(), np.broadcast_to(scale, got.shape).ravel()
    if rdt == np.float64:
        # a GELU (GELU') below the normal range, the kernel's or the reference's, carries its absolute error
        # into the product with a factor (docs/gated.md: float64 has nothing wider)
        fac = 1.0 if factor is None else np.maximum(np.abs(np.broadcast_to(_f64(factor), got.shape).ravel()), 1.0)
        with np.errstate(all="ignore"):
            exact = (g == ref) | (np.isnan(g) & np.isnan(ref))
            bad = ~exact & ~(np.abs(g - ref) <= F64_REL * scale + F64_ABS * fac)
    else:
        bound = HALF_ULP if rdt.itemsize == 2 else (F32_ULP_PRODUCT if factor is not None else F32_ULP)
        bad = ulp_error(g, ref, scale, rdt) > bound
        # a finite exact value beyond the type's range rounds to +-inf (or, within the bound, to +-max)
        with np.errstate(all="ignore"):
            over = np.isfinite(ref) & ~np.isfinite(ref.astype(rdt).astype(np.float64))
        top = float((__import__("ml_dtypes").finfo(rdt) if rdt == BF16 else np.finfo(rdt)).max)
        with np.errstate(invalid="ignore"):   # (0 * inf where ref is 0: not among the lanes taken)
            bad[over] = ~((g == np.sign(ref) * np.inf) | (g == np.sign(ref) * top))[over]
    if x is not None:
        # the exact value of GELU(x) (x < 0) and GELU'(x) (x < -1) is negative: a zero result from a nonzero
        # finite factor has the sign of -factor
        xs = np.broadcast_to(_f64(x), got.shape).ravel()
        f = np.ones_like(g) if factor is None else np.broadcast_to(_f64(factor), got.shape).ravel()
        tail = (xs < 0) if forward else (xs < -1)
        tail &= np.isfinite(xs) & (f != 0) & np.isfinite(f) & (g == 0)
        bad |= tail & (np.signbit(g) == np.signbit(f))
    if bad.any():
        i = int(np.argmax(bad))

        def at(a):
            return np.broadcast_to(_f64(a), got.shape).ravel()[i]
        pytest.fail(f"{what}: {int(bad.sum())} of {bad.size} wrong; first: got {g[i]!r}, reference {ref[i]!r} "
                    f"(scale {scale[i]!r})" + ("" if x is None else f", x={at(x)!r}")
                    + ("" if factor is None else f", factor={at(factor)!r}"))


def plain(a):
    """A contiguous, aligned, native copy of a (the layout every other one must match bit for bit)."""
    a = np.asarray(a)
    return a.astype(a.dtype.newbyteorder("="), order="C")       # (0-d stays 0-d)


def same_bits(what, a, b):
    a, b = plain(a), plain(b)     # in native byte order (an in-place result keeps a swapped x's order)
    assert a.shape == b.shape and a.dtype == b.dtype, (what, a.shape, b.shape, a.dtype, b.dtype)
    a64, b64 = _f64(a), _f64(b)
    same = (np.array(a, order="C").view(f"u{a.dtype.itemsize}") == np.array(b, order="C").view(f"u{b.dtype.itemsize}"))
    assert (same | (np.isnan(a64) & np.isnan(b64))).all(), what


def result_dtype(ufunc, *dts):
    return ufunc.resolve_dtypes(tuple(np.dtype(d).newbyteorder("=") for d in dts) + (None,) * ufunc.nout)[-1]


def grad_ref(name, x, dy, rdt):
    """float64 reference of dy * name'(x) at x rounded to the result type: an underflowed GELU' from a finite
    x stands for a tiny negative number (so an infinite dy gives -dy)."""
    xr = _f64(plain(x).astype(rdt))
    v, s = ref64(name + "_grad", xr)
    xr, v, s, d = np.broadcast_arrays(xr, v, s, _f64(plain(dy).astype(rdt)) if dy is not None else 1.0)
    with np.errstate(all="ignore"):
        return _product(xr, v, d), s * np.abs(d), xr, d


# ---- the NumPy API -------------------------------------------------------------------------------------------

@st.composite
def plain_cases(draw):
    approximate = draw(st.sampled_from(APPROX))
    dt = draw(dtypes())
    grad = draw(st.booleans())
    with_bias = draw(st.booleans())
    if grad:
        xs, ds = draw(shapes2(2, min_dims=1 if with_bias else 0)).input_shapes
    else:
        xs, ds = draw(hnp.array_shapes(min_dims=1 if with_bias else 0, max_dims=3, min_side=0, max_side=5)), None
    x = draw(operand(dt, xs))
    dy = None
    if grad and draw(st.booleans()):
        ddt = draw(st.sampled_from([dt] + ([np.dtype(np.float32)] if dt.kind == "f" else [])))
        dy = draw(operand(ddt, ds, grad_values(ddt)))
    bias = None
    if with_bias:
        bdt = dt if dt.kind == "f" else np.dtype(np.float64)
        bias = draw(operand(bdt, xs[-1:], st.one_of(st.floats(-4, 4), st.sampled_from([0.0, -0.0, np.inf, np.nan]))))
    alias = draw(st.booleans())
    shape = np.broadcast_shapes(xs, ds if dy is not None else ())
    where = draw(hnp.arrays(np.bool_, shape)) if draw(st.booleans()) else None
    return approximate, grad, x, dy, bias, alias, where


@SETTINGS
@given(plain_cases())
def test_gelu_and_gelu_grad(case):
    approximate, grad, x, dy, bias, alias, where = case
    name = PLAIN[approximate]
    call = (lambda x, dy, **kw: fastgelu.gelu_grad(x, dy, approximate, bias=bias, **kw)) if grad else \
        (lambda x, dy, **kw: fastgelu.gelu(x, approximate, bias=bias, **kw))
    with np.errstate(all="raise"):    # no floating-point warning from any input
        got = np.asarray(call(x, dy))
    # the reference input: x + bias as NumPy computes it (the fused kernel gives the same bits)
    with np.errstate(invalid="ignore"):   # inf + -inf: NaN, as the kernel gives
        xin = x if bias is None else np.add(plain(x), plain(bias))
    u = getattr(ufuncs, name + "_grad" if grad else name)
    rdt = got.dtype
    if grad:
        want_dt = result_dtype(u, xin.dtype, (dy if dy is not None else xin).dtype) if dy is not None or \
            xin.dtype.kind in "biu" else xin.dtype.newbyteorder("=")
        assert rdt == want_dt, (rdt, want_dt)
        ref, scale, xr, d = grad_ref(name, xin, dy, rdt)
        check_values(f"{name}_grad bias={bias is not None}", got, ref, scale, rdt, x=xr, factor=d, forward=False)
    else:
        assert rdt == result_dtype(u, xin.dtype)
        xr = _f64(plain(xin).astype(rdt))
        ref, scale = ref64(name, xr)
        check_values(f"{name} bias={bias is not None}", got, ref, scale, rdt, x=xr)
    # layout independence: the bits of the call on contiguous native copies
    same_bits("layout", got, call(plain(x), None if dy is None else plain(dy)))
    # where=: the result where the mask is true, the out array's own bits elsewhere
    if where is not None and where.shape == got.shape:
        out = np.full(got.shape, 7, rdt)
        before = out.copy()
        assert call(x, dy, out=out, where=where) is out
        same_bits("where", out[where], got[where])
        same_bits("where (untouched)", out[~where], before[~where])
    # in place over x, where NumPy allows it (a writable x of the result's shape and dtype)
    if alias and x.flags.writeable and x.dtype == rdt and x.shape == got.shape and x.dtype.isnative and x.size:
        assert call(x, dy, out=x) is x
        same_bits("in place", x, got)


@st.composite
def gated_cases(draw):
    approximate = draw(st.sampled_from(APPROX))
    dt = draw(dtypes())
    grad = draw(st.booleans())
    shapes = draw(shapes2(3 if grad else 2)).input_shapes
    gate = draw(operand(dt, shapes[0]))
    up = draw(operand(dt, shapes[1], hostile(dt)))
    dy = draw(operand(dt, shapes[2], grad_values(dt))) if grad else None
    alias = draw(st.sampled_from([None, "gate", "up"]))
    return approximate, gate, up, dy, alias


@SETTINGS
@given(gated_cases())
def test_gelu_mul_and_gelu_mul_grad(case):
    approximate, gate, up, dy, alias = case
    name = GATED[approximate]
    with np.errstate(all="raise"):
        got = fastgelu.gelu_mul(gate, up, approximate) if dy is None else \
            fastgelu.gelu_mul_grad(gate, up, dy, approximate)
    rdt = np.asarray(got if dy is None else got[0]).dtype
    g = _f64(plain(gate).astype(rdt))
    u = _f64(plain(up).astype(rdt))
    if dy is None:
        gb, ub = np.broadcast_arrays(g, u)
        ref, scale = ref_gated(name, gb, ub)
        check_values(name, got, ref.reshape(gb.shape), scale.reshape(gb.shape), rdt, x=gb, factor=ub)
        same_bits("layout", got, fastgelu.gelu_mul(plain(gate), plain(up), approximate))
    else:
        gb, ub, db = np.broadcast_arrays(g, u, _f64(plain(dy).astype(rdt)))
        (rg, sg), (ru, su) = ref_gated(name + "_grad", gb, ub, db.ravel())
        with np.errstate(all="ignore"):
            w = db * ub
        ovf = np.isfinite(db) & np.isfinite(ub) & ~np.isfinite(w)
        if rdt == np.float64 and ovf.any():
            # dy*up beyond float64 from finite factors: the float64 reference is +-inf there, so those lanes
            # take mpmath's (the exact product) where it is finite, and |dy*up| as the factor of the absolute
            # bound is the largest double
            o = np.flatnonzero(ovf.ravel())
            (rm, sm), _ = ref_gated(name + "_grad", gb.ravel()[o], ub.ravel()[o], db.ravel()[o], mp=True)
            keep = np.isfinite(rm)
            rg, sg = rg.copy(), sg.copy()
            rg[o[keep]], sg[o[keep]] = rm[keep], sm[keep]
            w = np.where(ovf, np.sign(w) * np.finfo(np.float64).max, w)
        check_values(name + "_grad dgate", got[0], rg.reshape(gb.shape), sg.reshape(gb.shape), rdt, x=gb,
                     factor=w, forward=False)
        check_values(name + "_grad dup", got[1], ru.reshape(gb.shape), su.reshape(gb.shape), rdt, x=gb, factor=db)
        again = fastgelu.gelu_mul_grad(plain(gate), plain(up), plain(dy), approximate)
        same_bits("layout dgate", got[0], again[0])
        same_bits("layout dup", got[1], again[1])
    # in place over gate or up, where NumPy allows it
    target = {"gate": gate, "up": up}.get(alias)
    res = got if dy is None else got[0]
    if target is not None and target.flags.writeable and target.dtype == rdt and target.dtype.isnative and \
            target.shape == np.shape(res) and target.size:
        if dy is None:
            assert fastgelu.gelu_mul(gate, up, approximate, out=target) is target
            same_bits("in place", target, got)
        else:
            other = np.empty_like(got[1])
            outs = (target, other) if alias == "gate" else (other, target)
            fastgelu.gelu_mul_grad(gate, up, dy, approximate, out=outs)
            same_bits("in place dgate", outs[0], got[0])
            same_bits("in place dup", outs[1], got[1])


@st.composite
def geglu_cases(draw):
    approximate = draw(st.sampled_from(APPROX))
    dt = draw(dtypes())
    shape = list(draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    shape[axis] *= 2
    x = draw(operand(dt, tuple(shape)))
    half = list(shape)
    half[axis] //= 2
    dy = draw(operand(dt, tuple(half), grad_values(dt)))
    return approximate, x, axis, dy, draw(st.booleans())


@SETTINGS
@given(geglu_cases())
def test_geglu_geglu_grad_and_the_layers(case):
    approximate, x, axis, dy, layer = case
    gate, up = np.split(plain(x), 2, axis=axis)
    if layer:
        m = fastgelu.GeGLU(approximate, axis=axis)
        y = m(x)
        dx = m.backward(dy)
    else:
        y = fastgelu.geglu(x, approximate, axis=axis)
        dx = fastgelu.geglu_grad(x, dy, approximate, axis=axis)
    same_bits("geglu is gelu_mul of the halves", y, fastgelu.gelu_mul(gate, up, approximate))
    dg, du = fastgelu.gelu_mul_grad(gate, up, plain(dy), approximate)
    assert dx.shape == x.shape and dx.dtype == np.asarray(dg).dtype == y.dtype
    dgot_g, dgot_u = np.split(dx, 2, axis=axis)
    same_bits("geglu_grad dgate", dgot_g, dg)
    same_bits("geglu_grad dup", dgot_u, du)
    # the plain layer: forward and backward are gelu and gelu_grad, in place too
    if x.dtype.kind == "f" and x.flags.writeable:
        m = fastgelu.GELU(approximate, inplace=layer)
        before = x.copy()
        y1 = m(x)
        same_bits("GELU layer", y1, fastgelu.gelu(before, approximate))
        full = np.concatenate([dy, dy], axis=axis)
        same_bits("GELU layer backward", m.backward(full), fastgelu.gelu_grad(before, full, approximate))


# ---- documented errors: the type, the argument named, nothing written --------------------------------------

BAD_VALUES = {"complex": np.ones(4, np.complex64), "object": np.array([1.0, None, 2.0, 3.0], dtype=object),
              "text": "1.0", "datetime": np.array(["2026-01-01"] * 4, "datetime64[D]"),
              "longdouble": np.ones(4, np.longdouble) if np.dtype(np.longdouble).itemsize > 8 else
              np.ones(4, np.complex128)}


def _bad_calls(approximate, bad, out):
    ok = np.ones(4)
    return [
        ("gelu", "x", lambda: fastgelu.gelu(bad, approximate, out=out)),
        ("gelu_grad", "x", lambda: fastgelu.gelu_grad(bad, ok, approximate, out=out)),
        ("gelu_grad", "grad_output", lambda: fastgelu.gelu_grad(ok, bad, approximate, out=out)),
        ("gelu", "bias", lambda: fastgelu.gelu(ok, approximate, bias=bad, out=out)),
        ("gelu_mul", "gate", lambda: fastgelu.gelu_mul(bad, ok, approximate, out=out)),
        ("gelu_mul", "up", lambda: fastgelu.gelu_mul(ok, bad, approximate, out=out)),
        ("gelu_mul_grad", "grad_output", lambda: fastgelu.gelu_mul_grad(ok, ok, bad, approximate, out=(out, None))),
        ("geglu", "x", lambda: fastgelu.geglu(bad, approximate)),
        ("geglu_grad", "grad_output", lambda: fastgelu.geglu_grad(np.ones(8), bad, approximate)),
    ]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(APPROX), st.sampled_from(sorted(BAD_VALUES)), st.sampled_from(range(9)))
def test_bad_dtypes_name_the_argument(approximate, kind, which):
    out = sentinel((4,), np.float64)
    before = out.copy()
    func, arg, call = _bad_calls(approximate, BAD_VALUES[kind], out)[which]
    with pytest.raises(TypeError, match=f"{func}: {arg}"):
        call()
    assert_untouched(out, before)


@st.composite
def bad_shape_cases(draw):
    approximate = draw(st.sampled_from(APPROX))
    dt = draw(st.sampled_from(FLOATS))
    xs = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=5))   # an out one longer never fits
    x = draw(operand(dt, xs))
    kind = draw(st.sampled_from(["out shape", "out read-only", "bias shape", "approximate", "odd length",
                                 "axis", "gated out tuple"]))
    return approximate, x, kind, draw(st.integers(1, 3))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bad_shape_cases())
def test_bad_shapes_and_arguments_are_refused_before_writing(case):
    approximate, x, kind, k = case
    shape = x.shape
    out = sentinel(shape[:-1] + (shape[-1] + k,), x.dtype) if x.dtype != BF16 else \
        np.full(shape[:-1] + (shape[-1] + k,), 7, x.dtype)
    before = out.copy()
    bias = np.zeros(shape[-1:], x.dtype)
    if kind == "out shape":
        for call in (lambda: fastgelu.gelu(x, approximate, out=out),
                     lambda: fastgelu.gelu(x, approximate, bias=bias, out=out),
                     lambda: fastgelu.gelu_grad(x, x, approximate, bias=bias, out=out),
                     lambda: fastgelu.gelu_mul(x, x, approximate, out=out)):
            with pytest.raises(ValueError):
                call()
    elif kind == "out read-only":
        ro = np.zeros(shape, x.dtype)
        ro.flags.writeable = False
        for call in (lambda: fastgelu.gelu(x, approximate, out=ro),
                     lambda: fastgelu.gelu(x, approximate, bias=bias, out=ro),
                     lambda: fastgelu.gelu_mul(x, x, approximate, out=ro)):
            with pytest.raises(ValueError, match="read-only"):
                call()
    elif kind == "bias shape":
        with pytest.raises(ValueError, match="bias must have shape"):
            fastgelu.gelu(x, approximate, bias=np.zeros(shape[-1] + k, x.dtype), out=out)
    elif kind == "approximate":
        for call in (lambda: fastgelu.gelu(x, "exact"), lambda: fastgelu.gelu_grad(x, None, "TANH"),
                     lambda: fastgelu.gelu_mul(x, x, None), lambda: fastgelu.geglu(x, 1),
                     lambda: fastgelu.GELU("erf"), lambda: fastgelu.GeGLU("gelu")):
            with pytest.raises(ValueError, match="approximate"):
                call()
    elif kind == "odd length":
        odd = np.concatenate([x, x[..., :1]], axis=-1) if shape[-1] % 2 == 0 else x
        with pytest.raises(ValueError, match="odd length"):
            fastgelu.geglu(odd, approximate, out=out)
    elif kind == "axis":
        with pytest.raises(np.exceptions.AxisError, match="axis"):
            fastgelu.geglu(x, approximate, axis=x.ndim + k - 1)
    else:
        with pytest.raises(TypeError, match="out must be a tuple of 2"):
            fastgelu.gelu_mul_grad(x, x, x, approximate, out=out)
    assert_untouched(out, before)


# ---- the PyTorch operators ----------------------------------------------------------------------------------

@st.composite
def torch_cases(draw):
    dt = draw(st.sampled_from(["float32", "float64", "float16", "bfloat16"]))
    approximate = draw(st.sampled_from(APPROX))
    gs, us = draw(shapes2(2, min_dims=0)).input_shapes
    npdt = {"bfloat16": BF16}.get(dt, np.dtype(dt))
    if npdt is None:
        npdt = np.dtype(np.float32)
    gate = _cast(draw(st.lists(hostile(np.float32), min_size=int(np.prod(gs)), max_size=int(np.prod(gs)))),
                 np.float32).reshape(gs)
    up = _cast(draw(st.lists(hostile(np.float32), min_size=int(np.prod(us)), max_size=int(np.prod(us)))),
               np.float32).reshape(us)
    layout = draw(st.sampled_from(["contiguous", "transposed", "expanded"]))
    return dt, approximate, gate, up, layout


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(torch_cases())
# found by CI: the gradient of a broadcast gate sums past float32's largest value
@example(("float32", "none", np.array([3e38, 3e38], np.float32), np.array(0.0, np.float32), "contiguous"))
def test_torch_operators_match_numpy(case):
    """fastgelu.torch.gelu / gelu_mul (forward and backward, any layout, broadcasting) give the bits of the
    NumPy API on the same values."""
    torch = pytest.importorskip("torch")
    fgt = pytest.importorskip("fastgelu.torch")
    dt, approximate, gate, up, layout = case
    tdt = getattr(torch, dt)

    def tensor(a):
        t = torch.from_numpy(np.ascontiguousarray(a)).to(tdt)
        if layout == "transposed" and t.dim() >= 2:
            t = t.transpose(0, 1).contiguous().transpose(0, 1)
        elif layout == "expanded" and t.dim() >= 1 and t.numel() and t.shape[0] > 1:
            t = t[:1].expand(t.shape)
        return t

    def numpy_of(t):
        return t.float().numpy().astype(np.float64) if dt == "bfloat16" else t.numpy().astype(np.float64)

    tg, tu = tensor(gate), tensor(up)
    ng = np.asarray(fgt.as_numpy(tg.contiguous()))
    nu = np.asarray(fgt.as_numpy(tu.contiguous()))
    y = fgt.gelu_mul(tg, tu, approximate)
    same_bits("gelu_mul", np.asarray(fgt.as_numpy(y.contiguous())), fastgelu.gelu_mul(ng, nu, approximate))
    y1 = fgt.gelu(tg, approximate)
    same_bits("gelu", np.asarray(fgt.as_numpy(y1.contiguous())), fastgelu.gelu(ng, approximate))
    # backward: the gradients summed back to each input's shape
    a, b = tg.clone().requires_grad_(), tu.clone().requires_grad_()
    out = fgt.gelu_mul(a, b, approximate)
    dy = torch.ones_like(out)
    ga, gb = torch.autograd.grad(out, (a, b), dy)
    dg, du = fastgelu.gelu_mul_grad(ng, nu, np.ones(out.shape, ng.dtype), approximate)
    assert ga.shape == tg.shape and gb.shape == tu.shape
    with np.errstate(all="ignore"):
        for got, full, shape in ((ga, dg, tg.shape), (gb, du, tu.shape)):
            full = np.asarray(full, np.float64)
            lead = full.ndim - len(shape)
            want = full.sum(axis=tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                                            if n == 1 and full.shape[lead + i] != 1)).reshape(shape)
            g = numpy_of(got)
            tol = 1e-12 if dt == "float64" else (1e-5 if dt == "float32" else 1e-2)
            ok = (np.isclose(g, want, rtol=tol, atol=tol) | (np.isnan(g) & np.isnan(want))
                  | (np.isinf(want) & (g == want))
                  # a sum past the dtype's largest finite value: PyTorch sums in the dtype and overflows
                  | ((np.abs(want) > torch.finfo(tdt).max * (1 - tol)) & (g == np.sign(want) * np.inf)))
            if full.shape == tuple(shape):      # no sum: the very bits
                ok = (g == want) | (np.isnan(g) & np.isnan(want))
            assert ok.all(), (dt, approximate, g[~ok], want[~ok])
