# tanh and sigmoid GELU approximations and their gradients (textually included by _kernels.pxi).
#
# Both are x*sigma(w(x)) with sigma(w) = 1/(1+exp(-w)):
#   tanh    : 0.5x(1+tanh u) = x*sigma(2u),  w = 2*sqrt(2/pi)*(x + 0.044715x^3),  w' = 2*sqrt(2/pi)*(1 + 3*0.044715x^2)
#   sigmoid : w = 1.702x,  w' = 1.702
# so one generic body (_xsig / _xsig_grad / their blocks) is instantiated per variant through the fused
# tag type `vtag` (a NULL pointer of type _Tanh* or _Sig* is passed): Cython specializes at compile
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
# float32: evaluated in double; w in plain double (rel. error ~2^-51, and |w| < 2^7 where results are
#   nonzero, so exp's argument is off by < 2^-44 absolute), exp_fast (2^-27.7): total < 0.6 ulp.
# float64: w in double-double (exp's argument needs ~2^-63 relative: 1.702 and 0.044715 are not doubles,
#   x^3 is not exact) and exp_dd.  In the negative tail exp(w) is computed scaled by 2^_S so that it stays
#   normal until the final multiply: x*exp(w) is rounded once even when the result is subnormal.

cdef struct _Tanh:
    char _unused
cdef struct _Sig:
    char _unused
ctypedef _Tanh* _TanhP
ctypedef _Sig* _SigP
ctypedef fused vtag:
    _TanhP
    _SigP

from libc.math cimport fabs

cdef extern from *:
    # double-double constants (tools/fit_fp.py); C macros so they fold into the vector code
    """
    #define FG_C2_HI 1.5957691216057308         /* 2*sqrt(2/pi) */
    #define FG_C2_LO (-9.96930880911092e-17)
    #define FG_A_HI 0.044715
    #define FG_A_LO 2.1960211427085595e-18
    #define FG_A3 0.134145                      /* 3*0.044715: w' needs only relative accuracy */
    #define FG_K_HI 1.702
    #define FG_K_LO 4.263256414560601e-17
    #define FG_S 100.0                          /* float64 tail scaling exponent */
    #define FG_INV_2S 7.888609052210118e-31     /* 2^-100 */
    """
    const double _C2_HI "FG_C2_HI"
    const double _C2_LO "FG_C2_LO"
    const double _A_HI "FG_A_HI"
    const double _A_LO "FG_A_LO"
    const double _A3 "FG_A3"
    const double _K_HI "FG_K_HI"
    const double _K_LO "FG_K_LO"
    const double _S "FG_S"
    const double _INV_2S "FG_INV_2S"

cdef inline double _absclamp(double x, double L) noexcept nogil:
    # |x| limited to L; NaN passes (the comparison is false)
    x = fabs(x)
    return sel(x > L, L, x)

cdef inline double _w_d(double x, vtag v) noexcept nogil:
    if vtag is _TanhP:
        return _C2_HI * x * fg_fma(_A_HI, x * x, 1.0)
    else:
        return _K_HI * x

cdef inline dd_t _w_dd(double x, vtag v) noexcept nogil:
    """w(x) as hi + lo, relative error ~2^-100 (0 <= x <= L)."""
    cdef dd_t p, q, r
    if vtag is _TanhP:
        p = two_prod(x, x)                                   # x^2
        q = two_prod(_A_HI, p.hi)                            # a x^2
        q.lo = q.lo + fg_fma(_A_HI, p.lo, _A_LO * p.hi)
        r = two_sum(1.0, q.hi)                               # 1 + a x^2  (a x^2 may exceed 1)
        r.lo = r.lo + q.lo
        p = two_prod(x, r.hi)                                # x (1 + a x^2)
        p.lo = fg_fma(x, r.lo, p.lo)
        q = two_prod(_C2_HI, p.hi)
        q.lo = q.lo + fg_fma(_C2_HI, p.lo, _C2_LO * p.hi)
        return q
    else:
        q = two_prod(_K_HI, x)
        q.lo = fg_fma(_K_LO, x, q.lo)
        return q

cdef inline double _dw(double x, vtag v) noexcept nogil:
    if vtag is _TanhP:
        return _C2_HI * fg_fma(_A3, x * x, 1.0)
    else:
        return _K_HI

cdef inline double _L32(vtag v) noexcept nogil:
    # float32 clamp of |x|: w(L) <= 694 keeps exp_fast_unclamped in range, and is far past the float32
    # underflow of the results (tanh: x ~ -11, |w| ~ 112; sigmoid: |w| ~ 104 + log|x|)
    if vtag is _TanhP:
        return 21.0
    else:
        return 400.0

cdef inline double _L64(vtag v) noexcept nogil:
    # float64 clamp of |x|: w(L) ~ 1700-2000 is past the float64 underflow (|w| ~ 745 + log|x|);
    # exp_dd_scaled saturates to 0 there
    if vtag is _TanhP:
        return 30.0
    else:
        return 1000.0

# float64 tail, phase by phase (also the body of the chunked block loops below).
#   _mexp64: T = exp(-w(|x|)) * 2^S   (w in double-double)
#   _fin64 / _fin64_grad: the rest, from x and T
cdef inline double _mexp64(double x, vtag v) noexcept nogil:
    cdef dd_t w = _w_dd(_absclamp(x, _L64(v)), v)
    return exp_dd_scaled(-w.hi, -w.lo, _S)

