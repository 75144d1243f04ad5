# tanh and sigmoid GELU approximations and their gradients (textually included by _kernels.pxi).
#
# Both are x*sigma(w(x)) with sigma(w) = 1/(1+exp(-w)):
#   tanh    : 0.5x(1+tanh u) = x*sigma(2u),  w = 2*sqrt(2/pi)*(x + 0.044715x^3),  w' = 2*sqrt(2/pi)*(1 + 3*0.044715x^2)
#   sigmoid : w = 1.702x,  w' = 1.702
# so one generic body (_xsig_block / _xsig_grad_block and what they call) is instantiated per variant through the fused
# type `xsig` over the variant tags VTanh and VSigmoid (a NULL pointer to one is passed): Cython specializes at compile
# time, so every instantiation is straight-line code whatever gcc decides to inline.  The tag only
# selects how w and w' are formed (_w_d, _w_dd, _dw) and the clamp.
#
# Formulation (no cancellation, no overflow):  with t = exp(-|w|) in (0, 1] and s = 1/(1+t),
#   sigma(w) = s (w >= 0) or t*s (w < 0),   1 - sigma(w) = t*s (w >= 0) or s (w < 0)
#   y  = x*sigma,   y' = sigma*(1 + x*w'*(1 - sigma))
# w has the sign of x for both variants.  x is clamped to [-L, L] for forming w (x^3 cannot overflow;
# beyond L, sigma is 1 or below every underflow threshold) and wherever x multiplies a vanishing factor
# (so -inf*0 cannot make NaN); the comparison order lets NaN through.
#
# float32 in the AVX-512, AVX2 and NEON builds (FG_F32_SIMD): the FG_F kernels (src/fg_xsig_f32.h), float32 arithmetic on full
#   vectors for the forward and the gradient. z = |w| log2(e) as a float pair (constants as hi + lo, x^2 and
#   products split by FMA: exp's argument must be right to ~2^-26 absolute up to |w| ~ 104), 2^-z = 2^-m 2^f with
#   a degree-6 polynomial, and every quotient by 1 + T or (1 + T)^2 corrected through its FMA remainder (so the
#   reciprocal may be vrcp14ps/vrcpps/vrecpe: no division), leaving T's error (~0.7 ulp) and one rounding:
#   within 2 ULP (src/fg_xsig_f32.h states the method; the measured maxima: docs/accuracy.md).
# float32 otherwise: the baseline build (no FMA) computes both in double; an FMA build made with
#   FASTGELU_F32_FWD=0 runs the forward as scalar float32 code (_xsig32: the same method, auto-vectorized,
#   with a division) and the gradient in double.  The double evaluation: w in plain double (rel. error
#   ~2^-51, and |w| < 2^7 where results are nonzero, so exp's argument is off by < 2^-44 absolute), exp_fast
#   (2^-27.7): total < 0.6 ulp.
# float64: w in double-double (exp's argument needs ~2^-63 relative: 1.702 and 0.044715 are not doubles,
#   x^3 is not exact) and exp_dd.  In the negative tail exp(w) is computed scaled by 2^_S so that it stays
#   normal until the final multiply: x*exp(w) is rounded once even when the result is subnormal.

ctypedef fused xsig:      # the two variants of this family, by their tags (_lists.pxi)
    VTanh
    VSigmoid

from libc.math cimport fabs, fabsf




cdef inline double _absclamp(double x, double L) noexcept nogil:
    # |x| limited to L; NaN passes (the comparison is false)
    x = fabs(x)
    return sel(x > L, L, x)

cdef inline double _w_d(double x, xsig* v) noexcept nogil:
    if xsig is VTanh:
        return _C2_HI * x * fg_fma(_A_HI, x * x, 1.0)
    else:
        return _K_HI * x

cdef inline dd_t _c2_cubic_dd(double x, double a_hi, double a_lo) noexcept nogil:
    """C2 x (1 + a x^2) as hi + lo (a = a_hi + a_lo), relative error ~2^-100 (x >= 0)."""
    cdef dd_t p, q, r
    p = two_prod(x, x)                                   # x^2
    q = two_prod(a_hi, p.hi)                             # a x^2
    q.lo = q.lo + fg_fma(a_hi, p.lo, a_lo * p.hi)
    r = two_sum(1.0, q.hi)                               # 1 + a x^2  (a x^2 may exceed 1)
    r.lo = r.lo + q.lo
    p = two_prod(x, r.hi)                                # x (1 + a x^2)
    p.lo = fg_fma(x, r.lo, p.lo)
    q = two_prod(_C2_HI, p.hi)
    q.lo = q.lo + fg_fma(_C2_HI, p.lo, _C2_LO * p.hi)
    return q

