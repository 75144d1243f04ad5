# The exact form's float64 math, lane by lane. Pieces in a = |x|: central [0, B] (no exp; B = FG_CENTRAL =
# 1.25 forward, FG_CENTRAL_GRAD = 1 gradient), middle (B, 4] and tail (4, inf) (exp(-x^2/2) times a fitted
# factor). A chunk of 32 inputs runs only the pieces its inputs need (_gelu_exact_queue64.pxi); each function
# here is branch-free. Where a chunk evaluates two pieces and selects, the lanes of the piece not selected
# may overflow to inf/NaN: they are discarded (the caller restores the FP flags).

cdef inline double _gx_fwd64_central(double x) noexcept nogil:
    # Phi = 1/2 + C*x + x*s*P(s), 1/2 + C_HI*x exactly as h.hi + h.lo
    cdef double s = x * x
    cdef dd_t p = two_prod(x, FG_INV_SQRT2PI_HI)
    cdef dd_t h = fast_two_sum(0.5, p.hi)         # |p.hi| <= 1.25*C = 0.499 < 0.5
    return fg_fma(x, h.hi, x * (h.lo + (p.lo + fg_fma(x, FG_INV_SQRT2PI_LO, (x * s) * _gx_P64(s)))))

cdef inline double _gx_grad64_central(double x) noexcept nogil:
    # 1/2 + 2C*x + x*s*G(s); |2C*x| <= 0.8 so the 1/2 + p.hi sum needs the general two_sum
    cdef double s = x * x
    cdef dd_t p = two_prod(x, FG_SQRT2_OVER_PI_HI)
    cdef dd_t h = two_sum(0.5, p.hi)
    return h.hi + (h.lo + (p.lo + fg_fma(x, FG_SQRT2_OVER_PI_LO, (x * s) * _gx_G64(s))))

cdef inline double _gx_T64t_of(double x) noexcept nogil:
    """The tail's T for |x| >= 4 (x = +-inf: T(0) = C, harmless since exp gives 0)."""
    return _gx_T64t(1.0 / (x * x))

cdef inline double _gx_D64t_of(double x) noexcept nogil:
    """The tail's D for |x| >= 4; 0 for x = +-inf (exp gives 0 there, and -a*U = -inf)."""
    cdef double a = fabs(x)
    return sel(a == INFINITY, 0.0, -a * _gx_U64t(1.0 / (x * x)))

cdef inline double _gx_exp_half_sq(double x) noexcept nogil:
    """exp(-x^2/2) * 2^64 with x^2 exact (hi + lo; lo is NaN once hi = inf: exp_dd drops it).  The 2^64
    keeps it normal down to GELU's underflow, so the subnormal rounding happens once, in the final
    * 2^-64 (FG_SCALE_DN); for |x| > ~38.6 the result is 0."""
    cdef dd_t s = two_prod(x, x)
    return exp_dd_scaled(-0.5 * s.hi, -0.5 * s.lo, 64.0)

cdef inline double _gx_exp_half_sq_normal(double x) noexcept nogil:
    """exp(-x^2/2) for |x| <= 37 only (or NaN): a normal result, no clamp or scaling needed."""
    cdef dd_t s = two_prod(x, x)
    return exp_dd_normal(-0.5 * s.hi, -0.5 * s.lo)

cdef inline double _gx_fwd64_far(double x, double t, double e) noexcept nogil:
    """GELU for |x| beyond the central piece, given t = T(|x|) and e = exp(-x^2/2) * 2^64 from
    _gx_exp_half_sq: x - E*T for x > 0, -E*T for x < 0 (x = +-inf: x or -0.0)."""
    cdef double v = (e * t) * FG_SCALE_DN
    return sel(x < 0, -v, x - v)

cdef inline double _gx_fwd64_far_normal(double x, double t, double e) noexcept nogil:
    """The same with e = exp(-x^2/2) from _gx_exp_half_sq_normal (|x| <= 37: E*T is normal, so the bits
    are those of _gx_fwd64_far)."""
    cdef double v = e * t
    return sel(x < 0, -v, x - v)

cdef inline double _gx_grad64_far(double x, double d, double e) noexcept nogil:
    """GELU' (dy = 1) beyond the central piece given d = D(|x|), e as for _gx_fwd64_far: 1 - E*D for
    x > 0, E*D for x < 0."""
    cdef double g = (e * d) * FG_SCALE_DN      # Phi(-a) - a*phi(a)
    return sel(x < 0, g, 1.0 - g)

cdef inline double _gx_grad64_far_normal(double x, double d, double e) noexcept nogil:
    cdef double g = e * d
    return sel(x < 0, g, 1.0 - g)
