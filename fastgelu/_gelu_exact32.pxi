# The exact form's float32 math in double, lane by lane (the baseline build's float32, which has no SIMD
# kernels): the central polynomial for |x| <= 3, exp(-x^2/2) times a fitted factor beyond. Branch-free, the
# pieces combined by sel() (_fp.pxi says why).

cdef inline double _gx_fwd_central32(double x) noexcept nogil:
    return x * (0.5 + x * _gx_P32(x * x))

cdef inline double _gx_grad_central32(double x) noexcept nogil:
    return 0.5 + x * _gx_G32(x * x)

cdef inline double _gx_fwd_tail32(double x) noexcept nogil:
    """|x| > 3 (and +-inf): the piece the deferred lanes need, alone."""
    cdef double s = x * x                          # exact: x has 24 significant bits
    # x = +-inf: s = inf, w = 0, exp_fast clamps its argument, so v is tiny and finite
    cdef double v = exp_fast(-0.5 * s) * _gx_T32(1.0 / s)
    cdef double yt = x - v
    cdef double yn = -v
    return sel(x < 0, yn, yt)

cdef inline double _gx_fwd_full32(double x) noexcept nogil:
    cdef double yt = _gx_fwd_tail32(x)
    cdef double yc = _gx_fwd_central32(x)
    return sel(fabs(x) <= 3.0, yc, yt)

cdef inline double _gx_grad_tail32(double x) noexcept nogil:
    """Gradient with dy = 1 for |x| > 3 (and +-inf); the caller multiplies by dy."""
    cdef double a = fabs(x)
    cdef double s = x * x
    # exp_fast(-s/2) >= 3e-308, so g is ~0 for huge finite x; only x = +-inf needs the final select
    cdef double g = exp_fast(-0.5 * s) * (-a * _gx_U32(1.0 / s))     # = Phi(-a) - a*phi(a)
    cdef double gt = 1.0 - g
    cdef double ginf = sel(x > 0, 1.0, 0.0)
    gt = sel(x < 0, g, gt)
    return sel(a == INFINITY, ginf, gt)

cdef inline double _gx_grad_full32(double x) noexcept nogil:
    """Gradient with dy = 1; the caller multiplies by dy."""
    cdef double gt = _gx_grad_tail32(x)
    cdef double gc = _gx_grad_central32(x)
    return sel(fabs(x) <= 3.0, gc, gt)