cdef inline dd_t _w_dd(double x, xsig* v) noexcept nogil:
    """w(x) as hi + lo, relative error ~2^-100 (0 <= x <= L)."""
    cdef dd_t q
    if xsig is VTanh:
        return _c2_cubic_dd(x, _A_HI, _A_LO)
    else:
        q = two_prod(_K_HI, x)
        q.lo = fg_fma(_K_LO, x, q.lo)
        return q

cdef inline double _dw(double x, xsig* v) noexcept nogil:
    if xsig is VTanh:
        return _C2_HI * fg_fma(_A3, x * x, 1.0)
    else:
        return _K_HI

cdef inline double _L32(xsig* v) noexcept nogil:
    # float32 clamp of |x|: w(L) <= 694 keeps exp_fast_unclamped in range, and is far past the float32
    # underflow of the results (tanh: x ~ -11, |w| ~ 112; sigmoid: |w| ~ 104 + log|x|)
    if xsig is VTanh:
        return 21.0
    else:
        return 400.0

cdef inline double _L64(xsig* v) noexcept nogil:
    # float64 clamp of |x|: w(L) ~ 1700-2000 is past the float64 underflow (|w| ~ 745 + log|x|);
    # exp_dd_scaled saturates to 0 there
    if xsig is VTanh:
        return 30.0
    else:
        return 1000.0

# float64 tail, phase by phase (also the body of the chunked block loops below).
#   _mexp64: T = exp(-w(|x|)) * 2^S   (w in double-double)
#   _fin64 / _fin64_grad: the rest, from x and T
cdef inline double _mexp64(double x, xsig* v) noexcept nogil:
    cdef dd_t w = _w_dd(_absclamp(x, _L64(v)), v)
    return exp_dd_scaled(-w.hi, -w.lo, _S)

cdef inline double _fin64(double x, double T, xsig* v) noexcept nogil:
    cdef double xa = _absclamp(x, _L64(v))
    cdef bint pos = x >= 0.0
    # x >= 0: x/(1+t);  x < 0: -|x| T/(1+t) 2^-S  (|x| clamped: -inf*T would be NaN when T = 0)
    return (sel(pos, x, -(xa * T)) / fg_fma(T, _INV_2S, 1.0)) * sel(pos, 1.0, _INV_2S)

cdef inline dd_t _p64(double xa, xsig* v) noexcept nogil:
    # |x| w'(|x|) as hi + lo. In the negative tail the gradient is ~ -sigma * p, so p's error is the
    # result's: without FMA, plain double takes five roundings, so p is carried in double-double there; with
    # FMA plain double is accurate enough (both measured: docs/design/cython-kernels.md).
    cdef dd_t q
    if FG_HAVE_FMA:
        if xsig is VTanh:
            q.hi = _C2_HI * fg_fma(_A3 * xa * xa, xa, xa)
        else:
            q.hi = _K_HI * xa
        q.lo = 0.0
        return q
    if xsig is VTanh:                         # C2 x (1 + 3a x^2)
        return _c2_cubic_dd(xa, _A3, _A3_LO)
    return _w_dd(xa, v)                        # sigmoid: x w'(x) = 1.702 x = w(x)

cdef inline double _fin64_grad(double x, double T, xsig* v) noexcept nogil:
    # Error budget (ulps of max(|sigma|, |x w' sigma (1-sigma)|), the measure of the contract): with
    # q = |x| w' s the tail is sigma (1 - q); its error is ~ err(sigma) + err(q) + 2 roundings, so s
    # is corrected for the rounding of 1+t and 1 - q is formed by one fma.
    cdef double xa = _absclamp(x, _L64(v))
    cdef bint pos = x >= 0.0
    cdef double t = T * _INV_2S
    cdef double d = 1.0 + t
    cdef double de = (1.0 - d) + t                 # 1 + t == d + de exactly (0 <= t <= 1)
    cdef double s0 = 1.0 / d
    cdef double s = fg_fma(-s0 * s0, de, s0)       # 1/(d + de) to ~0.5 ulp
    cdef dd_t p = _p64(xa, v)
    # x >= 0: s (1 + p t s);  x < 0: t s (1 - p s), t s carried as T s (times 2^S) in the tail.
    # Without FMA, 1 - p s = (1 - p) + p t s, since 1 - s = t s: 1 - p.hi is exact for p.hi >= 1/2, so
    # only the small last term and one addition round (p*s rounded alone cost up to 1/2 ulp of p)
    cdef double h, hn
    if FG_HAVE_FMA:                            # one rounding already
        h = fg_fma(sel(pos, p.hi * t, -p.hi), s, 1.0)
    else:
        hn = ((1.0 - p.hi) - p.lo) + p.hi * (t * s)
        h = sel(pos, (p.hi * t) * s + 1.0, hn)
    # sigma * h = (1 or T) * h / (d + de): one division by d, then the first-order correction for de
    cdef double y1 = (sel(pos, 1.0, T) * h) / d
    # T = 0 (underflowed, x far negative) makes y1 = -0.0, which the correction would turn into +0.0
    return sel(y1 == 0.0, y1, fg_fma(-y1, de * s0, y1)) * sel(pos, 1.0, _INV_2S)

