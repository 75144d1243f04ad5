"""Higher-precision references for the six functions, and the ULP error measure.

Used by the tests, `python -m fastgelu check` and tools/sweep_f32.py, so all of them judge by the same
definitions. float64 references (`ref64`) are good to ~1e-15 relative, enough to judge float32 results;
float64 results are judged against mpmath (`ref_mp`). Phi is always formed as erfc(-x/sqrt2)/2, never
(1+erf)/2, which cancels for x < -3.
"""
import math

import numpy as np

SQRT1_2 = 0.7071067811865476
INV_SQRT_2PI = 0.3989422804014327
SQRT_2_OVER_PI = 0.7978845608028654
TANH_C = 0.044715
SIGMOID_C = 1.702

try:
    from scipy.special import erfc as _erfc
except ImportError:  # the CLI check runs without SciPy: stdlib erfc, one element at a time
    _erfc = np.frompyfunc(math.erfc, 1, 1)

NAMES = ("gelu", "gelu_tanh", "gelu_sigmoid", "gelu_grad", "gelu_tanh_grad", "gelu_sigmoid_grad")


def _sig_pair(w):
    """sigmoid(w) and sigmoid(-w) without overflow warnings (their product is sigma*(1-sigma))."""
    e = np.exp(-np.abs(w))
    big = 1.0 / (1.0 + e)
    small = e / (1.0 + e)
    pos = w >= 0
    return np.where(pos, big, small), np.where(pos, small, big)


def _w_tanh(x):
    return 2.0 * SQRT_2_OVER_PI * (x + TANH_C * x * x * x), 2.0 * SQRT_2_OVER_PI * (1.0 + 3.0 * TANH_C * x * x)


def _w_sigmoid(x):
    return SIGMOID_C * x, np.full_like(x, SIGMOID_C)


