# Shared floating-point primitives for the fastgelu kernels (textually included by _kernels.pxi).
#
# Everything here is branch-free, inline, nogil and written so gcc -O3 auto-vectorizes it in the
# three builds (SSE2 baseline, AVX2+FMA, AVX-512).  No fast-math: IEEE semantics are relied upon.
# Constants and polynomial coefficients are derived by tools/fit_fp.py.
#
# Note on contraction: compilers fuse a*b+c into an FMA by default wherever the target has one (gcc:
# -ffp-contract=fast, across statements; clang: =on, within one expression): in the x86 FMA builds and in
# every aarch64 build, where FMA is baseline.  Dekker's two_prod needs separately rounded products: fused
# into their neighbouring additions, its pieces no longer describe one rounded product (float64 tails off by
# hundreds of ulp).  So FG_HAVE_FMA is set wherever an FMA instruction exists (the compiler's own macros,
# below), the error-free products are explicit fma() there, and Dekker's form is compiled only for targets
# with no FMA instruction to contract into (x86 baseline).  Nothing else here needs a separate rounding.
#
# Branch-free selects: the kernels compute every piece of a function unconditionally and combine them by
# sel() (src/fg_fp.h, a bit-mask select).  With `a if c else b` gcc sinks the unselected operand's
# arithmetic into a branch that -ftrapping-math forbids it to if-convert: the loop then stays scalar in the
# AVX2/SSE2 builds (AVX-512 masks hide it).


ctypedef struct dd_t:
    double hi
    double lo


from libc.math cimport fabs, INFINITY


cdef inline double grad_times64(double dy, double g, double x) noexcept nogil:
    """dy * g for a float64 gradient g = GELU'(x) (any form) that may have underflowed: far in the negative
    tail (x < -1) a g of 0 stands for a tiny negative number, so an infinite dy gives -dy (the exact product),
    not inf * 0 = NaN; x = -inf keeps NaN (GELU'(-inf) is 0 itself). Branch-free (a select)."""
    return sel((g == 0.0) & (x < -1.0) & (x > -INFINITY) & (fabs(dy) == INFINITY), -dy, dy * g)

cdef inline dd_t two_prod(double a, double b) noexcept nogil:
    """hi + lo == a*b exactly, hi = fl(a*b)."""
    cdef dd_t r
    r.hi = a * b
    r.lo = fg_two_prod_err(a, b, r.hi)
    return r

cdef inline dd_t fast_two_sum(double a, double b) noexcept nogil:
    """hi + lo == a + b exactly, provided |a| >= |b| (or a == 0)."""
    cdef dd_t r
    r.hi = a + b
    r.lo = b - (r.hi - a)
    return r

cdef inline dd_t two_sum(double a, double b) noexcept nogil:
    """hi + lo == a + b exactly, no ordering requirement (Knuth, 6 flops)."""
    cdef dd_t r
    cdef double bb
    r.hi = a + b
    bb = r.hi - a
    r.lo = (a - (r.hi - bb)) + (b - bb)
    return r

# ---------------------------------------------------------------------------------------------------
# exp
# Reduction: x = n*ln2 + r, |r| <= ln2/2, n = round(x/ln2) by the 1.5*2^52 shifter (exact for |x/ln2|
# < 2^51, works in every rounding-to-nearest build without float->int conversion).  ln2 = LN2_HI + LN2_LO
# with LN2_HI carrying 32 significant bits, so n*LN2_HI is exact for |n| < 2^21 and x - n*LN2_HI is
# exact (Sterbenz).  2^n is built by writing the biased exponent into the bit pattern.
# exp(r) = 1 + r + r^2 * Q(r): _EQ* (degree 9, minimax for |r| <= ln2/2; max rel. error of the
# polynomial with these double coefficients 1.4e-17 = 0.12 ulp) and _FQ* (degree 4 for the fast exp:
# 4.4e-9 = 2^-27.8, < 0.08 ulp of float32) -- both from tools/fit_fp.py

cdef inline double pow2i(double k) noexcept nogil:
    """2^k for an integer-valued double k in [-1022, 1023] (bit construction, exact)."""
    # the low 12 bits of (k + 1.5*2^52 + 1023)'s pattern are k + 1023; <<52 moves them into the
    # exponent field and shifts everything else out
    return fg_f64_from_bits(fg_f64_bits(k + _SHIFTER_BIAS) << 52)