ctypedef struct ff_t:
    float hi
    float lo

cdef inline ff_t _z(float xa, xsig* v) noexcept nogil:
    """|w| log2(e) for 0 <= |x| <= L as hi + lo, ~2^-45 relative: exp's argument needs ~2^-26 absolute up to 180."""
    cdef ff_t z
    cdef float s, sl, m, ml, t, bb, tl
    if xsig is VTanh:
        s = xa * xa
        sl = fg_fmaf(xa, xa, -s)                                    # xa^2 = s + sl exactly
        m = _KA_TANH_HI * s
        ml = fg_fmaf(_KA_TANH_HI, s, -m) + (_KA_TANH_HI * sl + _KA_TANH_LO * s)
        t = _K_TANH_HI + m                                          # two-sum: m may exceed K
        bb = t - _K_TANH_HI
        tl = ((_K_TANH_HI - (t - bb)) + (m - bb)) + (ml + _K_TANH_LO)
        z.hi = xa * t
        z.lo = fg_fmaf(xa, t, -z.hi) + xa * tl
    else:
        z.hi = _K_SIG_HI * xa
        z.lo = fg_fmaf(_K_SIG_HI, xa, -z.hi) + _K_SIG_LO * xa
    return z

cdef inline float _xsig32(float x, xsig* v) noexcept nogil:
    """float32 forward in float32 arithmetic: T = exp(-|w|) = 2^-z as 2^-m * 2^f, carried times 2^64 (normal
    down to the smallest results, which are then rounded once, in the last multiply)."""
    cdef float L = <float>_L32(v)
    cdef float xa = fabsf(x)
    xa = sel32(xa > L, L, xa)                       # NaN passes
    cdef ff_t z = _z(xa, v)
    z.hi = sel32(z.hi > _Z_MAX, _Z_MAX, z.hi)       # z.lo is then noise on a result that rounds to 0
    cdef float t = _SHIFTER_F - z.hi                # an integer: its low bits hold -m, m = round(z)
    cdef float ff = ((_SHIFTER_F - t) - z.hi) - z.lo    # m - z, |ff| <= 1/2 (first difference exact)
    cdef float c = _Q6
    c = c * ff + _Q5
    c = c * ff + _Q4
    c = c * ff + _Q3
    c = c * ff + _Q2
    c = c * ff + _Q1
    c = c * ff + _Q0
    cdef float p = c * ff + _ONE_F                  # 2^ff in [0.70, 1.42]
    cdef unsigned int k = fg_f32_bits(t) - fg_f32_bits(_SHIFTER_F) + 64u
    cdef float Tp = fg_f32_from_bits(fg_f32_bits(p) + (k << 23))     # T * 2^64
    cdef bint pos = x >= 0
    # x >= 0: x/(1+T);  x < 0 (w < 0): -|x| T/(1+T).  The numerator (-|x| T exactly, as two floats) and 1 + T
    # (exactly, as two floats) are divided with one division and an FMA-corrected remainder, so the quotient
    # carries only T's own error and one final rounding.
    cdef float xf = xa                              # |x| clamped to L: inf, -inf make no NaN below
    cdef float T = Tp * _TWOM64_F
    cdef float dh = T + _ONE_F
    cdef float dl = (_ONE_F - dh) + T               # 1 + T == dh + dl exactly (T <= 1)
    cdef float P = xf * Tp
    cdef float Pl = fg_fmaf(xf, Tp, -P)
    cdef float nh = sel32(pos, xf, -P)
    cdef float nl = sel32(pos, 0, -Pl)
    cdef float rinv = _ONE_F / dh
    cdef float q = nh * rinv
    cdef float r = fg_fmaf(-q, dh, nh) + nl          # nh + nl - q dh, the first part exact
    r = fg_fmaf(-q, dl, r)
    cdef float y = fg_fmaf(r, rinv, q) * sel32(pos, _ONE_F, _TWOM64_F)
    # beyond L, and at +-0, the result is x itself
    return sel32((x > L) | (x == 0), x, y)