def ref64(name, x):
    """float64 reference of `name` at x (any real array); gradients with dy = 1.

    Returns (value, scale): `scale` is the magnitude whose ULP the error is counted in: |value| for the
    forward functions, and for gradients the larger of their two terms, so that the exact gradient's
    zero crossing near x = -0.75 (where Phi and x*phi cancel) is judged fairly.
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        if name in ("gelu", "gelu_grad"):
            phi_cdf = 0.5 * np.asarray(_erfc(-x * SQRT1_2), dtype=np.float64)
            if name == "gelu":
                y = np.where(np.isneginf(x), -0.0, x * phi_cdf)
                return y, np.abs(y)
            xpdf = np.where(np.isinf(x), 0.0, x * INV_SQRT_2PI * np.exp(-0.5 * x * x))
            return phi_cdf + xpdf, np.maximum(np.abs(phi_cdf), np.abs(xpdf))
        base = name.replace("_grad", "")
        w, dw = (_w_tanh if base == "gelu_tanh" else _w_sigmoid)(x)
        w = np.where(np.isnan(x), np.nan, w)
        s, s_neg = _sig_pair(w)
        if not name.endswith("_grad"):
            y = np.where(np.isneginf(x), -0.0, x * s)
            return y, np.abs(y)
        # x*w'*s*(1-s): the product tends to 0 where s*(1-s) underflows, even when x*w' is huge
        t = s * s_neg
        term = np.where(t == 0.0, 0.0, x * dw * t)
        return s + term, np.maximum(np.abs(s), np.abs(term))


def ref_mp(name, x, dps=50, factor=None):
    """mpmath reference at float64 points (slow: for samples of ~1e5). Returns (value, scale) as ref64.
    With `factor` (floats shaped like x), the value is factor * f(x), the product taken in mpmath and rounded
    once (the gated functions: GELU(gate) * up, dy * up * GELU'(gate)); scale is multiplied by |factor|."""
    import mpmath

    out = np.empty(len(x))
    scale = np.empty(len(x))
    fac = np.ones(len(x)) if factor is None else factor
    with mpmath.workdps(dps), np.errstate(all="ignore"):
        for i, xi in enumerate(np.asarray(x, dtype=np.float64)):
            mf = fac[i] if isinstance(fac[i], mpmath.mpf) else mpmath.mpf(float(fac[i]))
            fi = float(fac[i])
            # a finite mpmath factor beyond float64 (dy * up, exact) is still finite: its product is computed
            if not math.isfinite(xi) or not mpmath.isfinite(mf) or (name in ("gelu", "gelu_grad") and abs(xi) > 60):
                # Phi is 1 or below 1e-780 beyond 60: exact in double (mpmath's erfc overflows for huge |x|)
                if math.isfinite(xi) and name in ("gelu", "gelu_grad"):
                    v = np.array([(xi if xi > 0 else -0.0) if name == "gelu" else float(xi > 0)])
                    s = np.abs(v)
                else:
                    v, s = ref64(name, np.array([xi]))
                out[i], scale[i] = v[0] * fi, s[0] * abs(fi)
                if math.isfinite(xi) and xi < 0 and not math.isinf(fi) and name == "gelu":
                    out[i] = -0.0 * fi   # GELU(x) for x < -60 is a tiny negative number: the product is +-0
                if mpmath.isfinite(mf) and math.isinf(fi) and not math.isnan(v[0]):
                    # the factor beyond float64: v (exact here, or a tiny negative number as 0) times it
                    out[i] = float(mpmath.mpf(float(v[0])) * mf) if v[0] != 0 else (-0.0 if mf > 0 else 0.0)
                    scale[i] = abs(out[i])
                continue
            m = mpmath.mpf(float(xi))
            if name in ("gelu", "gelu_grad"):
                cdf = mpmath.erfc(-m / mpmath.sqrt(2)) / 2
                if name == "gelu":
                    v = m * cdf * mf
                    out[i], scale[i] = float(v), abs(float(v))
                    continue
                t2 = m * mpmath.exp(-m * m / 2) / mpmath.sqrt(2 * mpmath.pi)
                a, b = cdf, t2
            else:
                if name.startswith("gelu_tanh"):
                    w = 2 * mpmath.sqrt(2 / mpmath.pi) * (m + mpmath.mpf("0.044715") * m ** 3)
                    dw = 2 * mpmath.sqrt(2 / mpmath.pi) * (1 + 3 * mpmath.mpf("0.044715") * m ** 2)
                else:
                    w = mpmath.mpf("1.702") * m
                    dw = mpmath.mpf("1.702")
                s = 1 / (1 + mpmath.exp(-w))
                if not name.endswith("_grad"):
                    v = m * s * mf
                    out[i], scale[i] = float(v), abs(float(v))
                    continue
                a, b = s, m * dw * s * (1 - s)
            out[i] = float((a + b) * mf)
            scale[i] = max(abs(float(a * mf)), abs(float(b * mf)))
    return out, scale


def ref_gated(name, gate, up, dy=None, mp=False):
    """Reference of a gated function at float64 points: name "gelu_mul" (and _tanh/_sigmoid forms) gives
    (value, scale) of GELU(gate) * up; "..._mul_grad" gives ((dgate, scale), (dup, scale)) with
    dgate = dy * up * GELU'(gate), dup = dy * GELU(gate). float64 references (mp=False, for judging float32
    and narrower) or mpmath (mp=True, products taken in mpmath and rounded once)."""
    base = name.replace("_mul", "").replace("_grad", "")
    gate, up = np.broadcast_arrays(np.asarray(gate, np.float64), np.asarray(up, np.float64))
    gate, up = gate.ravel(), up.ravel()

    def times(fname, factor):
        if mp:
            return ref_mp(fname, gate, factor=factor)
        v, s = ref64(fname, gate)
        with np.errstate(all="ignore"):
            return _product(gate, v, factor), s * np.abs(factor)

    if not name.endswith("_grad"):
        return times(base, up)
    dy = np.broadcast_to(np.asarray(dy, np.float64), gate.shape)
    if mp:
        import mpmath
        with mpmath.workdps(60):   # dy * up exact (106 bits) unless a factor is not finite
            w = [mpmath.mpf(float(a)) * mpmath.mpf(float(b)) if np.isfinite(a) and np.isfinite(b) else a * b
                 for a, b in zip(dy, up)]
    else:
        with np.errstate(all="ignore"):
            w = dy * up   # exact in double for float32 factors
    return times(base + "_grad", w), times(base, dy)


def _product(gate, f, u):
    """f(gate) * u from a float64 f: an f that underflowed to 0 from a finite nonzero gate is a tiny nonzero
    number of the sign of gate (GELU; GELU' only underflows for gate < 0, where it is negative), so an
    infinite u gives +-inf, not NaN."""
    f = np.asarray(f, np.float64)
    under = (f == 0) & (gate != 0) & np.isfinite(gate) & np.isinf(u)
    return np.where(under, np.where(gate > 0, u, -u), f * u)


def ulp_error(y, ref, scale, dtype):
    """|y - ref| in units of the spacing of `dtype` at `scale` (the smallest subnormal at 0/subnormals).

    Exact matches (including infinities and signed zeros) count 0; NaN where the reference is not NaN,
    or a number where it is NaN, counts inf.
    """
    dtype = np.dtype(dtype)
    y = np.asarray(y).astype(np.float64)
    with np.errstate(all="ignore"):
        if dtype.kind == "f":
            spacing = np.spacing(np.abs(np.asarray(scale).astype(dtype))).astype(np.float64)
            biggest = float(np.finfo(dtype).max)
        else:  # bfloat16: float32's exponent with 16 fewer mantissa bits, subnormals included
            rounded = np.abs(np.asarray(scale).astype(dtype)).astype(np.float32)
            spacing = np.spacing(rounded).astype(np.float64) * 65536.0
            biggest = 3.3895313892515355e38
        spacing = np.where(np.isfinite(spacing), spacing, biggest)
        err = np.abs(y - ref) / spacing
    same = (y == ref) | (np.isnan(y) & np.isnan(ref))
    err = np.where(same, 0.0, err)
    return np.where(np.isnan(err), np.inf, err)


def dense_sample(dtype, n=200_000, seed=0):
    """Inputs that exercise every regime: specials, +-0, subnormals, dense near 0, the dip at -0.7518,
    the negative tail down to (and past) underflow, |x| in [3, 14], and huge |x| (x^3 overflows)."""
    dtype = np.dtype(dtype)
    fi = np.finfo(dtype)
    rng = np.random.default_rng(seed)
    tail = 40.0 if dtype == np.float64 else 14.0
    parts = [
        [0.0, -0.0, np.inf, -np.inf, np.nan, fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal,
         -fi.smallest_subnormal],
        rng.standard_normal(n // 4),
        np.linspace(-1.0, 1.0, n // 8),
        np.linspace(-0.76, -0.74, n // 16),
        rng.uniform(-tail, -3.0, n // 8),
        rng.uniform(3.0, 14.0, n // 16),
        -np.logspace(-45 if dtype == np.float32 else -320, 0, n // 16),
        np.logspace(-45 if dtype == np.float32 else -320, 0, n // 16),
        rng.uniform(-1.0, 1.0, n // 32) * fi.tiny,          # subnormal inputs
        np.sign(rng.standard_normal(n // 32)) * 10.0 ** rng.uniform(1, np.log10(fi.max), n // 32),
    ]
    with np.errstate(all="ignore"):
        return np.concatenate([np.asarray(p, dtype=np.float64) for p in parts]).astype(dtype)


# IEEE special cases with dy = 1: (input, expected); -0.0 and +0.0 are told apart in forward results
FWD_SPECIALS = [(np.inf, np.inf), (-np.inf, -0.0), (0.0, 0.0), (-0.0, -0.0)]
GRAD_SPECIALS = [(np.inf, 1.0), (-np.inf, 0.0), (0.0, 0.5), (-0.0, 0.5)]


def special_failures_one(name, func, dtype):
    """Human-readable failures of the IEEE special cases for one function (`func(x)`, or `func(x, dy)` for
    gradients) in one dtype; empty when all hold. Raises if a special input sets off an FP exception."""
    bad = []
    grad = name.endswith("_grad")

    def call(x, dy=1.0):
        xv = np.array([x], dtype)
        return (func(xv, np.full(1, dy, dtype)) if grad else func(xv))[0]

    with np.errstate(all="raise"):
        for x, want in (GRAD_SPECIALS if grad else FWD_SPECIALS):
            got = call(x)
            if not (got == want and (grad or np.signbit(got) == np.signbit(want))):
                bad.append(f"{name}({x!r}) = {got!r}, want {want!r}")
        if grad and call(np.inf, 3.0) != 3.0:
            bad.append(f"{name}(inf, dy=3) = {call(np.inf, 3.0)!r}, want 3.0")
        if not np.isnan(call(np.nan)):
            bad.append(f"{name}(nan) is not NaN")
    return bad


def special_failures(ufuncs_by_name, dtype):
    """special_failures_one for all six functions."""
    return [msg for name in NAMES for msg in special_failures_one(name, ufuncs_by_name[name], dtype)]