cdef inline double exp_dd_scaled(double hi, double lo, double s) noexcept nogil:
    """exp(hi + lo) * 2^s, for |lo| <= ulp(hi) and an integer-valued s with |s| <= 200.

    <= 1 ulp including subnormal results; +inf/0 on overflow/underflow, NaN in -> NaN out.  The 2^(n+s)
    scaling is applied in two steps 2^k1 * 2^k2 so that subnormal results are rounded once, at the last
    multiply, and no intermediate power of two under/overflows.
    The scale s lets callers keep a tiny exp(...) normal until after a further multiply.
    """
    cdef double k, k1
    # clamp so that n stays within [-1443, 1443]; beyond the clamp the result is 0 or inf anyway.
    # comparison order lets NaN through (both tests false).  lo is dropped when hi was clamped (it
    # could be huge: lo ~ ulp(hi)).
    lo = sel((hi > 1000.0) | (hi < -1000.0), 0.0, lo)
    hi = sel(hi > 1000.0, 1000.0, hi)
    hi = sel(hi < -1000.0, -1000.0, hi)
    cdef dd_t e = _exp_dd_reduced(hi, lo)
    k = e.lo + s
    k1 = (fg_fma(k, 0.5, _SHIFTER) - _SHIFTER)   # ~k/2, integer
    return (e.hi * pow2i(k1)) * pow2i(k - k1)

cdef inline dd_t _exp_dd_reduced(double hi, double lo) noexcept nogil:
    """exp(hi + lo) = r.hi * 2^r.lo, r.hi in [0.7, 1.42], r.lo an integer, for |hi| <= 1000."""
    cdef double n, t, rh, rl, r, c, q
    cdef dd_t res
    t = fg_fma(hi, _INV_LN2, _SHIFTER)
    n = t - _SHIFTER
    rh = hi - n * _LN2_HI                  # exact
    rl = lo - n * _LN2_LO                  # |rl| < 3e-7, error ~1e-23
    r = rh + rl
    c = (rh - r) + rl                      # r + c == rh + rl up to ~2^-106 (fast_two_sum-like)
    q = _EQ9
    q = fg_fma(q, r, _EQ8)
    q = fg_fma(q, r, _EQ7)
    q = fg_fma(q, r, _EQ6)
    q = fg_fma(q, r, _EQ5)
    q = fg_fma(q, r, _EQ4)
    q = fg_fma(q, r, _EQ3)
    q = fg_fma(q, r, _EQ2)
    q = fg_fma(q, r, _EQ1)
    q = fg_fma(q, r, _EQ0)
    # exp(r + c) = exp(r)(1 + c + ...) ~ 1 + r + r^2 q + c (1 + r)
    res.hi = 1.0 + (r + fg_fma(r * r, q, fg_fma(c, r, c)))
    res.lo = n
    return res

cdef inline double exp_dd_normal(double hi, double lo) noexcept nogil:
    """exp(hi + lo) like exp_dd, without its clamps and two-step scaling: ONLY for -708 <= hi <= 709
    (normal result; callers that bound hi save ~13 operations per lane)."""
    cdef dd_t e = _exp_dd_reduced(hi, lo)
    return e.hi * pow2i(e.lo)

cdef inline double exp_dd(double hi, double lo) noexcept nogil:
    """exp(hi + lo) to <= 1 ulp (double), subnormal results correct, overflow -> inf, underflow -> 0."""
    return exp_dd_scaled(hi, lo, 0.0)

cdef inline double exp_fast_unclamped(double x) noexcept nogil:
    """exp(x), relative error < 2^-27.5, for |x| <= 708 ONLY (no clamp; callers that bound x save it).

    For float32 results computed in double (2^-27.5 is < 0.1 ulp of float32).  NaN -> NaN.
    """
    cdef double t, n, r, q
    t = fg_fma(x, _INV_LN2, _SHIFTER)
    n = t - _SHIFTER
    r = fg_fma(n, -_LN2, x)               # abs. error <= 1024*|ln2 - LN2| + rounding ~ 1e-13
    q = _FQ4
    q = fg_fma(q, r, _FQ3)
    q = fg_fma(q, r, _FQ2)
    q = fg_fma(q, r, _FQ1)
    q = fg_fma(q, r, _FQ0)
    # n in [-1022, 1022]: 2^n in one step; the low bits of t already hold n (t = 1.5*2^52 + n)
    return fg_fma(r * r, q, 1.0 + r) * fg_f64_from_bits((fg_f64_bits(t) + 1023) << 52)

cdef inline double exp_fast(double x) noexcept nogil:
    """exp(x) with relative error < 2^-27.5 for |x| <= 708 (for float32 results computed in double).

    Arguments are clamped to [-708, 708] (so the result is always a normal double, never 0/inf: callers
    that need exact 0/inf must handle it; float32 users see 0/inf after their final rounding anyway).
    NaN -> NaN.
    """
    x = sel(x > 708.0, 708.0, x)
    x = sel(x < -708.0, -708.0, x)
    return exp_fast_unclamped(x)