cdef inline double _fin64(double x, double T, vtag v) noexcept nogil:
    cdef double xa = _absclamp(x, _L64(v))
    cdef bint pos = x >= 0.0
    # x >= 0: x/(1+t);  x < 0: -|x| T/(1+t) 2^-S  (|x| clamped: -inf*T would be NaN when T = 0)
    return (sel(pos, x, -(xa * T)) / fg_fma(T, _INV_2S, 1.0)) * sel(pos, 1.0, _INV_2S)

cdef inline double _p64(double xa, vtag v) noexcept nogil:
    # |x| w'(|x|): tanh as C2*(x + 3a x^3) (the small term's roundings are damped by its weight)
    if vtag is _TanhP:
        return _C2_HI * fg_fma(_A3 * xa * xa, xa, xa)
    else:
        return _K_HI * xa

cdef inline double _fin64_grad(double x, double T, vtag v) noexcept nogil:
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
    cdef double p = _p64(xa, v)
    # x >= 0: s (1 + p t s);  x < 0: t s (1 - p s), t s carried as T s (times 2^S) in the tail
    cdef double h = fg_fma(sel(pos, p * t, -p), s, 1.0)
    # sigma * h = (1 or T) * h / (d + de): one division by d, then the first-order correction for de
    cdef double y1 = (sel(pos, 1.0, T) * h) / d
    return fg_fma(-y1, de * s0, y1) * sel(pos, 1.0, _INV_2S)

cdef inline real _xsig(real x, vtag v) noexcept nogil:
    cdef double xd = x
    cdef double xa, T
    if real is float:
        xa = _absclamp(xd, _L32(v))
        T = exp_fast_unclamped(-_w_d(xa, v))        # exp(-|w|)
        # x >= 0: x/(1+T);  x < 0 (w < 0): -|x| T/(1+T), |x| clamped so -inf gives -0, not NaN
        return <real>(sel(xd >= 0.0, xd, -(xa * T)) / (1.0 + T))
    else:
        return _fin64(xd, _mexp64(xd, v), v)

cdef inline real _xsig_grad(real x, real dy, vtag v) noexcept nogil:
    cdef double xd = x
    cdef double xa, T, s, q
    cdef bint pos
    if real is float:
        xa = _absclamp(xd, _L32(v))
        T = exp_fast_unclamped(-_w_d(xa, v))
        s = 1.0 / (1.0 + T)
        q = xa * _dw(xa, v) * s
        pos = xd >= 0.0
        return <real>(dy * (sel(pos, s, T * s) * (1.0 + sel(pos, q * T, -q))))
    else:
        return dy * _fin64_grad(xd, _mexp64(xd, v), v)

cdef enum:
    _CH = 64        # float64 chunk: three short loops over local arrays, each small enough to be inlined
                    # and vectorized on its own (one fused loop exceeds gcc's inlining limits for tanh)

cdef inline void _xsig_block(const real* x, real* y, Py_ssize_t n, vtag v) noexcept nogil:
    cdef Py_ssize_t i, c, m
    cdef double T[_CH]
    if real is float:
        for i in range(n):
            y[i] = _xsig(x[i], v)
    else:
        c = 0
        while c < n:
            m = n - c if n - c < _CH else _CH
            for i in range(m):
                T[i] = _mexp64(x[c + i], v)
            for i in range(m):
                y[c + i] = _fin64(x[c + i], T[i], v)
            c = c + _CH

cdef inline void _xsig_grad_block(const real* x, const real* dy, real* y, Py_ssize_t n, vtag v) noexcept nogil:
    cdef Py_ssize_t i, c, m
    cdef double T[_CH]
    if real is float:
        for i in range(n):
            y[i] = _xsig_grad(x[i], dy[i], v)
    else:
        c = 0
        while c < n:
            m = n - c if n - c < _CH else _CH
            for i in range(m):
                T[i] = _mexp64(x[c + i], v)
            for i in range(m):
                y[c + i] = dy[c + i] * _fin64_grad(x[c + i], T[i], v)
            c = c + _CH

# ---- the interface the loops call -------------------------------------------------------------------
cdef inline real gelu_tanh(real x) noexcept nogil:
    return _xsig(x, <_TanhP>NULL)

cdef inline real gelu_tanh_grad(real x, real dy) noexcept nogil:
    return _xsig_grad(x, dy, <_TanhP>NULL)

cdef inline void gelu_tanh_block(const real* x, real* y, Py_ssize_t n) noexcept nogil:
    _xsig_block(x, y, n, <_TanhP>NULL)

cdef inline void gelu_tanh_grad_block(const real* x, const real* dy, real* y, Py_ssize_t n) noexcept nogil:
    _xsig_grad_block(x, dy, y, n, <_TanhP>NULL)

cdef inline real gelu_sigmoid(real x) noexcept nogil:
    return _xsig(x, <_SigP>NULL)

cdef inline real gelu_sigmoid_grad(real x, real dy) noexcept nogil:
    return _xsig_grad(x, dy, <_SigP>NULL)

cdef inline void gelu_sigmoid_block(const real* x, real* y, Py_ssize_t n) noexcept nogil:
    _xsig_block(x, y, n, <_SigP>NULL)

cdef inline void gelu_sigmoid_grad_block(const real* x, const real* dy, real* y, Py_ssize_t n) noexcept nogil:
    _xsig_grad_block(x, dy, y, n, <_SigP>NULL)