cdef inline float _xsig_scalar32(float x, xsig* v) noexcept nogil:
    """float32 forward of the builds without SIMD kernels (_xsig_block)."""
    cdef double xd = x
    cdef double xa, T
    if FG_HAVE_FMA:
        return _xsig32(x, v)
    # without FMA the float32 quotient of _xsig32 cannot be corrected: computed in double
    xa = _absclamp(xd, _L32(v))
    T = exp_fast_unclamped(-_w_d(xa, v))        # exp(-|w|)
    return <float>(sel(xd >= 0.0, xd, -(xa * T)) / (1.0 + T))

cdef inline float _xsig_grad_scalar32(float x, float dy, xsig* v) noexcept nogil:
    """float32 gradient of the builds without SIMD kernels (_xsig_grad_block), in double."""
    cdef double xd = x
    cdef double xa = _absclamp(xd, _L32(v))
    cdef double T = exp_fast_unclamped(-_w_d(xa, v))
    cdef double s = 1.0 / (1.0 + T)
    cdef double q = xa * _dw(xa, v) * s
    cdef bint pos = xd >= 0.0
    # x = -inf: GELU' is 0 itself (the clamped x would make it tiny and nonzero: inf * it is NaN, not -inf)
    return <float>(dy * sel(xd == -INFINITY, 0.0, sel(pos, s, T * s) * (1.0 + sel(pos, q * T, -q))))

cdef enum:
    _CH = 64        # float64 chunk: three short loops over local arrays, each small enough to be inlined
                    # and vectorized on its own (one fused loop exceeds gcc's inlining limits for tanh)

cdef inline void _xsig_block(const real* x, real* y, Py_ssize_t n, xsig* v) noexcept nogil:
    cdef Py_ssize_t i, c, m
    cdef double T[_CH]
    if real is float and FG_F32_SIMD:
        if xsig is VTanh:
            fg_f_tanh_block(x, y, n)
        else:
            fg_f_sig_block(x, y, n)
    elif real is float:
        for i in range(n):
            y[i] = _xsig_scalar32(x[i], v)
    else:
        c = 0
        while c < n:
            m = n - c if n - c < _CH else _CH
            for i in range(m):
                T[i] = _mexp64(x[c + i], v)
            for i in range(m):
                y[c + i] = _fin64(x[c + i], T[i], v)
            c = c + _CH

cdef inline void _xsig_grad_block(const real* x, const real* dy, real* y, Py_ssize_t n, xsig* v) noexcept nogil:
    cdef Py_ssize_t i, c, m
    cdef double T[_CH]
    if real is float and FG_F32_SIMD:
        if xsig is VTanh:
            fg_f_tanh_grad_block(x, dy, y, n)
        else:
            fg_f_sig_grad_block(x, dy, y, n)
    elif real is float:
        for i in range(n):
            y[i] = _xsig_grad_scalar32(x[i], dy[i], v)
    else:
        c = 0
        while c < n:
            m = n - c if n - c < _CH else _CH
            for i in range(m):
                T[i] = _mexp64(x[c + i], v)
            for i in range(m):
                y[c + i] = grad_times64(dy[c + i], _fin64_grad(x[c + i], T[i], v), x[c + i])
            c = c + _CH

# ---- the interface the loops call (_lists.pxi dispatches to it) ---------------------------------------
cdef inline void gelu_tanh_block(const real* x, real* y, Py_ssize_t n) noexcept nogil:
    _xsig_block(x, y, n, <VTanh*>NULL)

cdef inline void gelu_tanh_grad_block(const real* x, const real* dy, real* y, Py_ssize_t n) noexcept nogil:
    _xsig_grad_block(x, dy, y, n, <VTanh*>NULL)

cdef inline void gelu_sigmoid_block(const real* x, real* y, Py_ssize_t n) noexcept nogil:
    _xsig_block(x, y, n, <VSigmoid*>NULL)

cdef inline void gelu_sigmoid_grad_block(const real* x, const real* dy, real* y, Py_ssize_t n) noexcept nogil:
    _xsig_grad_block(x, dy, y, n, <VSigmoid*>NULL)

cdef inline Py_ssize_t gelu_tanh_mul_block32(const float* g, const float* u, float* y, Py_ssize_t n, Py_ssize_t* lost,
                                             int* tiny, int* carry) noexcept nogil:
    return fg_f_tanh_mul_block(g, u, y, n, lost, tiny, carry)

cdef inline Py_ssize_t gelu_sigmoid_mul_block32(const float* g, const float* u, float* y, Py_ssize_t n,
                                                Py_ssize_t* lost, int* tiny, int* carry) noexcept nogil:
    return fg_f_sig_mul_block(g, u, y, n, lost, tiny, carry)
