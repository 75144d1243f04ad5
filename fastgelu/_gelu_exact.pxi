# Exact GELU, x*Phi(x) with Phi the standard normal cdf, and its gradient Phi(x) + x*phi(x).
#
# Accuracy design (the contract: README.md, section "Accuracy"; tools/sweep_f32.py and tools/check_f64.py
# verify it):
# * Phi(x) for x < 0 needs RELATIVE accuracy (it decays like a Gaussian), so away from 0 we write, with
#   a = |x|,  a*Phi(-a) = E*T  and  Phi(-a) - a*phi(a) = E*D,  E = exp(-a^2/2) with a^2 exact (float32
#   inputs: exact in double; float64: hi+lo by an error-free product), T and D smooth and fitted.
#   For x > 0, GELU = x - E*T and GELU' = 1 - E*D: no cancellation (E*T <= x/2, |E*D| <= 1/2).
# * Near 0, Phi(x) = 1/2 + x*P(x^2) (an erf series, fitted); its cancellation for x < 0 is harmless while
#   evaluated in double for float32 results (|x| <= 3: 0.5/Phi(-3) ~ 370x of 1e-16), and for float64 the
#   leading term C*x is carried in double-double (forward |x| <= 1.25, where 0.5/Phi(-1.25) ~ 5; gradient
#   |x| <= 1).
# * float32 in the AVX-512 and AVX2+FMA builds: one float32-arithmetic kernel per direction for every input
#   ("float32 kernels" below).  The baseline build (no FMA) computes float32 in double and rounds once at the
#   end: its error is the fit error (<= 2.5e-8, 0.42 ulp, central forward) + 0.5 ulp.  float64 adds exp
#   (<= ~0.6 ulp), the polynomial (~0.5-1 ulp) and two products.
# * Speed of the double path (baseline float32, float64): blocks test 32 inputs at a time.  The central
#   polynomial (no exp, no division) runs for the chunk if at most 16 inputs have |x| > 3 (float32; randn
#   data: all but ~0.1% of chunks); those few lanes are deferred and computed 32 at a time by the full
#   path.  Other float32 chunks evaluate every piece for every lane and select, which keeps the loops
#   branch-free and vectorized.  float64 queues every input beyond the central piece by piece (see
#   "float64 chunks" below).  The float32 polynomials are evaluated as E(s^2) + s*O(s^2): two chains half
#   as deep as Horner's (the single chain left the FMA units waiting on latency).
# * In place (y == x or y == dy) goes through a local copy, 256 inputs at a time, so gcc never needs a
#   runtime alias check (which sends exactly-aliased calls to its scalar fallback).
# Coefficients: tools/fit_exact.py (weighted minimax against mpmath; rounding to double is part of the fit).
#
# float32 kernels (AVX-512: 16 lanes; AVX2: 8), in float32 arithmetic.
# The central form: the exact forward and gradient, and the tanh form's forward (_gelu_sigmoid.pxi).
# With a = min(|x|, R):
#   forward   y = max(-0.0, x) - F,  F = a*Phi(-a)  (AVX-512 R = 6; tanh form: F = a*sigma(-w(a)), R = 5.25)
#   gradient  y = dy - G*dy (x >= 0) or G*dy (x < 0),  G = Phi(-a) - a*phi(a)  (AVX-512 R = 6.25)
#   F and G straight from a table, no exp: 32 intervals i = round(a*K) (one FMA leaves i in the low bits),
#   u = a - L_i exact, C0 + u*(C1 + ...) with the coefficients picked per lane by vpermt2ps, degree 6
#   (gradient: degree 7 was 6% slower for no lower maximum).  AVX2: 8 intervals (vpermps), so R = 3.6,
#   degree 7 (gradient 4.0, degree 7: 4.2 reached 1.87 ulp, 4.5 failed; tanh form 3.1, degree 6), and
#   lanes beyond R on either side take the tail.  Each L_i is a float at which F (G) is a float to ~1e-4
#   ulp, so C0 is exact and the only roundings are Horner's.  R ends the tables where F's Gaussian decay
#   (e^-a per unit of a) makes u*(C1 + ...) too large a share of F for float Horner; on AVX-512 the same R
#   clamps x > R (F(R) is below half an ulp of R; for the gradient, a*phi(a) below half an ulp of 1).
#   Lanes with x < -R and -inf (AVX2: |x| > R; gradient: also NaN x) are compressed into a queue, per
#   chunk of 64 vectors, that the tail below computes a vector at a time, the results scattered to place
#   (gradient results that are not finite, found per chunk, are redone from the chunk's copies).  How a
#   chunk finds those lanes follows the chunks before it (gx_f_list): after quiet ones, one summary of the
#   chunk (one operation a vector) and a search only if it shows a lane; sparse, a branch-free list of the
#   vectors with such lanes (at sigma = 3 a third of the AVX-512 vectors list one: a branch would
#   mispredict), compressed after the loop; dense (1/16 of the lanes), every vector compressed as it goes.
#   A lane's result depends on its x (and dy) alone, whatever path it takes.
#   Cost per vector: forward 19 vector operations, gradient 20 (AVX-512).  A chunk computing its tail
#   lanes in place instead (central and tail for every vector that has one) was slower at every spread
#   (AVX2 U(-8, 8): forward 1.16 against 1.21-1.29 Gelem/s, gradient 0.76 against 0.80-0.85).
# The tails, no table:
#   forward   F = exp(-a^2/2) (C - r(a^2)), C = 1/sqrt(2 pi) rounded, r = C - a m(a)/sqrt(2 pi) (m: Mills'
#     ratio) rational of degree (2, 3): r/C <= 0.08, so the roundings sit in the small part; 29 vector
#     operations against the exp form's 40 (of them 10 permutes).  AVX2: 8-17% faster at randn sigma = 3
#     and U(-8, 8) than through the exp form; its maximum 1.252 ulp (was 1.448).  The tanh form's: F = a T/(1 +
#     T), T = exp(-w) < 2^-10, 1/(1 + T) = 1 - T (1 - T) to 2^-30, no division (_gelu_sigmoid.pxi).
#   gradient  the exp form below.  A rational tail for G (C a - (C - r)/a) reached 1.92 ulp (1.76 with f
#     carried exactly) and was no faster: the queue, not the tail, is most of a gradient tail lane's cost.
# The exp form (the gradient's tail lanes), branch-free.  With a = min(|x|, 14.99):
#   gradient  y = dy - dy*G (x >= 0) or dy*G (x < 0),  G = Phi(-a) - a*phi(a) = exp(-a^2/2) D(a)
#   exp(-a^2/2) = 2^mn * 2^f from an exact a^2 = s + sl (FMA); mn by a rounding constant, f = fh + fl,
#     2^f - 1 = f*Q0 + f^2*P(f) with the leading product taken from fh and fl unrounded.
#   D on intervals of a picked by bits(a + 1) (N/4 per octave of a + 1), coefficients per lane by a
#     permute: AVX-512 32 intervals (vpermt2ps), degree 5; AVX2 8 intervals (vpermps), degree 7.
#     D = H + v, v = C0 + u*(C1 + ...), u = a - L exact, with a float lead H, so float rounding sits in
#     the small part v; E*D = 2^mn (H + (v + q*(H + v))), scaled last (scalef; AVX2: 2^(mn+64), then
#     2^-64) so a subnormal result rounds once.
#   Inputs with |x| <= 2^-30 (zeros, subnormals): forward x/2 correctly rounded by integer arithmetic
#     (gx_f_tiny; found per chunk by the least |x| and redone, or, after a chunk that had some, per
#     vector, where a vector of them alone skips the rest), gradient 1/2, its value at 2^-30, where it is
#     evaluated.  A subnormal product or (AVX2) sum takes a ~100-cycle microcode assist: the main paths
#     have none, but for forward inputs 0 < |x| < ~1e-19 beside normal ones in a vector.
#   Gradients: a vector with lanes a large dy could make wrong (x beyond the clamp, where G dy only
#     underflows for |dy| <= 1; an intermediate's overflow; dy = inf) is recomputed there in double
#     (gx_f_grad_double), for the tanh and sigmoid gradients of _gelu_sigmoid.pxi too (GX_F_GRAD_LOOP).
# Error over all 2^32 inputs (tools/sweep_f32.py): forward 1.317 ulp (AVX-512, at x = -5.895101 in the
# central form) / 1.252 (AVX2, at -3.662468, the tail's), gradient 1.524 / 1.485.  The AVX2 loops are
# bound by their floating-point operations (Xeon: a table-free forward for every lane, 34 of them per
# vector, ran 14 cycles per vector, the same with its division replaced by a product; permutes issue on
# another port): the central forward has ~14, the tail ~28.
# Coefficients: tools/fit_gelu_f32.py; FASTGELU_F32_FWD=0 at build time keeps the double path in every build.

from libc.math cimport fabs, INFINITY

cdef extern from *:
    """
    /* C constants rather than Cython module globals: a global double could alias the output pointer,
       which costs reloads or runtime alias checks in the vectorized loops */
    #define GX_C_HI 0.3989422804014327            /* 1/sqrt(2pi) = GX_C_HI + GX_C_LO */
    #define GX_C_LO (-2.49232720227773e-17)
    #define GX_C2_HI 0.7978845608028654           /* 2/sqrt(2pi) */
    #define GX_C2_LO (-4.98465440455546e-17)
    #define GX_SCALE_DN 5.421010862427522e-20     /* 2^-64, undoes the 2^64 passed to exp_dd_scaled */
    /* float64: |x| <= these is the central piece of GELU and of GELU' (tools/fit_exact.py B1, B1G) */
    #define GX_CENTRAL 1.25
    #define GX_CENTRAL_GRAD 1.0
    """
    const double GX_C_HI
    const double GX_C_LO
    const double GX_C2_HI
    const double GX_C2_LO
    const double GX_SCALE_DN
    const double GX_CENTRAL
    const double GX_CENTRAL_GRAD
cdef enum:
    _GX_CHUNK = 32                              # inputs per dispatch decision (a bit of a 32-bit mask)
    _GX_TILE = 256                              # in-place copy unit (copying 32 at a time measured 9%
                                                # slower than out of place; 256 at a time is not)

# BEGIN GENERATED by tools/fit_exact.py --write (do not edit by hand)
cdef inline double _gx_P32(double s) noexcept nogil:
    # float32 central: Phi(x) = 1/2 + x*P(s), s = x^2, |x| <= 3; weight = relative error of GELU
    # degree 10, max weighted error 2.49e-08
    cdef double s2 = s * s
    return 0.39894222347104397 + s2 * (0.009972890951552502 + s2 * (0.00011504062828746785 + s2 * (6.275175249817342e-07 + s2 * (1.4264522069717593e-09 + s2 * (5.178122628606374e-13))))) + s * (-0.06649004563484054 + s2 * (-0.0011866618827168147 + s2 * (-9.294749727163201e-06 + s2 * (-3.44047191258308e-08 + s2 * (-3.9027564377349245e-11)))))

cdef inline double _gx_G32(double s) noexcept nogil:
    # float32 central: GELU'(x) = 1/2 + x*G(s), |x| <= 3; weight = gradient metric
    # degree 11, max weighted error 1.30e-08
    cdef double s2 = s * s
    return 0.7978845220796944 + s2 * (0.05984034891171222 + s2 * (0.0011532333949136892 + s2 * (9.12985798428821e-06 + s2 * (3.3293530658818053e-08 + s2 * (3.637865582444552e-11))))) + s * (-0.2659611758121076 + s2 * (-0.009497240596491712 + s2 * (-0.00011276852968054933 + s2 * (-6.13831096143191e-07 + s2 * (-1.3574893296429722e-09 + s2 * (-4.719114313749916e-13))))))

cdef inline double _gx_T32(double w) noexcept nogil:
    # float32 tail, a = |x| in [3, 15], w = 1/a^2: a*Phi(-a) = exp(-a^2/2)*T(w)
    # degree 8, max weighted error 1.84e-09
    cdef double w2 = w * w
    return 0.39894226337383254 + w2 * (1.195673998070327 + w2 * (37.6067632915497 + w2 * (1323.7843363399963 + w2 * (7520.623865563452)))) + w * (-0.398934971077532 + w2 * (-5.892430684173617 + w2 * (-246.9633839741452 + w2 * (-4629.827618966794))))

cdef inline double _gx_U32(double w) noexcept nogil:
    # float32 tail: Phi(-a) - a*phi(a) = -a*exp(-a^2/2)*U(w)
    # degree 7, max weighted error 1.06e-09
    cdef double w2 = w * w
    return 0.3989422740984542 + w2 * (0.3986250754541129 + w2 * (5.226308439556736 + w2 * (82.37015412466882))) + w * (-0.39893989232935295 + w2 * (-1.1763025120670192 + w2 * (-24.117014053795312 + w2 * (-137.9624317153153))))

cdef inline double _gx_P64(double s) noexcept nogil:
    # float64 central |x| <= 1.25: Phi(x) = 1/2 + C*x + x*s*P(s), C = 1/sqrt(2pi) in double-double
    # degree 11, max weighted error 4.74e-17
    return -0.06649038006690544 + s * (0.009973557010035768 + s * (-0.0011873282154798916 + s * (0.00011543468761264932 + s * (-9.444656246184902e-06 + s * (6.659693184746055e-07 + s * (-4.1226617865057884e-08 + s * (2.2734634313855593e-09 + s * (-1.1295717492665952e-10 + s * (5.081715267595744e-12 + s * (-2.0077906994018968e-13 + s * (5.571472745036923e-15)))))))))))

cdef inline double _gx_G64(double s) noexcept nogil:
    # float64 central |x| <= 1: GELU'(x) = 1/2 + 2C*x + x*s*G(s)
    # degree 10, max weighted error 2.30e-17
    return -0.26596152026762176 + s * (0.05984134206021428 + s * (-0.00949862572383359 + s * (0.0011543468760764465 + s * (-0.00011333587467924009 + s * (9.323569488238017e-06 + s * (-6.596236212813472e-07 + s * (4.0918813441830015e-08 + s * (-2.2555142454854045e-09 + s * (1.0943219762537664e-10 + s * (-3.9335304618388896e-12))))))))))

cdef inline double _gx_T64m(double d) noexcept nogil:
    # float64 a in [1.25, 4], d = a - 2.5 (exact): a*Phi(-a) = exp(-a^2/2)*T(d)
    # degree 21, max weighted error 8.82e-17
    return 0.3533283284514383 + d * (0.027296451505589295 + d * (-0.011493387568007782 + d * (0.004070402779455042 + d * (-0.0012871274521765882 + d * (0.00037403696877277257 + d * (-0.00010157675344590277 + d * (2.6062082866220883e-05 + d * (-6.366563887245056e-06 + d * (1.4892703390745638e-06 + d * (-3.350783842653634e-07 + d * (7.277295321301766e-08 + d * (-1.5300680714553963e-08 + d * (3.1218566425945675e-09 + d * (-6.194434286546678e-10 + d * (1.1983741522136652e-10 + d * (-2.2621820681661945e-11 + d * (4.123938222860668e-12 + d * (-7.313695315390301e-13 + d * (1.4149958549156823e-13 + d * (-2.860784803145174e-14 + d * (3.3995690665200588e-15)))))))))))))))))))))

cdef inline double _gx_D64m(double d) noexcept nogil:
    # float64 a in [1, 4]: Phi(-a) - a*phi(a) = exp(-a^2/2)*D(d)
    # degree 22, max weighted error 5.02e-17
    return -0.8560243696230064 + d * (-0.4445562323514271 + d * (0.013648225752794662 + d * (-0.0038311291893358733 + d * (0.0010176006948635062 + d * (-0.00025742549043595843 + d * (6.233949479734847e-05 + d * (-1.4510964774519035e-05 + d * (3.257760351013847e-06 + d * (-7.073959977588948e-07 + d * (1.489270504455752e-07 + d * (-3.046165295326947e-08 + d * (6.064388930899968e-09 + d * (-1.1769959717116815e-09 + d * (2.2301220297250178e-10 + d * (-4.128167500668464e-11 + d * (7.476013458787189e-12 + d * (-1.3370457220288991e-12 + d * (2.3449812431793086e-13 + d * (-3.69345754821699e-14 + d * (5.863993210497599e-15 + d * (-1.5271471942406278e-15 + d * (2.742574624302463e-16))))))))))))))))))))))

cdef inline double _gx_T64t(double w) noexcept nogil:
    # float64 tail a in [4, 40], w = 1/a^2
    # degree 23, max weighted error 6.63e-17
    return 0.3989422804014324 + w * (-0.39894228040061225 + w * (1.196826840276675 + w * (-5.984133673858265 + w * (41.888759356826846 + w * (-376.9610928334137 + w * (4141.105042639134 + w * (-53279.06523841649 + w * (758851.4957787457 + w * (-10795942.021894336 + w * (127440774.7671294 + w * (-753861116.2125823 + w * (-9337675536.077948 + w * (247182638588.83777 + w * (-533174483707.38074 + w * (-46948193026618.23 + w * (406490079475419.1 + w * (8379889412689265.0 + w * (-1.4614899896576064e+17 + w * (-1.0012734880392654e+18 + w * (4.938689780257745e+19 + w * (-5.868302797018368e+20 + w * (3.25724309057304e+21 + w * (-7.300884317531336e+21)))))))))))))))))))))))

cdef inline double _gx_U64t(double w) noexcept nogil:
    # float64 tail: Phi(-a) - a*phi(a) = -a*exp(-a^2/2)*U(w)
    # degree 20, max weighted error 4.87e-17
    return 0.39894228040143265 + w * (-0.39894228040139157 + w * (0.39894228035613816 + w * (-1.1968268159725806 + w * (5.984125923687639 + w * (-41.8871822416842 + w * (376.74423491349074 + w * (-4120.2056851000825 + w * (51837.23812611017 + w * (-687145.079722673 + w * (8250456.402735095 + w * (-65353311.15084747 + w * (-179113979.6289304 + w * (14648470211.478634 + w * (-176976727058.15427 + w * (-628063638806.4518 + w * (50440869151149.48 + w * (-781476253994132.1 + w * (6441844494452415.0 + w * (-2.906670706341739e+16 + w * (5.68491237087119e+16))))))))))))))))))))
# END GENERATED


# ------------------------------------------------------------------------------------- float32 (in double)
cdef inline double _gx_fwd_central32(double x) noexcept nogil:
    return x * (0.5 + x * _gx_P32(x * x))

cdef inline double _gx_grad_central32(double x) noexcept nogil:
    return 0.5 + x * _gx_G32(x * x)

# Style note for the branch-free functions below: every piece is computed unconditionally and combined by
# sel() (_fp.pxi, a bit-mask select).  With `a if c else b` gcc sinks the unselected operand's arithmetic
# into a branch that -ftrapping-math forbids it to if-convert: the loop then stays scalar in the AVX2/SSE2
# builds (AVX-512 masks hide it).
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


# ------------------------------------------------------------------------------------- float64
# Pieces in a = |x|: central [0, B] (no exp; B = GX_CENTRAL = 1.25 forward, GX_CENTRAL_GRAD = 1 gradient),
# middle (B, 4] and tail (4, inf) (exp(-x^2/2) times a fitted factor).  A chunk of 32 inputs runs only the
# pieces its inputs need ("float64 chunks" below): the per-lane functions here are each branch-free, and
# the scalar _gx_fwd64/_gx_grad64 combine all of them.
cdef inline double _gx_fwd64_central(double x) noexcept nogil:
    # Phi = 1/2 + C*x + x*s*P(s), 1/2 + C_HI*x exactly as h.hi + h.lo
    cdef double s = x * x
    cdef dd_t p = two_prod(x, GX_C_HI)
    cdef dd_t h = fast_two_sum(0.5, p.hi)         # |p.hi| <= 1.25*C = 0.499 < 0.5
    return fg_fma(x, h.hi, x * (h.lo + (p.lo + fg_fma(x, GX_C_LO, (x * s) * _gx_P64(s)))))

cdef inline double _gx_grad64_central(double x) noexcept nogil:
    # 1/2 + 2C*x + x*s*G(s); |2C*x| <= 0.8 so the 1/2 + p.hi sum needs the general two_sum
    cdef double s = x * x
    cdef dd_t p = two_prod(x, GX_C2_HI)
    cdef dd_t h = two_sum(0.5, p.hi)
    return h.hi + (h.lo + (p.lo + fg_fma(x, GX_C2_LO, (x * s) * _gx_G64(s))))

# Lanes of another piece than the selected one may overflow to inf/NaN: they are discarded (the caller
# restores the FP flags).
cdef inline double _gx_T64_tail(double x, double t) noexcept nogil:
    """t (the middle piece's T) where |x| <= 4, the tail's T beyond."""
    return sel(fabs(x) <= 4.0, t, _gx_T64t_of(x))

cdef inline double _gx_D64_tail(double x, double d) noexcept nogil:
    """d where |x| <= 4, the tail's D beyond."""
    return sel(fabs(x) <= 4.0, d, _gx_D64t_of(x))

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
    * 2^-64 (GX_SCALE_DN); for |x| > ~38.6 the result is 0."""
    cdef dd_t s = two_prod(x, x)
    return exp_dd_scaled(-0.5 * s.hi, -0.5 * s.lo, 64.0)

cdef inline double _gx_exp_half_sq_normal(double x) noexcept nogil:
    """exp(-x^2/2) for |x| <= 37 only (or NaN): a normal result, no clamp or scaling needed."""
    cdef dd_t s = two_prod(x, x)
    return exp_dd_normal(-0.5 * s.hi, -0.5 * s.lo)

cdef inline double _gx_fwd64_far(double x, double t, double e) noexcept nogil:
    """GELU for |x| beyond the central piece, given t = T(|x|) and e = exp(-x^2/2) * 2^64 from
    _gx_exp_half_sq: x - E*T for x > 0, -E*T for x < 0 (x = +-inf: x or -0.0)."""
    cdef double v = (e * t) * GX_SCALE_DN
    return sel(x < 0, -v, x - v)

cdef inline double _gx_fwd64_far_normal(double x, double t, double e) noexcept nogil:
    """The same with e = exp(-x^2/2) from _gx_exp_half_sq_normal (|x| <= 37: E*T is normal, so the bits
    are those of _gx_fwd64_far)."""
    cdef double v = e * t
    return sel(x < 0, -v, x - v)

cdef inline double _gx_grad64_far(double x, double d, double e) noexcept nogil:
    """GELU' (dy = 1) beyond the central piece given d = D(|x|), e as for _gx_fwd64_far: 1 - E*D for
    x > 0, E*D for x < 0."""
    cdef double g = (e * d) * GX_SCALE_DN      # Phi(-a) - a*phi(a)
    return sel(x < 0, g, 1.0 - g)

cdef inline double _gx_grad64_far_normal(double x, double d, double e) noexcept nogil:
    cdef double g = e * d
    return sel(x < 0, g, 1.0 - g)

cdef inline double _gx_fwd64(double x) noexcept nogil:
    cdef double t = _gx_T64_tail(x, _gx_T64m(fabs(x) - 2.5))
    return sel(fabs(x) <= GX_CENTRAL, _gx_fwd64_central(x), _gx_fwd64_far(x, t, _gx_exp_half_sq(x)))

cdef inline double _gx_grad64(double x) noexcept nogil:
    """Gradient with dy = 1; the caller multiplies by dy."""
    cdef double d = _gx_D64_tail(x, _gx_D64m(fabs(x) - 2.5))
    return sel(fabs(x) <= GX_CENTRAL_GRAD, _gx_grad64_central(x), _gx_grad64_far(x, d, _gx_exp_half_sq(x)))

# ------------------------------------------------------------------------------------- interface
cdef inline real gelu_none(real x) noexcept nogil:
    cdef float r
    if real is float:
        if GX_F32_SIMD:                            # the bits of the block function
            gx_f_gelu_block(&x, &r, 1)
            return r
        return <float>_gx_fwd_full32(x)
    else:
        return _gx_fwd64(x)

cdef inline real gelu_none_grad(real x, real dy) noexcept nogil:
    cdef float r
    if real is float:
        if GX_F32_SIMD:                            # the bits of the block function
            gx_f_gelu_grad_block(&x, &dy, &r, 1)
            return r
        return <float>(<double>dy * _gx_grad_full32(x))
    else:
        return dy * _gx_grad64(x)

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    static inline int fg_ctz32(unsigned int m) { return __builtin_ctz(m); }
    static inline int fg_popcount32(unsigned int m) { return __builtin_popcount(m); }
    #else
    static inline int fg_ctz32(unsigned int m) { int k = 0; while (!(m & 1u)) { m >>= 1; k++; } return k; }
    static inline int fg_popcount32(unsigned int m) { int k = 0; while (m) { m &= m - 1u; k++; } return k; }
    #endif
    /* bit j set when |x[j]| > 3 (NaN: not set, the central polynomial gives NaN), j < 32.  gcc vectorizes
       the portable loop, but its OR-reduction of shifted flags costs ~15 instructions per chunk where a
       compare-to-mask (AVX-512) or movemask (AVX, SSE2) takes 2-4 */
    #if defined(__AVX512F__)
    #include <immintrin.h>
    static inline unsigned int fg_far_mask32(const float* x) {
        const __m512 lim = _mm512_set1_ps(3.0f);
        unsigned int lo = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x)), lim, _CMP_GT_OQ);
        unsigned int hi = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + 16)), lim, _CMP_GT_OQ);
        return lo | (hi << 16);
    }
    #elif defined(__AVX__)
    #include <immintrin.h>
    static inline unsigned int fg_far_mask32(const float* x) {
        const __m256 lim = _mm256_set1_ps(3.0f), sign = _mm256_set1_ps(-0.0f);
        unsigned int m = 0;
        for (int k = 0; k < 4; k++)
            m |= (unsigned int)_mm256_movemask_ps(
                _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * k)), lim, _CMP_GT_OQ)) << (8 * k);
        return m;
    }
    #elif defined(__SSE2__)
    #include <emmintrin.h>
    static inline unsigned int fg_far_mask32(const float* x) {
        const __m128 lim = _mm_set1_ps(3.0f), sign = _mm_set1_ps(-0.0f);
        unsigned int m = 0;
        for (int k = 0; k < 8; k++)
            m |= (unsigned int)_mm_movemask_ps(_mm_cmpgt_ps(_mm_andnot_ps(sign, _mm_loadu_ps(x + 4 * k)), lim))
                 << (4 * k);
        return m;
    }
    #else
    static inline unsigned int fg_far_mask32(const float* x) {
        unsigned int m = 0;
        for (unsigned int j = 0; j < 32; j++)
            m |= (unsigned int)((x[j] > 3.0f) | (x[j] < -3.0f)) << j;
        return m;
    }
    #endif
    /* the same for 32 doubles and a limit: bit j set when |x[j]| > lim (NaN: not set) */
    #if defined(__AVX512F__)
    static inline unsigned int fg_far_mask64(const double* x, double lim) {
        const __m512d l = _mm512_set1_pd(lim);
        unsigned int m = 0;
        for (int k = 0; k < 4; k++)
            m |= (unsigned int)_mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_loadu_pd(x + 8 * k)), l, _CMP_GT_OQ)
                 << (8 * k);
        return m;
    }
    #elif defined(__AVX__)
    static inline unsigned int fg_far_mask64(const double* x, double lim) {
        const __m256d l = _mm256_set1_pd(lim), sign = _mm256_set1_pd(-0.0);
        unsigned int m = 0;
        for (int k = 0; k < 8; k++)
            m |= (unsigned int)_mm256_movemask_pd(
                _mm256_cmp_pd(_mm256_andnot_pd(sign, _mm256_loadu_pd(x + 4 * k)), l, _CMP_GT_OQ)) << (4 * k);
        return m;
    }
    #elif defined(__SSE2__)
    static inline unsigned int fg_far_mask64(const double* x, double lim) {
        const __m128d l = _mm_set1_pd(lim), sign = _mm_set1_pd(-0.0);
        unsigned int m = 0;
        for (int k = 0; k < 16; k++)
            m |= (unsigned int)_mm_movemask_pd(_mm_cmpgt_pd(_mm_andnot_pd(sign, _mm_loadu_pd(x + 2 * k)), l))
                 << (2 * k);
        return m;
    }
    #else
    static inline unsigned int fg_far_mask64(const double* x, double lim) {
        unsigned int m = 0;
        for (unsigned int j = 0; j < 32; j++)
            m |= (unsigned int)((x[j] > lim) | (x[j] < -lim)) << j;
        return m;
    }
    #endif
    """
    int fg_ctz32(unsigned int m) noexcept nogil
    int fg_popcount32(unsigned int m) noexcept nogil
    unsigned int _gx_far_mask "fg_far_mask32"(const float* x) noexcept nogil
    unsigned int _gx_far_mask64 "fg_far_mask64"(const double* x, double lim) noexcept nogil

cdef extern from *:
    # float32 forward and gradient in float32 arithmetic (AVX-512F, or AVX2 with FMA): see "float32
    # kernels" in the header.  Compiled in when FASTGELU_F32_FWD is defined (setup.py does unless the environment variable
    # FASTGELU_F32_FWD=0 at build time).  GX_F32_SIMD says whether this build has it.
    """
    #if (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))) \
        && defined(FASTGELU_F32_FWD)
    #define GX_F32_SIMD 1
    #include <immintrin.h>
    #include <stddef.h>
    #include <math.h>
    /* BEGIN GENERATED by tools/fit_gelu_f32.py --write (do not edit by hand) */
    /* 2^f = 1 + f*Q(f), max relative error 3.00e-09 */
    #define GX_F_KH 0.7213475108146667f    /* log2(e)/2 = GX_F_KH + GX_F_KL */
    #define GX_F_KL 9.629815167500055e-09f
    #define GX_F_Q0 0.6931471824645996f
    #define GX_F_Q1 0.24022647738456726f
    #define GX_F_Q2 0.05550359934568405f
    #define GX_F_Q3 0.009618505835533142f
    #define GX_F_Q4 0.0013390813255682588f
    #define GX_F_Q5 0.00015326475840993226f
    /* the forwards' tail: a*Phi(-a) = exp(-a^2/2) (C - r(a^2)), r = N/D of degree (2, 3) for a in [3.5, 15.0], max error 3.60e-09 relative to C - r */
    #define GX_F_RC 0.3989422917366028f
    #define GX_F_RN0 0.2366221845149994f
    #define GX_F_RN1 0.09787026047706604f
    #define GX_F_RN2 0.006407054606825113f
    #define GX_F_RD1 1.2319085597991943f
    #define GX_F_RD2 0.2935218811035156f
    #define GX_F_RD3 0.016059938818216324f
    #if defined(__AVX512F__)
    /* AVX-512: 32 intervals, index (bits(a + 1) >> 20) & 31; u = a - L; degree 5 */
    #define GX_F_N 32
    #define GX_F_SHIFT 20
    #define GX_F_DEG 5
    static const float GX_F_L[32] __attribute__((aligned(64))) = {1.0f, 1.25f, 1.5f, 1.75f, 2.0f, 2.25f, 2.5f, 2.75f, 3.0f, 3.5f, 4.0f, 4.5f, 5.0f, 5.5f, 6.0f, 6.5f, 7.0f, 8.0f, 9.0f, 10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 0.0f, 0.125f, 0.25f, 0.375f, 0.5f, 0.625f, 0.75f, 0.875f};
    /* D = H + (C0 + u*(C1 + ...)) (gradient), max weighted error 3.12e-10; rows H, C0, ..., C5 */
    static const float GX_F_D[7][32] __attribute__((aligned(64))) = {
        {-0.1373639851808548f, -0.2679175138473511f, -0.39263275265693665f, -0.5129173398017883f, -0.6297825574874878f, -0.7439681887626648f, -0.8560243248939514f, -0.9663664698600769f, -1.075312852859497f, -1.2899527549743652f, -1.5013582706451416f, -1.7104365825653076f, -1.917791724205017f, -2.1238393783569336f, -2.328873872756958f, -2.5331084728240967f, -2.736701488494873f, -3.1424143314361572f, -3.546679735183716f, -3.949913501739502f, -4.352386474609375f, -4.754283905029297f, -5.155734539031982f, -5.5568318367004395f, 0.5f, 0.40392544865608215f, 0.31429654359817505f, 0.2300010770559311f, 0.1501476913690567f, 0.0740172415971756f, 0.001025752048008144f, -0.06930392235517502f},
        {-2.3160373618935637e-09f, -1.2425735107512992e-08f, 4.856541391262681e-09f, 2.4322430292045283e-08f, 1.4750604293567449e-08f, 2.0408450041031756e-08f, -9.055320049355942e-09f, -1.8396308476553713e-08f, 2.468425641666272e-08f, 3.2503152169738314e-08f, -4.937439967989121e-08f, -5.605968311783727e-08f, -5.2699466124295213e-08f, -4.0963826108963985e-08f, 6.426616749877212e-08f, 4.0027565262334974e-08f, -9.656323385343057e-08f, -2.3160314555070727e-08f, -8.213508095877842e-08f, 2.852216240967209e-08f, -2.0494880459409615e-07f, 8.109223159635803e-08f, 1.242248259814005e-07f, -1.5846470091673837e-07f, 0.0f, -1.1739901495388949e-08f, -1.0896094693180203e-08f, -4.56127846604204e-09f, 2.8638522664437005e-09f, 1.6135796032656913e-09f, -3.763882109632244e-13f, -2.321572045715925e-09f},
        {-0.5363062620162964f, -0.509434163570404f, -0.4892135262489319f, -0.47372913360595703f, -0.46168053150177f, -0.45216765999794006f, -0.44455617666244507f, -0.43839147686958313f, -0.4333426356315613f, -0.4256764054298401f, -0.4202418625354767f, -0.41626912355422974f, -0.41328784823417664f, -0.41099950671195984f, -0.40920838713645935f, -0.40778234601020813f, -0.4066298007965088f, -0.40490368008613586f, -0.4036948084831238f, -0.4028168320655823f, -0.40215981006622314f, -0.40165576338768005f, -0.4012608230113983f, -0.4009457528591156f, -0.7978845834732056f, -0.7411603927612305f, -0.694376528263092f, -0.6555328965187073f, -0.6230751276016235f, -0.5957869291305542f, -0.5727102160453796f, -0.5530853271484375f},
        {0.062106549739837646f, 0.046322863548994064f, 0.03518609330058098f, 0.02717745117843151f, 0.02131272666156292f, 0.01694721356034279f, 0.013647934421896935f, 0.011119387112557888f, 0.009155956096947193f, 0.006387213245034218f, 0.004605744034051895f, 0.0034156928304582834f, 0.002595435129478574f, 0.002013387391343713f, 0.0015904693864285946f, 0.0012767730513587594f, 0.0010391449322924018f, 0.0007136610220186412f, 0.0005100806592963636f, 0.0003767942835111171f, 0.0002858028165064752f, 0.0002218410954810679f, 0.00017549688345752656f, 0.0001412310084560886f, 0.25000137090682983f, 0.20550671219825745f, 0.1700861155986786f, 0.14169107377529144f, 0.11877508461475372f, 0.10016243159770966f, 0.08495346456766129f, 0.07244890183210373f},
        {-0.025070050731301308f, -0.01752546802163124f, -0.01248486153781414f, -0.00907471776008606f, -0.006702820770442486f, -0.005028492771089077f, -0.0038270459044724703f, -0.002953357296064496f, -0.002306547947227955f, -0.0014556209789589047f, -0.0009572620037943125f, -0.0006501130992546678f, -0.00045706855598837137f, -0.00032808518153615296f, -0.00024083297466859221f, -0.00018172600539401174f, -0.000137991170049645f, -8.413288742303848e-05f, -5.390656224335544e-05f, -3.6441400879994035e-05f, -2.513546496629715e-05f, -1.8054337488138117e-05f, -1.313743086939212e-05f, -9.933571163855959e-06f, -0.13300158083438873f, -0.10547290742397308f, -0.08428336679935455f, -0.06780531257390976f, -0.05488619953393936f, -0.044706717133522034f, -0.036686837673187256f, -0.03027573600411415f},
        {0.009107181802392006f, 0.006037747021764517f, 0.004026095382869244f, 0.002802173839882016f, 0.0019579357467591763f, 0.0013865696964785457f, 0.0009938795119524002f, 0.0007281767320819199f, 0.0005391469458118081f, 0.00030799355590716004f, 0.00018734329205472022f, 0.00011565614840947092f, 7.892522990005091e-05f, 5.1919298130087554e-05f, 3.480958184809424e-05f, 2.693781061680056e-05f, 1.7599519196664914e-05f, 9.509839401289355e-06f, 5.342253189155599e-06f, 3.6165201890980825e-06f, 2.1403336631919956e-06f, 1.5130140127439518e-06f, 9.228650128534355e-07f, 7.472111747119925e-07f, 0.062486592680215836f, 0.04758814349770546f, 0.036950498819351196f, 0.028859449550509453f, 0.022503787651658058f, 0.01763061434030533f, 0.014347209595143795f, 0.011700727045536041f},
        {-0.0025480156764388084f, -0.0016478154575452209f, -0.0009911275701597333f, -0.0007046917453408241f, -0.00046570191625505686f, -0.00030461608548648655f, -0.00019529540440998971f, -0.00013380330346990377f, -9.419876732863486e-05f, -4.783554686582647e-05f, -2.7979906008113176e-05f, -1.484974654886173e-05f, -1.2047279597027227e-05f, -6.9431530391739216e-06f, -3.828242370218504e-06f, -4.502642241277499e-06f, -1.7222611177203362e-06f, -8.205137760342041e-07f, -3.637838403847127e-07f, -3.4385411140647193e-07f, -1.4204806575435214e-07f, -1.2728820308893773e-07f, -3.967666728499353e-08f, -6.621723258604106e-08f, -0.024524174630641937f, -0.016839342191815376f, -0.012939732521772385f, -0.009918851777911186f, -0.007050193380564451f, -0.004899257328361273f, -0.004797957371920347f, -0.004440754186362028f},
    };
    /* a*Phi(-a) (forward) for a <= R: 32 intervals i = round(a*K), u = a - L, C0 + u*(C1 + ...) with C0 exact; degree 6, max weighted error 2.93e-08; rows L, C0, ..., C6 */
    #define GX_F_CR 6.0f
    #define GX_F_CK 5.166666507720947f
    #define GX_F_CDEG 6
    static const float GX_F_C[8][32] __attribute__((aligned(64))) = {
        {0.0f, 0.19351500272750854f, 0.3872111439704895f, 0.5804122090339661f, 0.774424135684967f, 0.9676321744918823f, 1.1615629196166992f, 1.3547239303588867f, 1.5480754375457764f, 1.7420021295547485f, 1.9357446432113647f, 2.1292099952697754f, 2.3226044178009033f, 2.515547275543213f, 2.7093143463134766f, 2.9034106731414795f, 3.097329616546631f, 3.290006399154663f, 3.4846200942993164f, 3.6774227619171143f, 3.871002435684204f, 4.06568717956543f, 4.257416725158691f, 4.449764728546143f, 4.6447978019714355f, 4.8376617431640625f, 5.0336503982543945f, 5.225468158721924f, 5.418459415435791f, 5.61342716217041f, 5.8045477867126465f, 6.000007152557373f},
        {0.0f, 0.08191061019897461f, 0.13525283336639404f, 0.16299039125442505f, 0.16986219584941864f, 0.16122111678123474f, 0.1425313502550125f, 0.11888077110052109f, 0.09412618726491928f, 0.07099361717700958f, 0.05119946226477623f, 0.0353841595351696f, 0.023458784446120262f, 0.014948355033993721f, 0.009133427403867245f, 0.005358567461371422f, 0.0030241182539612055f, 0.001648048171773553f, 0.0008586735348217189f, 0.0004332047828938812f, 0.00020978647808078676f, 9.735519415698946e-05f, 4.402225386002101e-05f, 1.9126069673802704e-05f, 7.90567082731286e-06f, 3.1777503863850143e-06f, 1.211164089909289e-06f, 4.538711380064342e-07f, 1.628647510187875e-07f, 5.567344274481911e-08f, 1.8731261874904703e-08f, 5.919272183518842e-09f},
        {0.5f, 0.34750857949256897f, 0.2059820294380188f, 0.08516178280115128f, -0.009566760621964931f, -0.07510049641132355f, -0.11332584917545319f, -0.1281387358903885f, -0.12553560733795166f, -0.11165472865104675f, -0.09215035289525986f, -0.07142233848571777f, -0.05234317481517792f, -0.036464810371398926f, -0.02416008710861206f, -0.015266835689544678f, -0.009226125665009022f, -0.005356060806661844f, -0.002962350146844983f, -0.0015799589455127716f, -0.0008065138827078044f, -0.0003935394634027034f, -0.00018650868150871247f, -8.475375216221437e-05f, -3.659016510937363e-05f, -1.532600072096102e-05f, -6.080525508878054e-06f, -2.366255330343847e-06f, -8.807102176433546e-07f, -3.1197106409308617e-07f, -1.0855848842084015e-07f, -3.5467230929953075e-08f},
        {-0.3989422917366028f, -0.3842107355594635f, -0.34238144755363464f, -0.28031858801841736f, -0.20694774389266968f, -0.1328546404838562f, -0.06611917912960052f, -0.013125298544764519f, 0.02386508323252201f, 0.04525762423872948f, 0.05352117866277695f, 0.05237961933016777f, 0.0456305667757988f, 0.0364806167781353f, 0.02713366039097309f, 0.01894831843674183f, 0.012506271712481976f, 0.007854525931179523f, 0.004669831600040197f, 0.0026600195560604334f, 0.0014435541816055775f, 0.0007459967746399343f, 0.000372797017917037f, 0.0001781174069037661f, 8.068566967267543e-05f, 3.535603536874987e-05f, 1.4653426660515834e-05f, 5.939874881732976e-06f, 2.2993913262325805e-06f, 8.461067295684188e-07f, 3.051733870051976e-07f, 1.0328605526410684e-07f},
        {1.121841705753468e-06f, 0.05004139617085457f, 0.09196493029594421f, 0.11945129930973053f, 0.12972360849380493f, 0.12342195957899094f, 0.10427765548229218f, 0.07789074629545212f, 0.04979861527681351f, 0.024524301290512085f, 0.0049995663575828075f, -0.00782888475805521f, -0.014512947760522366f, -0.016453638672828674f, -0.015327636152505875f, -0.01263431552797556f, -0.009511251002550125f, -0.0066615198738873005f, -0.0043546478264033794f, -0.002694765804335475f, -0.001575769972987473f, -0.0008718312019482255f, -0.0004634348733816296f, -0.0002345092361792922f, -0.0001121578534366563f, -5.1684928621398285e-05f, -2.2479205654235557e-05f, -9.528284863336012e-06f, -3.8493453757837415e-06f, -1.4758321640329086e-06f, -5.531787792278919e-07f, -1.944051319924256e-07f},
        {0.06645581126213074f, 0.06100771948695183f, 0.04584868252277374f, 0.024656103923916817f, 0.0019900056067854166f, -0.017461247742176056f, -0.030683763325214386f, -0.03637879714369774f, -0.03527098521590233f, -0.029286202043294907f, -0.020906582474708557f, -0.012372853234410286f, -0.005220886319875717f, -0.0001783637999324128f, 0.00275178044103086f, 0.003942623268812895f, 0.003964047413319349f, 0.0033670817501842976f, 0.002549491124227643f, 0.001774026663042605f, 0.0011455512139946222f, 0.0006910934462212026f, 0.0003962181508541107f, 0.00021469121566042304f, 0.0001093855535145849f, 5.339414929039776e-05f, 2.4520068109268323e-05f, 1.092459206120111e-05f, 4.626069312507752e-06f, 1.8550616687207366e-06f, 7.250157523230882e-07f, 2.6579800760373473e-07f},
        {0.0004194161156192422f, -0.011214280501008034f, -0.01960943080484867f, -0.02337236888706684f, -0.022374233230948448f, -0.01717313751578331f, -0.009763496927917004f, -0.002121500438079238f, 0.003961215727031231f, 0.007735894061625004f, 0.008994858711957932f, 0.008301110938191414f, 0.006379695609211922f, 0.0040712179616093636f, 0.0020514209754765034f, 0.0005451730685308576f, -0.00037429481744766235f, -0.0007803611224517226f, -0.0008476813090965152f, -0.0007359057199209929f, -0.0005569553468376398f, -0.0003811875358223915f, -0.00024163878697436303f, -0.0001429271069355309f, -7.878628821345046e-05f, -4.1242095903726295e-05f, -2.0185696484986693e-05f, -9.52251320995856e-06f, -4.254896794009255e-06f, -1.7951441577679361e-06f, -7.348060648837418e-07f, -2.7106869993076543e-07f},
        {-0.011717467568814754f, -0.009185303002595901f, -0.005530315451323986f, -0.0012770877219736576f, 0.0028616096824407578f, 0.005797206424176693f, 0.0067136636935174465f, 0.006146689876914024f, 0.004487332422286272f, 0.0022050882689654827f, 0.00021011369244661182f, -0.0013225831789895892f, -0.0019475006265565753f, -0.0018539039883762598f, -0.0015812958590686321f, -0.0010657979873940349f, -0.0005644685006700456f, -0.0001801528560463339f, 2.9308108423720114e-05f, 0.0001345047348877415f, 0.00015796540537849069f, 0.0001385351351927966f, 0.00010199354437645525f, 6.808696343796328e-05f, 4.174017158220522e-05f, 2.410799788776785e-05f, 1.274035093956627e-05f, 6.33314539300045e-06f, 3.007771056218189e-06f, 1.3454551890390576e-06f, 5.729705776502669e-07f, 2.9307085469554295e-07f},
    };
    /* Phi(-a) - a*phi(a) (gradient) for a <= R: 32 intervals i = round(a*K), u = a - L, C0 + u*(C1 + ...) with C0 exact; degree 6, max weighted error 4.03e-08; rows L, C0, ..., C6 */
    #define GX_F_GR 6.25f
    #define GX_F_GK 4.960000038146973f
    #define GX_F_GDEG 6
    static const float GX_F_G[8][32] __attribute__((aligned(64))) = {
        {0.0f, 0.20161227881908417f, 0.4032121002674103f, 0.6046144962310791f, 0.8064410090446472f, 1.0084400177001953f, 1.2094001770019531f, 1.411083698272705f, 1.613255500793457f, 1.814737319946289f, 2.016652822494507f, 2.2169322967529297f, 2.4195525646209717f, 2.6206576824188232f, 2.8219094276428223f, 3.0241761207580566f, 3.225961208343506f, 3.4275479316711426f, 3.629204034805298f, 3.831223487854004f, 4.032509803771973f, 4.234015941619873f, 4.43402624130249f, 4.637460231781006f, 4.840073108673096f, 5.039978504180908f, 5.2407050132751465f, 5.442668437957764f, 5.644820690155029f, 5.846947193145752f, 6.049626350402832f, 6.250186920166016f},
        {0.5f, 0.3412964344024658f, 0.19509655237197876f, 0.07180434465408325f, -0.02241932414472103f, -0.08533190190792084f, -0.11894956231117249f, -0.1289021074771881f, -0.12182853370904922f, -0.10472582280635834f, -0.08343392610549927f, -0.06244434416294098f, -0.04392110928893089f, -0.029339658096432686f, -0.01861562207341194f, -0.011214830912649632f, -0.006447724997997284f, -0.0035398779436945915f, -0.0018560964381322265f, -0.0009291358292102814f, -0.00044602216803468764f, -0.00020473817130550742f, -9.053800749825314e-05f, -3.779252801905386e-05f, -1.5156385416048579e-05f, -5.897743903915398e-06f, -2.191729436162859e-06f, -7.758908395771869e-07f, -2.629889763738902e-07f, -8.545389817982141e-08f, -2.6531742136626235e-08f, -7.99818700158994e-09f},
        {-0.7978845834732056f, -0.7659424543380737f, -0.6757946014404297f, -0.5431244373321533f, -0.3889654874801636f, -0.23586145043373108f, -0.10317112505435944f, -0.0013035435695201159f, 0.06543172895908356f, 0.09942027181386948f, 0.10792287439107895f, 0.0996057316660881f, 0.08234122395515442f, 0.06264883279800415f, 0.04438195750117302f, 0.029444251209497452f, 0.01843862794339657f, 0.010933649726212025f, 0.0061508347280323505f, 0.0032856673933565617f, 0.0016749564092606306f, 0.0008133288356475532f, 0.00037902919575572014f, 0.0001663805014686659f, 6.996798038017005e-05f, 2.8465008654166013e-05f, 1.1038422599085607e-05f, 4.07099742005812e-06f, 1.4350872561408323e-06f, 4.841951408707246e-07f, 1.5588732082960632e-07f, 4.864639535639981e-08f},
        {3.162224174957373e-06f, 0.15602518618106842f, 0.28454384207725525f, 0.36510369181632996f, 0.3892524838447571f, 0.3608796000480652f, 0.2945917248725891f, 0.20893177390098572f, 0.12239398807287216f, 0.04929712787270546f, -0.0035216817632317543f, -0.03465137630701065f, -0.04792354255914688f, -0.04836289584636688f, -0.04161837697029114f, -0.03206091374158859f, -0.02266567200422287f, -0.014893396757543087f, -0.00916307233273983f, -0.005301173310726881f, -0.002903524786233902f, -0.0015056077390909195f, -0.0007451502606272697f, -0.0003462353488430381f, -0.00015351970796473324f, -6.560096517205238e-05f, -2.6652840460883453e-05f, -1.0276405191689264e-05f, -3.7791446629853453e-06f, -1.3275731589601492e-06f, -4.4427179091144353e-07f, -1.4382177937477536e-07f},
        {0.26581788063049316f, 0.24217863380908966f, 0.17706115543842316f, 0.08721741288900375f, -0.006222662515938282f, -0.08335039019584656f, -0.1311720758676529f, -0.14675897359848022f, -0.13472679257392883f, -0.10515464097261429f, -0.06899996846914291f, -0.03558730334043503f, -0.009640767239034176f, 0.00663387356325984f, 0.014475961215794086f, 0.016223708167672157f, 0.014422771520912647f, 0.01117529533803463f, 0.007826031185686588f, 0.0050408062525093555f, 0.0030261885840445757f, 0.001701224478892982f, 0.0009046629420481622f, 0.00044918296043761075f, 0.00021160738833714277f, 9.55697032622993e-05f, 4.089529102202505e-05f, 1.6558584320591763e-05f, 6.377073077601381e-06f, 2.3401946691592457e-06f, 8.16398937786289e-07f, 2.7484850306791486e-07f},
        {0.002855332102626562f, -0.057645685970783234f, -0.10034409910440445f, -0.1181427463889122f, -0.1091269850730896f, -0.07911704480648041f, -0.03918833285570145f, -0.000535794475581497f, 0.028137043118476868f, 0.04289952293038368f, 0.04473675787448883f, 0.03758659586310387f, 0.02611338533461094f, 0.014584027230739594f, 0.0054103899747133255f, -0.0005403903778642416f, -0.003487389301881194f, -0.004291172605007887f, -0.0038798030000180006f, -0.002978370524942875f, -0.0020434337202459574f, -0.0012808451429009438f, -0.000746494100894779f, -0.00040206973790191114f, -0.00020356426830403507f, -9.804515866562724e-05f, -4.4509622966870666e-05f, -1.904030614241492e-05f, -7.718293090874795e-06f, -2.9713505682593677e-06f, -1.0845467386388918e-06f, -3.817256128968438e-07f},
        {-0.0857204869389534f, -0.051749687641859055f, -0.03148111701011658f, -0.0043431175872683525f, 0.021048786118626595f, 0.03636939823627472f, 0.04056970402598381f, 0.034341245889663696f, 0.021602218970656395f, 0.00772445322945714f, -0.003366593038663268f, -0.009954346343874931f, -0.011928729712963104f, -0.010608834214508533f, -0.007540759164839983f, -0.004299389198422432f, -0.0017316577723249793f, -6.234167813090608e-05f, 0.000736416201107204f, 0.000958265969529748f, 0.0008620667504146695f, 0.000645864405669272f, 0.0004300664004404098f, 0.00025815091794356704f, 0.0001433968573110178f, 7.47464073356241e-05f, 3.641859439085238e-05f, 1.661414535192307e-05f, 7.1434956225857604e-06f, 2.9041686957498314e-06f, 1.1154875210195314e-06f, 3.937889232474845e-07f},
        {0.08851093798875809f, 0.01249064039438963f, 0.021479925140738487f, 0.022735752165317535f, 0.01735895499587059f, 0.008357077836990356f, -0.0012303695548325777f, -0.008629345335066319f, -0.011600869707763195f, -0.010712997056543827f, -0.007543010171502829f, -0.003378914901986718f, 2.000811400648672e-05f, 0.0021963005419820547f, 0.002763779368251562f, 0.002484352793544531f, 0.0018111871322616935f, 0.0009879176504909992f, 0.0003976949374191463f, 2.0758337996085174e-05f, -0.00015683655510656536f, -0.00019237055676057935f, -0.00016533568850718439f, -0.00011601606820477173f, -7.358282891800627e-05f, -4.228877151035704e-05f, -2.2442100089392625e-05f, -1.103053455153713e-05f, -5.057465841673547e-06f, -2.190885425079614e-06f, -8.91620345555566e-07f, -4.3928258719461155e-07f},
    };
    /* a*sigma(-w(a)) (tanh form's forward) for a <= R: 32 intervals i = round(a*K), u = a - L, C0 + u*(C1 + ...) with C0 exact; degree 6, max weighted error 2.46e-08; rows L, C0, ..., C6 */
    #define GX_F_TCR 5.25f
    #define GX_F_TCK 5.904761791229248f
    #define GX_F_TCDEG 6
    static const float GX_F_TC[8][32] __attribute__((aligned(64))) = {
        {0.0f, 0.1693825125694275f, 0.3386854827404022f, 0.5080471634864807f, 0.6773394346237183f, 0.846832275390625f, 1.0161571502685547f, 1.1854488849639893f, 1.3544353246688843f, 1.524245262145996f, 1.693817377090454f, 1.8626052141189575f, 2.0327792167663574f, 2.202024459838867f, 2.370940923690796f, 2.5402121543884277f, 2.7089526653289795f, 2.879000663757324f, 3.0476996898651123f, 3.217043399810791f, 3.386866569519043f, 3.556317090988159f, 3.7258033752441406f, 3.8959803581237793f, 4.063291072845459f, 4.2337236404418945f, 4.404797554016113f, 4.573929786682129f, 4.741939067840576f, 4.910326957702637f, 5.079432487487793f, 5.25111198425293f},
        {0.0f, 0.07330019026994705f, 0.12444494664669037f, 0.15533341467380524f, 0.16877172887325287f, 0.16823291778564453f, 0.15743644535541534f, 0.13999834656715393f, 0.11915133893489838f, 0.09734180569648743f, 0.07661232352256775f, 0.058240778744220734f, 0.042638007551431656f, 0.030190255492925644f, 0.0206519216299057f, 0.013618730939924717f, 0.008669013157486916f, 0.005293062422424555f, 0.003119731554761529f, 0.001761733554303646f, 0.0009517689468339086f, 0.000492566789034754f, 0.0002434042835375294f, 0.00011428772995714098f, 5.175320984562859e-05f, 2.1925212422502227e-05f, 8.766784958424978e-06f, 3.350045744809904e-06f, 1.2172009746791446e-06f, 4.160669107022841e-07f, 1.331706016571843e-07f, 3.926431801914987e-08f},
        {0.5f, 0.3661426901817322f, 0.23988403379917145f, 0.12769849598407745f, 0.034509044140577316f, -0.03716167435050011f, -0.08678265661001205f, -0.11606518924236298f, -0.12811464071273804f, -0.12687306106090546f, -0.11641895025968552f, -0.10066460072994232f, -0.08256260305643082f, -0.06471317261457443f, -0.04859289154410362f, -0.03496513143181801f, -0.024163875728845596f, -0.015966705977916718f, -0.010146352462470531f, -0.0061630187556147575f, -0.003573775291442871f, -0.0019807785283774137f, -0.001046305289492011f, -0.0005243708728812635f, -0.00025275611551478505f, -0.00011393486056476831f, -4.841073678107932e-05f, -1.9616330973803997e-05f, -7.544618256360991e-06f, -2.726690809140564e-06f, -9.217931165039772e-07f, -2.869430204555101e-07f},
        {-0.3989422917366028f, -0.3875649571418762f, -0.3549158275127411f, -0.30508002638816833f, -0.2440798133611679f, -0.1786065697669983f, -0.1152762770652771f, -0.05925438925623894f, -0.014006111770868301f, 0.019252022728323936f, 0.040501538664102554f, 0.05128276348114014f, 0.05391840636730194f, 0.0507919006049633f, 0.04424252733588219f, 0.036142416298389435f, 0.02793671004474163f, 0.020451532676815987f, 0.014277903363108635f, 0.009475273080170155f, 0.005976016633212566f, 0.0035876575857400894f, 0.0020457899663597345f, 0.0011038336670026183f, 0.0005706237279810011f, 0.0002755487512331456f, 0.00012517106370069087f, 5.407191565609537e-05f, 2.211939681728836e-05f, 8.488696948916186e-06f, 3.042893922611256e-06f, 1.0036396815849002e-06f},
        {1.2863321217082557e-06f, 0.04429188743233681f, 0.08290347456932068f, 0.1112675815820694f, 0.1266796886920929f, 0.12868674099445343f, 0.1189274936914444f, 0.10056521743535995f, 0.07747675478458405f, 0.05319555476307869f, 0.030859550461173058f, 0.012463724240660667f, -0.001314761582762003f, -0.010241047479212284f, -0.014982259832322598f, -0.016456812620162964f, -0.015666406601667404f, -0.013524825684726238f, -0.010830489918589592f, -0.008107827045023441f, -0.005701062735170126f, -0.0037808844354003668f, -0.0023651123046875f, -0.0013924826635047793f, -0.0007806872017681599f, -0.00040779990376904607f, -0.00019972622976638377f, -9.26493012229912e-05f, -4.056599209434353e-05f, -1.662326576479245e-05f, -6.3497132032352965e-06f, -2.2290018932835665e-06f},
        {0.06677401810884476f, 0.06250838190317154f, 0.05038417875766754f, 0.03270499408245087f, 0.012697849422693253f, -0.006357137579470873f, -0.021663840860128403f, -0.03160403296351433f, -0.03579838573932648f, -0.03495044261217117f, -0.03042321838438511f, -0.023861441761255264f, -0.016621069982647896f, -0.009904631413519382f, -0.004353892989456654f, -0.0002599685685709119f, 0.002370196860283613f, 0.003736063139513135f, 0.004114802926778793f, 0.0038403277285397053f, 0.0032074798364192247f, 0.002454166766256094f, 0.0017383330268785357f, 0.0011440864764153957f, 0.0007088664569891989f, 0.0004067681438755244f, 0.00021754180488642305f, 0.00010951052536256611f, 5.177583443582989e-05f, 2.2828950022812933e-05f, 9.353315363114234e-06f, 3.5178923099010717e-06f},
        {0.000633303658105433f, -0.010193269699811935f, -0.018560335040092468f, -0.022552350535988808f, -0.023533368483185768f, -0.020707115530967712f, -0.015214828774333f, -0.008423394523561f, -0.0021364151034504175f, 0.003407570766285062f, 0.007037843111902475f, 0.008325888775289059f, 0.008431609719991684f, 0.007261871360242367f, 0.005809265188872814f, 0.003840840421617031f, 0.002309687901288271f, 0.0009818279650062323f, 1.5370360415545292e-05f, -0.0005963026778772473f, -0.0008579371497035027f, -0.0008835842600092292f, -0.0007777289138175547f, -0.0006085871136747301f, -0.0004329916264396161f, -0.00028171404846943915f, -0.00016829994274303317f, -9.355851943837479e-05f, -4.845744842896238e-05f, -2.325642344658263e-05f, -1.0326846677344292e-05f, -4.078013716934947e-06f},
        {-0.013236146420240402f, -0.010125422850251198f, -0.007524775806814432f, -0.002301363740116358f, 0.0011053754715248942f, 0.004330409225076437f, 0.006199239753186703f, 0.006883031688630581f, 0.006359103135764599f, 0.00442540505900979f, 0.002158697694540024f, 0.0007662556599825621f, -0.0006139331380836666f, -0.0011889757588505745f, -0.0019097983604297042f, -0.0013646479928866029f, -0.0014897206565365195f, -0.0011647327337414026f, -0.0007947017438709736f, -0.0003522915649227798f, -0.00012196442548884079f, 2.943529216281604e-05f, 0.00013091330765746534f, 0.00017783451767172664f, 0.00015967240324243903f, 0.00012984743807464838f, 9.095828863792121e-05f, 5.7331366406288e-05f, 3.319460302009247e-05f, 1.7441037925891578e-05f, 8.493163477396592e-06f, 4.598595296556596e-06f},
    };
    #else
    /* AVX2: 8 intervals, index (bits(a + 1) >> 22) & 7; u = a - L; degree 7 */
    #define GX_F_N 8
    #define GX_F_SHIFT 22
    #define GX_F_DEG 7
    static const float GX_F_L[8] __attribute__((aligned(64))) = {1.0f, 2.0f, 3.0f, 5.0f, 7.0f, 11.0f, 0.0f, 0.5f};
    /* D = H + (C0 + u*(C1 + ...)) (gradient), max weighted error 1.61e-09; rows H, C0, ..., C7 */
    static const float GX_F_D[9][8] __attribute__((aligned(64))) = {
        {-0.1373639851808548f, -0.6297825574874878f, -1.075312852859497f, -1.9177920818328857f, -2.7367024421691895f, -4.352390289306641f, 0.5f, 0.1501476913690567f},
        {-3.478629162501079e-09f, -1.9592856226324784e-09f, -4.148094490119547e-08f, -1.5332348723973155e-08f, -3.9821301811571175e-08f, 9.410489809624778e-08f, 0.0f, 3.078580945725662e-09f},
        {-0.5363062024116516f, -0.4616805613040924f, -0.4333426058292389f, -0.41328802704811096f, -0.40663012862205505f, -0.40216076374053955f, -0.7978845238685608f, -0.6230751276016235f},
        {0.06210536137223244f, 0.021312659606337547f, 0.009155039675533772f, 0.002595167374238372f, 0.0010387760121375322f, 0.000285674468614161f, 0.24999836087226868f, 0.1187756285071373f},
        {-0.025068946182727814f, -0.006703124847263098f, -0.0023048296570777893f, -0.00045608144137077034f, -0.00013747767661698163f, -2.5089522750931792e-05f, -0.1329558789730072f, -0.05490696802735329f},
        {0.009181167930364609f, 0.00196953397244215f, 0.000543836154974997f, 7.740448199911043e-05f, 1.7401054719812237e-05f, 2.1316286620276514e-06f, 0.062318798154592514f, 0.02277507074177265f},
        {-0.0029862718656659126f, -0.0005327061517164111f, -0.00011329814878990874f, -1.21576613310026e-05f, -1.9354315554664936e-06f, -1.5963505006766354e-07f, -0.02587873302400112f, -0.008493928238749504f},
        {0.0007659320253878832f, 0.0001197825840790756f, 1.77172951225657e-05f, 1.5303912732633762e-06f, 1.5725741775440838e-07f, 8.383271854484065e-09f, 0.008808190934360027f, 0.0026384915690869093f},
        {-0.00010961305815726519f, -1.591745785844978e-05f, -1.4473409919446567e-06f, -1.0717561593764913e-07f, -6.466989166398207e-09f, -1.8901837040008473e-10f, -0.0017908712616190314f, -0.0004977168282493949f},
    };
    /* a*Phi(-a) (forward) for a <= R: 8 intervals i = round(a*K), u = a - L, C0 + u*(C1 + ...) with C0 exact; degree 7, max weighted error 5.87e-09; rows L, C0, ..., C7 */
    #define GX_F_CR 3.6f
    #define GX_F_CK 2.0830554962158203f
    #define GX_F_CDEG 7
    static const float GX_F_C[9][8] __attribute__((aligned(64))) = {
        {0.0f, 0.480119913816452f, 0.9599813222885132f, 1.440181016921997f, 1.920287013053894f, 2.400029182434082f, 2.8805313110351562f, 3.360255479812622f},
        {0.0f, 0.15151195228099823f, 0.16178786754608154f, 0.10788121819496155f, 0.052636656910181046f, 0.019672757014632225f, 0.005717934109270573f, 0.0013083226513117552f},
        {0.5f, 0.14488264918327332f, -0.07304589450359344f, -0.1287667602300644f, -0.09380108118057251f, -0.04554687812924385f, -0.016153914853930473f, -0.004346564412117004f},
        {-0.3989422917366028f, -0.31453660130500793f, -0.13569357991218567f, 0.005241228733211756f, 0.05325906351208687f, 0.04210033640265465f, 0.019827812910079956f, 0.006547551602125168f},
        {7.114164759514097e-07f, 0.10723381489515305f, 0.12394742667675018f, 0.06537557393312454f, 0.006313560996204615f, -0.015766197815537453f, -0.012992000207304955f, -0.0057551986537873745f},
        {0.06647555530071259f, 0.036136019974946976f, -0.016792142763733864f, -0.03663254156708717f, -0.02160639502108097f, -0.00293181324377656f, 0.0038743377663195133f, 0.003080586902797222f},
        {0.00014038935478311032f, -0.022045796737074852f, -0.017544645816087723f, 0.0008695431752130389f, 0.00903844740241766f, 0.005458136089146137f, 0.0006718260119669139f, -0.0008394927717745304f},
        {-0.010630750097334385f, -0.0034728862810879946f, 0.005579074379056692f, 0.005433220416307449f, 0.00026036688359454274f, -0.0019681325647979975f, -0.0010974279139190912f, -9.010115172713995e-05f},
        {0.0014567833859473467f, 0.0029247067868709564f, 0.0015666789840906858f, -0.0012979351449757814f, -0.0011521393898874521f, -5.321023127180524e-05f, 0.00036392887705005705f, 0.00016878325550351292f},
    };
    /* Phi(-a) - a*phi(a) (gradient) for a <= R: 8 intervals i = round(a*K), u = a - L, C0 + u*(C1 + ...) with C0 exact; degree 7, max weighted error 1.84e-08; rows L, C0, ..., C7 */
    #define GX_F_GR 4.0f
    #define GX_F_GK 1.874750018119812f
    #define GX_F_GDEG 7
    static const float GX_F_G[9][8] __attribute__((aligned(64))) = {
        {0.0f, 0.5335659980773926f, 1.0668753385543823f, 1.6005992889404297f, 2.1329562664031982f, 2.6674745082855225f, 3.2004170417785645f, 3.73343563079834f},
        {0.5f, 0.11220124363899231f, -0.09789977967739105f, -0.12263677269220352f, -0.07103021442890167f, -0.026511892676353455f, -0.006933755706995726f, -0.0013061210047453642f},
        {-0.7978845834732056f, -0.5935150980949402f, -0.19460007548332214f, 0.06226867437362671f, 0.10458119213581085f, 0.05816979333758354f, 0.019625041633844376f, 0.004478632938116789f},
        {1.6250195358225028e-06f, 0.3429592549800873f, 0.34472084045410156f, 0.12753614783287048f, -0.02403918281197548f, -0.0472501739859581f, -0.02378425933420658f, -0.0069597759284079075f},
        {0.26592251658439636f, 0.12042241543531418f, -0.1005614697933197f, -0.13611702620983124f, -0.04887240007519722f, 0.009137274697422981f, 0.014766962267458439f, 0.006296973209828138f},
        {0.00043271019239909947f, -0.1149824783205986f, -0.06800886988639832f, 0.026725655421614647f, 0.041365064680576324f, 0.012187347747385502f, -0.0032519076485186815f, -0.0034411351662129164f},
        {-0.06228356808423996f, -0.013684541918337345f, 0.03910963609814644f, 0.022582076489925385f, -0.007854686118662357f, -0.009938444010913372f, -0.001975549850612879f, 0.0009126942022703588f},
        {0.006845795549452305f, 0.02241411991417408f, 0.0054144482128322124f, -0.01134030893445015f, -0.005111662670969963f, 0.0022537035401910543f, 0.0018535665003582835f, 0.00017482404655311257f},
        {0.001840854063630104f, 0.00018740168889053166f, -0.0068747978657484055f, -0.0008517404785379767f, 0.002886408707126975f, 0.0006853349041193724f, -0.0005667533841915429f, -0.00024542142637073994f},
    };
    /* a*sigma(-w(a)) (tanh form's forward) for a <= R: 8 intervals i = round(a*K), u = a - L, C0 + u*(C1 + ...) with C0 exact; degree 6, max weighted error 1.99e-08; rows L, C0, ..., C6 */
    #define GX_F_TCR 3.1f
    #define GX_F_TCK 2.419032335281372f
    #define GX_F_TCDEG 6
    static const float GX_F_TC[8][8] __attribute__((aligned(64))) = {
        {0.0f, 0.41338080167770386f, 0.826664924621582f, 1.2400699853897095f, 1.6531641483306885f, 2.0677742958068848f, 2.479719877243042f, 2.8940587043762207f},
        {0.0f, 0.14041902124881744f, 0.16890867054462433f, 0.13349805772304535f, 0.08140990883111954f, 0.039814673364162445f, 0.01586974412202835f, 0.005057226400822401f},
        {0.5f, 0.18833161890506744f, -0.029800400137901306f, -0.12165912985801697f, -0.11955071985721588f, -0.07879646867513657f, -0.039517976343631744f, -0.01535993255674839f},
        {-0.3989422619342804f, -0.33473142981529236f, -0.1864061951637268f, -0.043353985995054245f, 0.03643146902322769f, 0.05366186797618866f, 0.039114393293857574f, 0.019845692440867424f},
        {-1.0308418723070645e-06f, 0.09688134491443634f, 0.12911081314086914f, 0.09343431144952774f, 0.03592118248343468f, -0.003537490963935852f, -0.016243332996964455f, -0.013298014178872108f},
        {0.06683789193630219f, 0.043094076216220856f, -0.0042404597625136375f, -0.033566247671842575f, -0.031756073236465454f, -0.01516390684992075f, -0.0015486895572394133f, 0.0038036492187529802f},
        {-0.0001368585362797603f, -0.02049380913376808f, -0.021067341789603233f, -0.006138160824775696f, 0.00611864635720849f, 0.008192738518118858f, 0.0045891087502241135f, 0.000883211032487452f},
        {-0.009810729883611202f, -0.0049756476655602455f, 0.0040593333542346954f, 0.006552457343786955f, 0.0027929150965064764f, -0.0007907677791081369f, -0.001740413485094905f, -0.0010917041217908263f},
    };
    #endif
    /* END GENERATED */

    #define GX_F_AMAX 14.99f       /* |x| clamp: a*Phi(-a) rounds to 0 from ~14.2 on; inf makes no NaN */
    #define GX_F_BIG 12.5f       /* |x| up to this: exp(-a^2/2) * P is normal (AVX2 scales it in one add) */
    #define GX_F_TINY 0x1p-30f     /* |x| below: y = x/2 rounded, by integer arithmetic (gx_f_tiny); the main
                                      path sees max(|x|, TINY), so none of its products is subnormal (a
                                      subnormal product costs ~100 cycles: microcode assist) */
    #define GX_F_MAGIC 12582912.0f /* 1.5*2^23: v + MAGIC is round(v) + MAGIC, round(v) in the low bits */
    #define GX_F_PREFETCH 2048     /* bytes read ahead in software: the hardware prefetcher alone left the
                                      kernels at 0.67x their in-cache speed on 64M elements (Xeon, KVM;
                                      AVX-512 1.13 -> 1.56 Gelem/s, AVX2 0.76 -> 1.12; 1,024 and 4,096 no better) */
    #if defined(__AVX512F__)
    typedef __m512 gx_fv;
    typedef __m512i gx_iv;
    #define GX_F_W 16
    #define GX_F_SET1 _mm512_set1_ps
    #define GX_F_SET1I _mm512_set1_epi32
    #define GX_F_ADDI _mm512_add_epi32
    #define GX_F_FMA _mm512_fmadd_ps
    #define GX_F_FMS _mm512_fmsub_ps
    #define GX_F_FNMA _mm512_fnmadd_ps
    #define GX_F_MUL _mm512_mul_ps
    #define GX_F_ADD _mm512_add_ps
    #define GX_F_SUB _mm512_sub_ps
    #define GX_F_DIV _mm512_div_ps
    #define GX_F_MAX _mm512_max_ps
    #define GX_F_MIN _mm512_min_ps
    #define GX_F_ABS _mm512_abs_ps
    /* 32-entry tables: one vpermt2ps per coefficient */
    #define GX_F_TAB(t) _mm512_permutex2var_ps(_mm512_load_ps(t), idx, _mm512_load_ps((t) + 16))
    #define GX_F_LOADU _mm512_loadu_ps
    #define GX_F_STOREU _mm512_storeu_ps
    #define GX_F_TAILMASK(k, r) __mmask16 k = (__mmask16)((1u << (r)) - 1u)
    #define GX_F_MASKLOAD(p, k) _mm512_maskz_loadu_ps(k, p)
    #define GX_F_MASKSTORE(p, k, v) _mm512_mask_storeu_ps(p, k, v)
    #else
    typedef __m256 gx_fv;
    typedef __m256i gx_iv;
    #define GX_F_W 8
    #define GX_F_SET1 _mm256_set1_ps
    #define GX_F_SET1I _mm256_set1_epi32
    #define GX_F_ADDI _mm256_add_epi32
    #define GX_F_FMA _mm256_fmadd_ps
    #define GX_F_FMS _mm256_fmsub_ps
    #define GX_F_FNMA _mm256_fnmadd_ps
    #define GX_F_MUL _mm256_mul_ps
    #define GX_F_ADD _mm256_add_ps
    #define GX_F_SUB _mm256_sub_ps
    #define GX_F_DIV _mm256_div_ps
    #define GX_F_MAX _mm256_max_ps
    #define GX_F_MIN _mm256_min_ps
    #define GX_F_ABS(v) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v)
    /* 8-entry tables: one vpermps per coefficient (two and a blend for 16 entries made the AVX2 kernel
       permute-bound: 0.67 Gelem/s) */
    #define GX_F_TAB(t) _mm256_permutevar8x32_ps(_mm256_load_ps(t), idx)
    #define GX_F_LOADU _mm256_loadu_ps
    #define GX_F_STOREU _mm256_storeu_ps
    #define GX_F_TAILMASK(k, r) __m256i k = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(r)), \
                                                               _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
    #define GX_F_MASKLOAD(p, k) _mm256_maskload_ps(p, k)
    #define GX_F_MASKSTORE(p, k, v) _mm256_maskstore_ps(p, k, v)
    #endif

    /* GELU of |x| < TINY, x/2 correctly rounded: x*Phi(x) = x/2 (1 + 0.8x + ...), so for x/2 normal it is x/2
       (exponent minus one), and for a subnormal x/2 a tie rounds up in magnitude for x > 0 (the true value
       lies above it) and down for x < 0.  Integer arithmetic: no subnormal floating-point operation. */
    static inline __attribute__((always_inline)) gx_fv gx_f_tiny(gx_fv x) {
    #if defined(__AVX512F__)
        __m512i xi = _mm512_castps_si512(x);
        __m512i mag = _mm512_and_si512(xi, _mm512_set1_epi32(0x7fffffff));
        __m512i half = _mm512_srli_epi32(_mm512_mask_add_epi32(mag, _mm512_cmpgt_epi32_mask(xi, _mm512_setzero_si512()),
                                                               mag, _mm512_set1_epi32(1)), 1);
        __m512i m = _mm512_mask_blend_epi32(_mm512_cmplt_epi32_mask(mag, _mm512_set1_epi32(0x01000000)),
                                            _mm512_sub_epi32(mag, _mm512_set1_epi32(0x00800000)), half);
        return _mm512_castsi512_ps(_mm512_or_si512(m, _mm512_andnot_si512(_mm512_set1_epi32(0x7fffffff), xi)));
    #else
        __m256i xi = _mm256_castps_si256(x);
        __m256i mag = _mm256_and_si256(xi, _mm256_set1_epi32(0x7fffffff));
        __m256i pos = _mm256_cmpgt_epi32(xi, _mm256_setzero_si256());           /* -1 where x > 0 */
        __m256i half = _mm256_srli_epi32(_mm256_sub_epi32(mag, pos), 1);
        __m256i m = _mm256_blendv_epi8(_mm256_sub_epi32(mag, _mm256_set1_epi32(0x00800000)), half,
                                       _mm256_cmpgt_epi32(_mm256_set1_epi32(0x01000000), mag));
        return _mm256_castsi256_ps(_mm256_or_si256(m, _mm256_andnot_si256(_mm256_set1_epi32(0x7fffffff), xi)));
    #endif
    }

    /* 2^f = 1 + f*Q(f), Q = Q0 + f*Q1(f): Q1 here (Horner: Estrin's shorter chains measured no faster, the
       loops are bound by operations), and q = 2^f - 1 from f = fh + fl with the leading product Q0*f taken
       from fh and fl unrounded */
    static inline __attribute__((always_inline)) gx_fv gx_f_Q1(gx_fv f) {
        gx_fv p = GX_F_FMA(GX_F_SET1(GX_F_Q5), f, GX_F_SET1(GX_F_Q4));
        p = GX_F_FMA(p, f, GX_F_SET1(GX_F_Q3));
        p = GX_F_FMA(p, f, GX_F_SET1(GX_F_Q2));
        return GX_F_FMA(p, f, GX_F_SET1(GX_F_Q1));
    }
    static inline __attribute__((always_inline)) gx_fv gx_f_q_pair(gx_fv fh, gx_fv fl) {
        const gx_fv q0 = GX_F_SET1(GX_F_Q0);
        gx_fv f = GX_F_ADD(fh, fl);
        return GX_F_FMA(fh, q0, GX_F_FMA(GX_F_MUL(f, f), gx_f_Q1(f), GX_F_MUL(fl, q0)));
    }

    /* exp(-a^2/2) = 2^-z, z = (s + sl)(KH + KL) with a^2 = s + sl exactly; 2^-z = 2^mn * 2^f, mn = round(-s*KH)
       (by MAGIC: bits(b) = bits(MAGIC) + mn), f = fh + fl: fh = -s*KH - mn rounded once (|fh| <= 1/2), fl the
       rest.  Returns q = 2^f - 1.  kl 0 leaves out a^2 KL (AVX-512's exp form: its tables hold D times
       2^(a^2 KL), a smooth factor) */
    static inline __attribute__((always_inline)) gx_fv gx_f_exp_red(gx_fv a, gx_fv* b, gx_fv* mn, const int kl) {
        const gx_fv kh = GX_F_SET1(-GX_F_KH), magic = GX_F_SET1(GX_F_MAGIC);
        gx_fv s = GX_F_MUL(a, a);
        gx_fv sl = GX_F_FMS(a, a, s);
        *b = GX_F_FMA(s, kh, magic);
        *mn = GX_F_SUB(*b, magic);
        gx_fv fh = GX_F_FMS(s, kh, *mn);
        return gx_f_q_pair(fh, kl ? GX_F_FMA(sl, kh, GX_F_MUL(s, GX_F_SET1(-GX_F_KL))) : GX_F_MUL(sl, kh));
    }
    #if !defined(__AVX512F__)
    /* 2^(mn + 64) from b: times S (< 4) normal and exact, so a later 2^-64 rounds a subnormal result once */
    static inline __attribute__((always_inline)) gx_fv gx_f_scale64(gx_fv b) {
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_castps_si256(b),
                                                                      _mm256_set1_epi32(127 + 64 - 0x4B400000)), 23));
    }
    #endif

    /* G = exp(-a^2/2) D(a) (the gradient's exp form, table GX_F_D): a = min(|x|, AMAX) (NaN stays), evaluated at
       ac = max(TINY, a) */
    static inline __attribute__((always_inline)) gx_fv gx_f_expD(gx_fv a, gx_fv ac, const int normal,
                                                                 gx_fv dy, gx_fv* Fdy) {
        const float (*tab)[GX_F_N] = GX_F_D;
        /* the index needs no lower clamp (a + 1 = 1 for tiny a) */
    #if defined(__AVX512F__)
        gx_iv idx = _mm512_srli_epi32(_mm512_castps_si512(GX_F_ADD(a, GX_F_SET1(1.0f))), GX_F_SHIFT);
    #else
        gx_iv idx = _mm256_srli_epi32(_mm256_castps_si256(GX_F_ADD(a, GX_F_SET1(1.0f))), GX_F_SHIFT);
    #endif
        gx_fv L = GX_F_TAB(GX_F_L);
        gx_fv u = GX_F_SUB(ac, L);                           /* exact (Sterbenz; L = 0 on the first interval) */
        gx_fv b, mn;
    #if defined(__AVX512F__)
        gx_fv q = gx_f_exp_red(ac, &b, &mn, 0);
    #else
        gx_fv q = gx_f_exp_red(ac, &b, &mn, 1);
    #endif
        /* D(a) = H + v, v = C0 + u*(C1 + ...) */
        gx_fv v = GX_F_TAB(tab[GX_F_DEG + 1]);
        for (int k = GX_F_DEG; k >= 1; k--)
            v = GX_F_FMA(v, u, GX_F_TAB(tab[k]));
        gx_fv H = GX_F_TAB(tab[0]);
        /* E*D = 2^mn (1 + q)(H + v) = 2^mn (H + (v + q*D)): the roundings sit in the small part */
        gx_fv S = GX_F_ADD(H, GX_F_FMA(q, GX_F_ADD(H, v), v));
        /* times 2^mn, exact while normal, a subnormal rounded once (a*Phi(-a) is subnormal for a in ~[13.2,
           14.2]).  Fdy (if asked for) = F*dy with dy applied before the scaling: a subnormal F times a large dy
           would carry the subnormal's absolute rounding error into a normal result */
    #if defined(__AVX512F__)
        (void)normal;       /* scalef costs one operation whatever the scale */
        if (Fdy)            /* S dy may overflow for |dy| > ~5e37 where the result does not: GX_F_GRAD_LOOP */
            *Fdy = _mm512_scalef_ps(GX_F_MUL(S, dy), mn);
        return _mm512_scalef_ps(S, mn);
    #else
        if (normal) {       /* the caller knows a <= GX_F_BIG: mn added to S's exponent field */
            gx_fv F = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(S),
                                                           _mm256_slli_epi32(_mm256_castps_si256(b), 23)));
            if (Fdy)
                *Fdy = GX_F_MUL(F, dy);
            return F;
        }
        gx_fv P = GX_F_MUL(S, gx_f_scale64(b));                  /* normal: exact */
        if (Fdy) {          /* P dy may overflow for |dy| > ~2^61 where the result does not (GX_F_GRAD_LOOP
                               recomputes it in double), so lanes with a <= BIG take the product of the path
                               above: a lane's bits must not depend on its neighbours */
            gx_fv Fn = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(S),
                                                            _mm256_slli_epi32(_mm256_castps_si256(b), 23)));
            *Fdy = _mm256_blendv_ps(GX_F_MUL(GX_F_MUL(P, dy), GX_F_SET1(0x1p-64f)), GX_F_MUL(Fn, dy),
                                    _mm256_cmp_ps(a, GX_F_SET1(GX_F_BIG), _CMP_LE_OQ));
        }
        return GX_F_MUL(P, GX_F_SET1(0x1p-64f));
    #endif
    }

    /* min(|x|, AMAX).  x = NaN: NaN (AVX2), or AMAX (AVX-512, one instruction: vrangeps returns the number);
       the forward's max(-0, x) passes the NaN on, and the gradient loop finds it (gx_f_suspect) and sets NaN */
    static inline __attribute__((always_inline)) gx_fv gx_f_absmin(gx_fv x) {
    #if defined(__AVX512F__)
        return _mm512_range_ps(x, GX_F_SET1(GX_F_AMAX), 10);       /* the smaller magnitude, sign bit clear */
    #else
        return GX_F_MIN(GX_F_SET1(GX_F_AMAX), GX_F_ABS(x));
    #endif
    }

    /* GELU(x) for |x| >= R (x NaN: NaN; the tail lanes) without a table: a*Phi(-a) = exp(-a^2/2) (C - r), with
       C = 1/sqrt(2 pi) rounded and r = C - a m(a)/sqrt(2 pi) (m: Mills' ratio) rational in s = a^2.  r/C <= 0.08,
       so C + (q (C - r) - r) keeps the roundings in the small part (exp as gx_f_expD), and x - F (x >= 0) or -F
       is one rounding: AVX2's in the FMA that also takes the subnormal's scaling.  29 vector operations, no
       permute (the exp form's 40 held 10) */
    static inline __attribute__((always_inline)) gx_fv gx_f_gelu_tail(gx_fv x) {
        const gx_fv c = GX_F_SET1(GX_F_RC);
        gx_fv a = GX_F_MIN(GX_F_SET1(GX_F_AMAX), GX_F_ABS(x)), b, mn;
        gx_fv q = gx_f_exp_red(a, &b, &mn, 1);
        gx_fv s = GX_F_MUL(a, a);                      /* the same product as inside: one instruction */
        gx_fv num = GX_F_FMA(GX_F_FMA(GX_F_SET1(GX_F_RN2), s, GX_F_SET1(GX_F_RN1)), s, GX_F_SET1(GX_F_RN0));
        gx_fv den = GX_F_FMA(GX_F_FMA(GX_F_FMA(GX_F_SET1(GX_F_RD3), s, GX_F_SET1(GX_F_RD2)), s,
                                      GX_F_SET1(GX_F_RD1)), s, GX_F_SET1(1.0f));
        gx_fv r = GX_F_DIV(num, den);
        gx_fv S = GX_F_ADD(c, GX_F_FMS(q, GX_F_SUB(c, r), r));
        gx_fv xp = GX_F_MAX(GX_F_SET1(-0.0f), x);
    #if defined(__AVX512F__)
        return GX_F_SUB(xp, _mm512_scalef_ps(S, mn));
    #else
        (void)mn;
        return GX_F_FMA(GX_F_MUL(S, gx_f_scale64(b)), GX_F_SET1(-0x1p-64f), xp);
    #endif
    }

    /* dy * GELU'(x), GELU' = 1 - G for x >= 0 and G for x < 0, G = Phi(-a) - a*phi(a) = exp(-a^2/2) D(a).
       |x| < TINY needs no fix-up: GELU' rounds to 1/2 there, as at TINY. */
    static inline __attribute__((always_inline)) gx_fv gx_f_gelu_grad(gx_fv x, gx_fv dy) {
        gx_fv a = gx_f_absmin(x);
        gx_fv Gdy, G, ac = GX_F_MAX(GX_F_SET1(GX_F_TINY), a);
    #if defined(__AVX512F__)
        G = gx_f_expD(a, ac, 0, dy, &Gdy);
        gx_fv yp = GX_F_FNMA(G, dy, dy);                          /* dy - G*dy, one rounding */
        return _mm512_mask_mov_ps(yp, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), Gdy);
    #else
        gx_fv big = _mm256_cmp_ps(a, GX_F_SET1(GX_F_BIG), _CMP_NLE_UQ);
        if (__builtin_expect(_mm256_testz_ps(big, big), 1))
            G = gx_f_expD(a, ac, 1, dy, &Gdy);
        else
            G = gx_f_expD(a, ac, 0, dy, &Gdy);
        gx_fv yp = GX_F_FNMA(G, dy, dy);
        return _mm256_blendv_ps(yp, Gdy, x);                      /* by the sign bit: -0.0 gives 1/2 either way */
    #endif
    }

    /* Gradients in double, lane by lane, where the float32 kernels cannot be trusted with a large dy:
       - far in the negative tail the kernels clamp (exact: |x| at AMAX; tanh and sigmoid: z at Z_MAX), which is
         right only while dy GELU'(x) underflows, i.e. for |dy| <= 1; a larger dy can lift the product into
         range (1e30 * GELU'(-15) = -4e-22);
       - an intermediate (the scaled G dy, or q dy) can overflow for |dy| > ~2^61 while the result does not,
         and dy = inf makes inf - inf where the result is inf.
       So a vector with x < -lim or a result that is not finite (rare: a cold call) has those lanes recomputed
       here, unless x or dy is NaN (then the result is NaN: the AVX-512 exact kernel computes NaN x as
       x = AMAX).  kind: 0 exact, 1 tanh, 2 sigmoid. */
    static double gx_f_grad_double(float xf, float dyf, int kind) {
        double x = xf, w, t, s, sig, oms;
        if (kind == 0) {                /* Phi(x) + x phi(x); at |x| = 40 phi is 0 in double too */
            x = x < -40.0 ? -40.0 : (x > 40.0 ? 40.0 : x);
            return (double)dyf * (0.5 * erfc(-x * 0.7071067811865476) + x * exp(-0.5 * x * x) * 0.3989422804014327);
        }
        /* sigma (1 + x w' (1 - sigma)) with t = exp(-|w|): no overflow, no cancellation in sigma */
        double L = kind == 1 ? 30.0 : 1000.0;   /* as float64: beyond, sigma is 1 or 0 in double too */
        x = x < -L ? -L : (x > L ? L : x);
        double dw = kind == 1 ? 1.5957691216057308 * (1.0 + 3.0 * 0.044715 * x * x) : 1.702;
        w = kind == 1 ? 1.5957691216057308 * x * (1.0 + 0.044715 * x * x) : 1.702 * x;
        t = exp(-fabs(w));
        s = 1.0 / (1.0 + t);
        sig = w >= 0 ? s : t * s;
        oms = w >= 0 ? t * s : s;
        return (double)dyf * (sig * (1.0 + x * dw * oms));
    }
    /* y: the kernel's results for x[0..], dy[0..] (copies of the inputs: y may have overwritten them) */
    static void gx_f_grad_fix(const float* x, const float* dy, float* y, unsigned int m, float lim, int kind) {
        for (; m; m &= m - 1u) {
            int j = __builtin_ctz(m);
            if (isnan(x[j]) || isnan(dy[j])) {
                y[j] = x[j] + dy[j];
                continue;
            }
            if ((x[j] < -lim && fabsf(dy[j]) > 1.0f) || !isfinite(y[j]))
                y[j] = (float)gx_f_grad_double(x[j], dy[j], kind);
        }
    }
    /* lanes with x < -lim or a result that is inf or NaN (or x NaN), as bits: y*0 - x is -x or NaN, one
       unordered compare (AVX2: 10% of the loop as two compares) */
    static inline __attribute__((always_inline)) unsigned int gx_f_suspect(gx_fv x, gx_fv y, float lim) {
        gx_fv u = GX_F_FMS(y, GX_F_SET1(0.0f), x);
    #if defined(__AVX512F__)
        return _mm512_cmp_ps_mask(u, GX_F_SET1(lim), _CMP_NLE_UQ);
    #else
        return (unsigned int)_mm256_movemask_ps(_mm256_cmp_ps(u, GX_F_SET1(lim), _CMP_NLE_UQ));
    #endif
    }
    /* the gradient loop of all three forms: grad(x, dy, kind) one vector, in chunks of GX_F_GCHUNK vectors.  A
       vector with suspect lanes has its x and dy saved (before y, which may be either, is stored) and is checked
       in double after its chunk, so the loop holds no call (one there cost the AVX2 gradients 6%).  The check
       itself costs 3-10% (4 operations per vector; a pass over dy to skip it where all |dy| <= 1 cost as much) */
    #define GX_F_GCHUNK 64
    #define GX_F_GRAD_LOOP(grad, kind, lim)                                                                    \
        float sx[GX_F_GCHUNK][GX_F_W], sd[GX_F_GCHUNK][GX_F_W];                                               \
        ptrdiff_t si[GX_F_GCHUNK];                                                                             \
        unsigned int sm[GX_F_GCHUNK];                                                                          \
        ptrdiff_t i = 0;                                                                                       \
        while (i < n) {                                                                                        \
            ptrdiff_t end = n - i > GX_F_GCHUNK * GX_F_W ? i + GX_F_GCHUNK * GX_F_W : n;                       \
            int ns = 0;                                                                                        \
            for (; i + GX_F_W <= end; i += GX_F_W) {                                                           \
                _mm_prefetch((const char*)(x + i) + GX_F_PREFETCH, _MM_HINT_T0);                               \
                _mm_prefetch((const char*)(dy + i) + GX_F_PREFETCH, _MM_HINT_T0);                              \
                gx_fv yv = grad(GX_F_LOADU(x + i), GX_F_LOADU(dy + i), kind);                                 \
                unsigned int m = gx_f_suspect(GX_F_LOADU(x + i), yv, lim);                                    \
                if (__builtin_expect(m != 0, 0)) {                                                             \
                    GX_F_STOREU(sx[ns], GX_F_LOADU(x + i));                                                    \
                    GX_F_STOREU(sd[ns], GX_F_LOADU(dy + i));                                                   \
                    si[ns] = i;                                                                                \
                    sm[ns++] = m;                                                                              \
                }                                                                                              \
                GX_F_STOREU(y + i, yv);                                                                        \
            }                                                                                                  \
            if (i < end) {                          /* the last, partial vector (end == n) */                  \
                GX_F_TAILMASK(k, end - i);                                                                     \
                gx_fv xv = GX_F_MASKLOAD(x + i, k), dv = GX_F_MASKLOAD(dy + i, k);                            \
                gx_fv yv = grad(xv, dv, kind);                                                                 \
                unsigned int m = gx_f_suspect(xv, yv, lim) & ((1u << (end - i)) - 1u);                         \
                if (m != 0) {                                                                                  \
                    GX_F_STOREU(sx[ns], xv);                                                                   \
                    GX_F_STOREU(sd[ns], dv);                                                                   \
                    si[ns] = i;                                                                                \
                    sm[ns++] = m;                                                                              \
                }                                                                                              \
                GX_F_MASKSTORE(y + i, k, yv);                                                                  \
                i = end;                                                                                       \
            }                                                                                                  \
            for (int s_ = 0; s_ < ns; s_++)                                                                    \
                gx_f_grad_fix(sx[s_], sd[s_], y + si[s_], sm[s_], lim, kind);                                  \
        }

    /* the forward loop of all three forms: y[i] = fwd(x[i], arg), i < n; y == x allowed (each vector is loaded
       before it is stored) */
    #define GX_F_FWD_LOOP(fwd, arg)                                                                            \
        ptrdiff_t i = 0;                                                                                       \
        for (; i + GX_F_W <= n; i += GX_F_W) {                                                                 \
            _mm_prefetch((const char*)(x + i) + GX_F_PREFETCH, _MM_HINT_T0);                                   \
            GX_F_STOREU(y + i, fwd(GX_F_LOADU(x + i), arg));                                                   \
        }                                                                                                      \
        if (i < n) {                                                                                           \
            GX_F_TAILMASK(k, n - i);                                                                           \
            GX_F_MASKSTORE(y + i, k, fwd(GX_F_MASKLOAD(x + i, k), arg));                                      \
        }

    /* The central form (see the header): F, G and the tanh form's F from the GX_F_C, GX_F_G and GX_F_TC
       tables, no exp; the lanes beyond through a queue (gx_f_tailq) to the tails.  randn sigma = 3 puts 2.3% of
       the lanes there on AVX-512 (exact forward: x < -6), 23% on AVX2 (|x| > 3.6); x ~ U(-8, 8) 12.5% and 55% */
    #if defined(__AVX512F__)
    typedef __mmask16 gx_fm;                 /* a lane mask as bits */
    #define GX_F_CN 32                       /* intervals per central table */
    #define GX_F_CASTI _mm512_castps_si512
    #define GX_F_STORE _mm512_store_ps
    #define GX_F_SELECT(m, t, f) _mm512_mask_mov_ps(f, m, t)
    #else
    typedef unsigned int gx_fm;
    #define GX_F_CN 8
    #define GX_F_CASTI _mm256_castps_si256
    #define GX_F_STORE _mm256_store_ps
    static inline __attribute__((always_inline)) gx_fv gx_f_select(gx_fm m, gx_fv t, gx_fv f) {
        const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
        __m256i on = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)m), bit), bit);
        return _mm256_blendv_ps(f, t, _mm256_castsi256_ps(on));
    }
    #define GX_F_SELECT gx_f_select
    /* vpermps indices that move the lanes of mask m to the front (AVX2 has no vcompressps); as int32, 8 KB: a
       plain load, where bytes took a vpmovzxbd on the port the permutes use */
    static int gx_f_cperm[256][8] __attribute__((aligned(32)));
    __attribute__((constructor)) static void gx_f_cperm_init(void) {
        for (int m = 0; m < 256; m++)
            for (int j = 0, k = 0; j < 8; j++)
                if (m >> j & 1)
                    gx_f_cperm[m][k++] = j;
    }
    #endif

    static inline __attribute__((always_inline)) gx_fv gx_f_central(gx_fv a, const float (*tab)[GX_F_CN], float K,
                                                                    const int deg) {
        /* round(a*K) lands in the low bits of t (MAGIC): the permute reads the low five (AVX2: three) */
        gx_iv idx = GX_F_CASTI(GX_F_FMA(a, GX_F_SET1(K), GX_F_SET1(GX_F_MAGIC)));
        gx_fv u = GX_F_SUB(a, GX_F_TAB(tab[0]));             /* exact (Sterbenz; L = 0 on the first interval) */
        gx_fv p = GX_F_TAB(tab[deg + 1]);
        for (int k = deg; k >= 1; k--)
            p = GX_F_FMA(p, u, GX_F_TAB(tab[k]));
        return p;
    }

    static inline __attribute__((always_inline)) gx_fv gx_f_fwd_F(gx_fv x, gx_fv a, const int th) {
        gx_fv F = th ? gx_f_central(a, GX_F_TC, GX_F_TCK, GX_F_TCDEG) : gx_f_central(a, GX_F_C, GX_F_CK, GX_F_CDEG);
        return GX_F_SUB(GX_F_MAX(GX_F_SET1(-0.0f), x), F);
    }

    /* a = min(|x|, R) (AVX-512: R for NaN, vrangeps returns the number; AVX2: NaN stays) */
    static inline __attribute__((always_inline)) gx_fv gx_f_fwd_a(gx_fv x, const int th) {
    #if defined(__AVX512F__)
        return _mm512_range_ps(x, GX_F_SET1(th ? GX_F_TCR : GX_F_CR), 10);
    #else
        return GX_F_MIN(GX_F_SET1(th ? GX_F_TCR : GX_F_CR), GX_F_ABS(x));
    #endif
    }
    /* the lanes of a with |x| <= TINY */
    static inline __attribute__((always_inline)) gx_fm gx_f_tiny_mask(gx_fv a) {
    #if defined(__AVX512F__)
        return _mm512_cmp_ps_mask(a, GX_F_SET1(GX_F_TINY), _CMP_LE_OQ);
    #else
        return (gx_fm)_mm256_movemask_ps(_mm256_cmp_ps(a, GX_F_SET1(GX_F_TINY), _CMP_LE_OQ));
    #endif
    }

    /* GELU (th 0: exact, table GX_F_C; 1: the tanh form, GX_F_TC) for x >= -R (AVX2: |x| <= R), NaN and +inf
       (AVX-512: a = R there, max(-0, x) gives the NaN; AVX2: a = NaN).  chk 0: no test for tiny lanes, whose
       results the caller redoes (gx_f_central_chunk); else *seen set when there are some */
    static inline __attribute__((always_inline)) gx_fv gx_f_fwd_c(gx_fv x, const int th, const int chk, int* seen) {
        gx_fv a = gx_f_fwd_a(x, th);
        if (!chk)
            return gx_f_fwd_F(x, a, th);
        gx_fm tiny = gx_f_tiny_mask(a);
        /* one test on the common path; a vector of tiny lanes alone (zeros, subnormals) skips the tables */
        if (__builtin_expect(tiny != 0, 0)) {
            *seen = 1;
            if (tiny == (gx_fm)((1u << GX_F_W) - 1u))
                return gx_f_tiny(x);
            return GX_F_SELECT(tiny, gx_f_tiny(x), gx_f_fwd_F(x, a, th));
        }
        return gx_f_fwd_F(x, a, th);
    }
    /* the tanh form's tail (_gelu_sigmoid.pxi) */
    static inline gx_fv gs_f_tanh_tail(gx_fv x);

    /* dy GELU'(x) for x >= -GR (AVX2: |x| <= GR; x NaN: a suspect lane) */
    static inline __attribute__((always_inline)) gx_fv gx_f_gelu_grad_c(gx_fv x, gx_fv dy) {
    #if defined(__AVX512F__)
        gx_fv G = gx_f_central(_mm512_range_ps(x, GX_F_SET1(GX_F_GR), 10), GX_F_G, GX_F_GK, GX_F_GDEG);
        return _mm512_mask_mul_ps(GX_F_FNMA(G, dy, dy), _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ),
                                  G, dy);
    #else
        gx_fv G = gx_f_central(GX_F_MIN(GX_F_SET1(GX_F_GR), GX_F_ABS(x)), GX_F_G, GX_F_GK, GX_F_GDEG);
        return _mm256_blendv_ps(GX_F_FNMA(G, dy, dy), GX_F_MUL(G, dy), x);   /* by the sign bit: -0.0 the same */
    #endif
    }

    #define GX_F_LIST 64                /* vectors per chunk */
    #define GX_F_DIRECT 16              /* a chunk with at least 1/16 of its lanes queued has the next one push
                                           each vector's tail lanes as it goes (gx_f_list: PUSHED) */
    #define GX_F_SEG ((ptrdiff_t)1 << 30)  /* elements per segment */
    /* a chunk's tail lanes, x (gradient: and dy) and offsets, compressed */
    typedef struct {
        float x[GX_F_LIST * GX_F_W + GX_F_W] __attribute__((aligned(64)));
        float d[GX_F_LIST * GX_F_W + GX_F_W] __attribute__((aligned(64)));
        int i[GX_F_LIST * GX_F_W + GX_F_W] __attribute__((aligned(64)));
    } gx_f_tailq;

    /* appends the lanes m of a vector at offset base (bv: base in every lane; the AVX2 loop keeps it as a
       vector, as a broadcast from a register takes the permutes' port) after the first n (full-width stores);
       returns the new n */
    static inline __attribute__((always_inline)) int gx_f_tailq_pushv(gx_f_tailq* q, int n, gx_fm m, gx_fv x,
                                                                      gx_fv d, gx_iv bv, const int grad) {
    #if defined(__AVX512F__)
        const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        _mm512_storeu_ps(q->x + n, _mm512_maskz_compress_ps(m, x));
        if (grad)
            _mm512_storeu_ps(q->d + n, _mm512_maskz_compress_ps(m, d));
        _mm512_storeu_si512(q->i + n, _mm512_maskz_compress_epi32(m, _mm512_add_epi32(iota, bv)));
    #else
        /* the permute that compresses is also the lanes' offsets */
        __m256i p = _mm256_load_si256((const __m256i*)gx_f_cperm[m]);
        _mm256_storeu_ps(q->x + n, _mm256_permutevar8x32_ps(x, p));
        if (grad)
            _mm256_storeu_ps(q->d + n, _mm256_permutevar8x32_ps(d, p));
        _mm256_storeu_si256((__m256i*)(q->i + n), _mm256_add_epi32(p, bv));
    #endif
        return n + __builtin_popcount(m);
    }

    /* kinds of the central loop: exact forward, exact gradient, tanh form's forward */
    enum { GX_F_EXACT = 0, GX_F_EXACT_GRAD = 1, GX_F_TANH = 2 };

    /* the exp form for the tail lanes m of a vector: the forward, or the gradient with its double fix-ups */
    static inline __attribute__((always_inline)) gx_fv gx_f_tail(gx_fv x, gx_fv dy, gx_fm m, const int kind) {
        if (kind != GX_F_EXACT_GRAD)
            return kind == GX_F_TANH ? gs_f_tanh_tail(x) : gx_f_gelu_tail(x);
        gx_fv r = gx_f_gelu_grad(x, dy);
        unsigned int s = gx_f_suspect(x, r, GX_F_AMAX) & m;
        if (s) {
            float sxl[GX_F_W] __attribute__((aligned(64))), sdl[GX_F_W] __attribute__((aligned(64)));
            float rr[GX_F_W] __attribute__((aligned(64)));
            GX_F_STORE(sxl, x);
            GX_F_STORE(sdl, dy);
            GX_F_STORE(rr, r);
            gx_f_grad_fix(sxl, sdl, rr, s, GX_F_AMAX, 0);
            r = GX_F_LOADU(rr);
        }
        return r;
    }

    /* k <= GX_F_W queued lanes from j on through the exp form, to y */
    static inline __attribute__((always_inline)) void gx_f_tailq_run(const gx_f_tailq* q, int j, int k, float* y,
                                                                     const int kind) {
        const int grad = kind == GX_F_EXACT_GRAD;
        gx_fm m = (gx_fm)((1u << k) - 1u);
    #if defined(__AVX512F__)
        gx_fv xv = _mm512_maskz_loadu_ps(m, q->x + j);
        gx_fv r = gx_f_tail(xv, grad ? _mm512_maskz_loadu_ps(m, q->d + j) : xv, m, kind);
        _mm512_mask_i32scatter_ps(y, m, _mm512_loadu_si512(q->i + j), r, 4);
    #else
        GX_F_TAILMASK(km, k);                   /* lanes past k zero: no floating-point exceptions */
        gx_fv xv = k == GX_F_W ? GX_F_LOADU(q->x + j) : GX_F_MASKLOAD(q->x + j, km);
        float r[GX_F_W] __attribute__((aligned(32)));
        GX_F_STORE(r, gx_f_tail(xv, grad ? GX_F_MASKLOAD(q->d + j, km) : xv, m, kind));
        for (int l = 0; l < k; l++)
            y[q->i[j + l]] = r[l];
    #endif
    }

    /* all nq queued lanes.  Not inlined: in the central loop, its registers went to the exp form and the
       tables to memory (AVX-512 gradient 6-8% slower) */
    static __attribute__((noinline)) void gx_f_tailq_flush(const gx_f_tailq* q, int nq, float* y, const int kind) {
        for (int j = 0; j < nq; j += GX_F_W)
            gx_f_tailq_run(q, j, nq - j < GX_F_W ? nq - j : GX_F_W, y, kind);
    }

    /* the tail lanes of a vector, from x alone: x < -R (AVX2: |x| > R; gradient: also x NaN) */
    static inline __attribute__((always_inline)) gx_fm gx_f_tail_mask(gx_fv x, const int kind) {
        const float R = kind == GX_F_EXACT_GRAD ? GX_F_GR : kind == GX_F_TANH ? GX_F_TCR : GX_F_CR;
        /* the predicates spelled out: clang takes only a constant expression there */
    #if defined(__AVX512F__)
        if (kind == GX_F_EXACT_GRAD)
            return _mm512_cmp_ps_mask(x, GX_F_SET1(-R), _CMP_NGE_UQ);
        return _mm512_cmp_ps_mask(x, GX_F_SET1(-R), _CMP_LT_OQ);
    #else
        if (kind == GX_F_EXACT_GRAD)
            return (gx_fm)_mm256_movemask_ps(_mm256_cmp_ps(GX_F_ABS(x), GX_F_SET1(R), _CMP_NLE_UQ));
        return (gx_fm)_mm256_movemask_ps(_mm256_cmp_ps(GX_F_ABS(x), GX_F_SET1(R), _CMP_GT_OQ));
    #endif
    }

    /* a chunk's summary for the list mode, one operation a vector: acc holds a tail lane (gx_f_tail_mask) if
       any vector had one.  Forwards: the least x (AVX2: the largest |x|); vminps/vmaxps return their second
       operand, acc, for x NaN, not a tail lane there.  Gradient, where NaN is: AVX-512 the tail lanes'
       x themselves, AVX2 the largest |x| as an integer (NaN above inf) */
    static inline __attribute__((always_inline)) gx_fv gx_f_summary(gx_fv acc, gx_fv x, const int kind) {
    #if defined(__AVX512F__)
        return kind == GX_F_EXACT_GRAD ? _mm512_mask_mov_ps(acc, gx_f_tail_mask(x, kind), x) : _mm512_min_ps(x, acc);
    #else
        gx_fv ax = GX_F_ABS(x);
        return kind == GX_F_EXACT_GRAD ? _mm256_castsi256_ps(_mm256_max_epi32(_mm256_castps_si256(acc),
                                                                              _mm256_castps_si256(ax)))
                                       : _mm256_max_ps(ax, acc);
    #endif
    }

    /* the central form of one vector (dy: gradient only), *m its tail lanes (gx_f_tail_mask); the gradient's
       results that are not finite are the chunk's to find (gx_f_grad_bad) */
    static inline __attribute__((always_inline)) gx_fv gx_f_central_v(gx_fv x, gx_fv dy, gx_fm* m,
                                                                      const int kind, const int chk, int* seen) {
        *m = gx_f_tail_mask(x, kind);
        return kind == GX_F_EXACT_GRAD ? gx_f_gelu_grad_c(x, dy) : gx_f_fwd_c(x, kind == GX_F_TANH, chk, seen);
    }

    static inline __attribute__((always_inline)) int gx_f_anynan(gx_fv v) {
    #if defined(__AVX512F__)
        return _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) != 0;
    #else
        return _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0;
    #endif
    }

    /* the gradient's central results y that are not finite (a huge or infinite dy) outside the tail lanes:
       redone through the tail (gx_f_grad_fix's double check) */
    static inline __attribute__((always_inline)) gx_fm gx_f_grad_bad(gx_fv x, gx_fv y) {
    #if defined(__AVX512F__)
        gx_fm mf = (gx_fm)gx_f_suspect(x, y, GX_F_GR);
    #else
        gx_fm mf = (gx_fm)_mm256_movemask_ps(_mm256_cmp_ps(GX_F_FMA(y, GX_F_SET1(0.0f), GX_F_ABS(x)),
                                                           GX_F_SET1(GX_F_GR), _CMP_NLE_UQ));
    #endif
        return mf & (gx_fm)~gx_f_tail_mask(x, GX_F_EXACT_GRAD);
    }

    /* How a chunk of GX_F_LIST vectors (central results stored as they go) finds its tail lanes, chosen by
       what the chunks before queued:
       - none, two chunks running: SUMMED.  Every vector copied and folded into one summary (gx_f_summary, one
         operation); only when that shows a tail lane are the copies searched, with a branch per vector.
         randn sigma = 1: AVX-512 forwards 8-11% faster than LISTED, AVX2 exact 4%.  After one quiet chunk
         alone the AVX2 tanh form at sigma = 1 (0.2% of lanes queued, one a chunk) searched too often: 2-3%
         slower.
       - fewer than 1/GX_F_DIRECT of its lanes: LISTED.  Every vector copied, those with tail lanes listed,
         branch-free (at sigma = 3 a third of the AVX-512 vectors list a lane: a branch on it mispredicts, and
         a SUMMED chunk's search ran at 0.64x), and pushed to the queue after the loop: ~6 operations a vector,
         ~17 per listed one.
       - more: PUSHED.  Each vector's tail lanes pushed as it goes, ~10 operations a vector: wide data (x ~
         U(-8, 8): 12-19% faster than LISTED). */
    typedef struct {
        float x[GX_F_LIST][GX_F_W] __attribute__((aligned(64)));    /* every vector's x and dy (PUSHED forwards:
                                                                        none) */
        float d[GX_F_LIST][GX_F_W] __attribute__((aligned(64)));
        int k[GX_F_LIST];                                            /* LISTED: the vectors with tail lanes */
        gx_fm m[GX_F_LIST];
    } gx_f_list;
    enum { GX_F_LISTED = 0, GX_F_PUSHED = 1, GX_F_SUMMED = 2 };

    /* one chunk [i, end) of whole vectors; returns the number of queued lanes (in q), and in *tiny whether a
       forward chunk had lanes <= TINY */
    static inline __attribute__((always_inline)) int gx_f_central_chunk(const float* x, const float* dy, float* y,
                                                                       ptrdiff_t i, ptrdiff_t end, gx_f_list* L,
                                                                       gx_f_tailq* q, const int kind,
                                                                       const int mode, const int per_vector,
                                                                       int* tiny) {
        const int grad = kind == GX_F_EXACT_GRAD;
        /* Forwards test for tiny lanes per chunk (the least a, one operation a vector, where the test per
           vector took two and a branch: AVX-512 forwards 7-11% faster at sigma = 1, 7% at 3) and redo them
           from the copies; PUSHED chunks keep none, and the chunks after one with tiny lanes test per vector,
           so that a vector of them alone skips the tables (gx_f_fwd_c: all-subnormal data took ~100-cycle
           microcode assists in them, 40x slower) */
        const int chk = grad || per_vector || mode == GX_F_PUSHED;
        const ptrdiff_t i0 = i;
        int nv = 0, ns = 0, nq = 0;
        gx_fv acc = GX_F_SET1(0.0f), accy = GX_F_SET1(0.0f), acca = GX_F_SET1(1.0f);
    #if !defined(__AVX512F__)
        gx_iv bv = GX_F_SET1I((int)i);
    #endif
        for (; i + GX_F_W <= end; i += GX_F_W, nv++) {
            gx_fm m;
            _mm_prefetch((const char*)(x + i) + GX_F_PREFETCH, _MM_HINT_T0);
            if (grad)
                _mm_prefetch((const char*)(dy + i) + GX_F_PREFETCH, _MM_HINT_T0);
            /* y too, for writing: without it 64M inputs ran at 0.65-0.95x the memory floor (1.25 Gelem/s at
               sigma = 3, Xeon), with it 1.1-1.25x; the exp kernels, slower, did not need it */
            _mm_prefetch((const char*)(y + i) + GX_F_PREFETCH, _MM_HINT_ET0);
            gx_fv xv = GX_F_LOADU(x + i), dv = grad ? GX_F_LOADU(dy + i) : xv;
            gx_fv yv = gx_f_central_v(xv, dv, &m, kind, chk, tiny);
            if (!chk)   /* vminps returns acca for a NaN */
                acca = GX_F_MIN(gx_f_fwd_a(xv, kind == GX_F_TANH), acca);
            if (grad || mode != GX_F_PUSHED) {
                GX_F_STORE(L->x[nv], xv);
                if (grad)
                    GX_F_STORE(L->d[nv], dv);
            }
            if (grad)   /* NaN from the first result not finite on (y*0 + acc): one operation a vector */
                accy = GX_F_FMA(yv, GX_F_SET1(0.0f), accy);
            if (mode == GX_F_PUSHED) {
    #if defined(__AVX512F__)
                /* broadcast here: bv kept in a register cost AVX-512 3% at x ~ U(-8, 8) (32 registers, the
                   tables' 16) */
                nq = gx_f_tailq_pushv(q, nq, m, xv, dv, GX_F_SET1I((int)i), grad);
    #else
                nq = gx_f_tailq_pushv(q, nq, m, xv, dv, bv, grad);
                bv = GX_F_ADDI(bv, GX_F_SET1I(GX_F_W));
    #endif
            } else if (mode == GX_F_LISTED) {
                L->k[ns] = nv;
                L->m[ns] = m;
                ns += m != 0;
            } else {
                acc = gx_f_summary(acc, xv, kind);
            }
            GX_F_STOREU(y + i, yv);
        }
        /* the gradient's results that are not finite, checked per chunk: per vector, the check cost the AVX2
           gradient 20-33% (sigma = 1) */
        if (grad && __builtin_expect(gx_f_anynan(accy), 0)) {
            for (int k = 0; k < nv; k++) {
                gx_fv xv = GX_F_LOADU(L->x[k]), yv = GX_F_LOADU(y + i0 + k * GX_F_W);
                gx_fm bad = gx_f_grad_bad(xv, yv);
                if (bad)
                    GX_F_STOREU(y + i0 + k * GX_F_W, GX_F_SELECT(bad, gx_f_tail(xv, GX_F_LOADU(L->d[k]), bad, kind), yv));
            }
        }
        if (!chk && __builtin_expect(gx_f_tiny_mask(acca) != 0, 0)) {
            *tiny = 1;
            for (int k = 0; k < nv; k++) {
                gx_fv xv = GX_F_LOADU(L->x[k]);
                gx_fm t = gx_f_tiny_mask(gx_f_fwd_a(xv, kind == GX_F_TANH));
                if (t)
                    GX_F_STOREU(y + i0 + k * GX_F_W, GX_F_SELECT(t, gx_f_tiny(xv), GX_F_LOADU(y + i0 + k * GX_F_W)));
            }
        }
        for (int j = 0; j < ns; j++) {
            int k = L->k[j];
            nq = gx_f_tailq_pushv(q, nq, L->m[j], GX_F_LOADU(L->x[k]), GX_F_LOADU(grad ? L->d[k] : L->x[k]),
                                  GX_F_SET1I((int)(i0 + k * GX_F_W)), grad);
        }
        if (mode == GX_F_SUMMED && __builtin_expect(gx_f_tail_mask(acc, kind) != 0, 0)) {
            for (int k = 0; k < nv; k++) {
                gx_fv xv = GX_F_LOADU(L->x[k]);
                gx_fm m = gx_f_tail_mask(xv, kind);
                if (m)
                    nq = gx_f_tailq_pushv(q, nq, m, xv, GX_F_LOADU(grad ? L->d[k] : L->x[k]),
                                          GX_F_SET1I((int)(i0 + k * GX_F_W)), grad);
            }
        }
        return nq;
    }

    /* forward (dy NULL) or gradient over n <= GX_F_SEG elements; y may be x or dy (a vector is loaded, and
       listed, before its result is stored; a queued result lands below every address read later).  The
       queued lanes are computed a vector at a time after each chunk: no branch on how full a queue is (AVX2
       with one: sigma = 3 at 0.8 Gelem/s) */
    static inline __attribute__((always_inline)) void gx_f_central_seg(const float* x, const float* dy, float* y,
                                                                       ptrdiff_t n, const int kind) {
        const int grad = kind == GX_F_EXACT_GRAD;
        gx_f_list L;
        gx_f_tailq q;
        ptrdiff_t i = 0;
        int mode = GX_F_SUMMED, quiet = 2, tiny = 0;
        while (n - i >= GX_F_W) {
            ptrdiff_t end = n - i > GX_F_LIST * GX_F_W ? i + GX_F_LIST * GX_F_W : n;
            int nq, seen = tiny;
            tiny = 0;
            if (mode == GX_F_SUMMED)
                nq = gx_f_central_chunk(x, dy, y, i, end, &L, &q, kind, GX_F_SUMMED, 0, &tiny);
            else if (mode == GX_F_PUSHED)
                nq = gx_f_central_chunk(x, dy, y, i, end, &L, &q, kind, GX_F_PUSHED, 1, &tiny);
            else if (seen)
                nq = gx_f_central_chunk(x, dy, y, i, end, &L, &q, kind, GX_F_LISTED, 1, &tiny);
            else
                nq = gx_f_central_chunk(x, dy, y, i, end, &L, &q, kind, GX_F_LISTED, 0, &tiny);
            if (nq)
                gx_f_tailq_flush(&q, nq, y, kind);
            quiet = nq == 0 && !tiny ? quiet + 1 : 0;
            mode = quiet >= 2 ? GX_F_SUMMED : nq * GX_F_DIRECT >= (int)(end - i) ? GX_F_PUSHED : GX_F_LISTED;
            i += (end - i) & -(ptrdiff_t)GX_F_W;
        }
        if (i < n) {        /* the last, partial vector: its tail lanes in place, by the same functions */
            gx_fm m;
            GX_F_TAILMASK(k, n - i);
            gx_fv xv = GX_F_MASKLOAD(x + i, k), dv = grad ? GX_F_MASKLOAD(dy + i, k) : xv;
            gx_fv yv = gx_f_central_v(xv, dv, &m, kind, 1, &tiny);
            if (grad)
                m |= gx_f_grad_bad(xv, yv);
            if (m)
                yv = GX_F_SELECT(m, gx_f_tail(xv, dv, m, kind), yv);
            GX_F_MASKSTORE(y + i, k, yv);
        }
    }
    /* n in segments: queued offsets are int32 */
    #define GX_F_CENTRAL_BLOCK(kind, x, dy, y, n)                                                              \
        for (ptrdiff_t o = 0; o < n; o += GX_F_SEG)                                                            \
            gx_f_central_seg(x + o, dy ? dy + o : NULL, y + o, n - o < GX_F_SEG ? n - o : GX_F_SEG, kind);
    static void gx_f_gelu_block(const float* x, float* y, ptrdiff_t n) {
        const float* dy = NULL;
        GX_F_CENTRAL_BLOCK(GX_F_EXACT, x, dy, y, n)
    }
    static void gx_f_gelu_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {
        GX_F_CENTRAL_BLOCK(GX_F_EXACT_GRAD, x, dy, y, n)
    }
    #else
    #define GX_F32_SIMD 0
    static void gx_f_gelu_block(const float* x, float* y, ptrdiff_t n) { (void)x; (void)y; (void)n; }
    static void gx_f_gelu_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {
        (void)x; (void)dy; (void)y; (void)n; }
    #endif
    """
    const bint GX_F32_SIMD
    void gx_f_gelu_block(const float* x, float* y, Py_ssize_t n) noexcept nogil
    void gx_f_gelu_grad_block(const float* x, const float* dy, float* y, Py_ssize_t n) noexcept nogil

cdef enum:
    # float32 in the baseline build (no FMA; the AVX2 and AVX-512 builds run the float32 kernels above): a
    # chunk with at most this many inputs beyond |x| = 3 runs the central loop and defers those lanes
    # (_GxDefer); more go to the vector full path.  randn data: 8% of chunks hold such inputs, nearly always
    # one or two; at sigma = 3, ~10 of 32.  Measured when the AVX-512 build used this path (Xeon, 256K,
    # 1 thread, forward/gradient Gelem/s at sigma = 3): 8 -> 0.80/0.66, 16 -> 0.87/0.67; sigma = 1
    # unchanged.  Flushing through the tail piece alone reached 0.96/0.73 but made 3,072 elements in place
    # 1.2x slower (gcc's code for the tile loop changed), so the flush keeps the full path.
    _GX_PATCH_MAX = 16

cdef struct _GxDefer:
    # float32 inputs beyond |x| = 3 met in otherwise central chunks, held until 32 have gathered and then
    # computed as one vector chunk of the full path: the same code on the same values, so the same bits,
    # at 1/32 of a chunk's cost each instead of a scalar evaluation (~80 cycles) or a whole vector chunk
    int k
    float x[_GX_CHUNK]
    float d[_GX_CHUNK]
    float* y[_GX_CHUNK]

cdef inline void _gx_defer_init(_GxDefer* p) noexcept nogil:
    cdef int j
    p.k = 0
    for j in range(_GX_CHUNK):
        p.x[j] = 4      # a tail input: the unused lanes of a flush compute nothing special
        p.d[j] = 0

cdef inline bint _gx_defer(_GxDefer* p, float x, float d, float* y) noexcept nogil:
    """Queue one lane; True when the queue is full and must be flushed."""
    p.x[p.k] = x
    p.d[p.k] = d
    p.y[p.k] = y
    p.k += 1
    return p.k == _GX_CHUNK

cdef enum:
    _GX_FLUSH_SCALAR = 2    # a final flush of this few lanes runs them one by one (~80 cycles each) rather
                            # than as a vector chunk (~200): buffered pieces (strided, 16-bit) flush every
                            # 2,048 elements

cdef inline void _gx_fwd_flush(_GxDefer* p) noexcept nogil:
    cdef float r[_GX_CHUNK]
    cdef int j
    if p.k <= _GX_FLUSH_SCALAR:
        for j in range(p.k):
            p.y[j][0] = <float>_gx_fwd_full32(p.x[j])
        p.k = 0
        return
    for j in range(_GX_CHUNK):
        r[j] = <float>_gx_fwd_full32(p.x[j])
    for j in range(p.k):
        p.y[j][0] = r[j]
    p.k = 0

cdef inline void _gx_grad_flush(_GxDefer* p) noexcept nogil:
    cdef double g[_GX_CHUNK]
    cdef float r[_GX_CHUNK]
    cdef int j
    if p.k <= _GX_FLUSH_SCALAR:
        for j in range(p.k):
            p.y[j][0] = <float>(<double>p.d[j] * _gx_grad_full32(p.x[j]))
        p.k = 0
        return
    for j in range(_GX_CHUNK):
        g[j] = _gx_grad_full32(p.x[j])
    for j in range(_GX_CHUNK):
        r[j] = <float>(<double>p.d[j] * g[j])
    for j in range(p.k):
        p.y[j][0] = r[j]
    p.k = 0

# ---- float64 chunks.  A chunk runs the central loop (no exp) for all 32 lanes; its inputs beyond the
# central piece are then queued by piece (_GxDefer64: middle up to |x| = 4, tail beyond) and computed 32
# at a time by that piece's loop alone, which overwrites their central results.  Every loop is
# branch-free and vectorized; a queued lane costs ~8 scalar operations, far less than evaluating every
# piece for every lane and selecting (randn sigma=3 holds all pieces in every chunk).  Only tail batches
# pay for the division and the degree-23 polynomial, and only those with some |x| > 37 for the clamped,
# scaled exp.  The order of the stores is that of _GxDefer (float32): a queued store lands below every
# address a later chunk reads.
cdef struct _GxDefer64:
    int km, kt                                    # lanes queued: middle, tail
    double xm[_GX_CHUNK]
    double dm[_GX_CHUNK]
    double* ym[_GX_CHUNK]
    double xt[_GX_CHUNK]
    double dt[_GX_CHUNK]
    double* yt[_GX_CHUNK]

cdef inline void _gx_defer64_init(_GxDefer64* q) noexcept nogil:
    cdef int j
    q.km = 0
    q.kt = 0
    for j in range(_GX_CHUNK):                    # unused lanes of a batch hold inputs of its piece
        q.xm[j] = 2.0
        q.xt[j] = 5.0
        q.dm[j] = 0
        q.dt[j] = 0

cdef inline void _gx_fwd64_flush_mid(_GxDefer64* q) noexcept nogil:
    cdef double r[_GX_CHUNK]
    cdef int j
    for j in range(_GX_CHUNK):
        r[j] = _gx_fwd64_far_normal(q.xm[j], _gx_T64m(fabs(q.xm[j]) - 2.5), _gx_exp_half_sq_normal(q.xm[j]))
    for j in range(q.km):
        q.ym[j][0] = r[j]
    q.km = 0

cdef inline void _gx_fwd64_flush_tail(_GxDefer64* q) noexcept nogil:
    cdef double r[_GX_CHUNK]
    cdef int j
    if _gx_far_mask64(q.xt, 37.0) == 0:           # nearly always: the unscaled exp suffices
        for j in range(_GX_CHUNK):
            r[j] = _gx_fwd64_far_normal(q.xt[j], _gx_T64t_of(q.xt[j]), _gx_exp_half_sq_normal(q.xt[j]))
    else:
        for j in range(_GX_CHUNK):
            r[j] = _gx_fwd64_far(q.xt[j], _gx_T64t_of(q.xt[j]), _gx_exp_half_sq(q.xt[j]))
    for j in range(q.kt):
        q.yt[j][0] = r[j]
    q.kt = 0

cdef inline void _gx_grad64_flush_mid(_GxDefer64* q) noexcept nogil:
    cdef double g[_GX_CHUNK]
    cdef int j
    for j in range(_GX_CHUNK):
        g[j] = _gx_grad64_far_normal(q.xm[j], _gx_D64m(fabs(q.xm[j]) - 2.5), _gx_exp_half_sq_normal(q.xm[j]))
    for j in range(q.km):
        q.ym[j][0] = q.dm[j] * g[j]
    q.km = 0

cdef inline void _gx_grad64_flush_tail(_GxDefer64* q) noexcept nogil:
    cdef double g[_GX_CHUNK]
    cdef int j
    if _gx_far_mask64(q.xt, 37.0) == 0:
        for j in range(_GX_CHUNK):
            g[j] = _gx_grad64_far_normal(q.xt[j], _gx_D64t_of(q.xt[j]), _gx_exp_half_sq_normal(q.xt[j]))
    else:
        for j in range(_GX_CHUNK):
            g[j] = _gx_grad64_far(q.xt[j], _gx_D64t_of(q.xt[j]), _gx_exp_half_sq(q.xt[j]))
    for j in range(q.kt):
        q.yt[j][0] = q.dt[j] * g[j]
    q.kt = 0

cdef inline void _gx_defer64(_GxDefer64* q, const double* x, const double* d, double* y, unsigned int mid,
                             unsigned int tail, bint grad) noexcept nogil:
    """Queue lanes (bit masks) of the middle and the tail piece, flushing full batches.  The counts live
    in locals: through q, every store would reload them."""
    cdef int j, k
    k = q.km
    while mid:
        j = fg_ctz32(mid)
        q.xm[k] = x[j]
        if grad:
            q.dm[k] = d[j]
        q.ym[k] = y + j
        k += 1
        if k == _GX_CHUNK:
            q.km = k
            if grad:
                _gx_grad64_flush_mid(q)
            else:
                _gx_fwd64_flush_mid(q)
            k = 0
        mid &= mid - 1
    q.km = k
    k = q.kt
    while tail:
        j = fg_ctz32(tail)
        q.xt[k] = x[j]
        if grad:
            q.dt[k] = d[j]
        q.yt[k] = y + j
        k += 1
        if k == _GX_CHUNK:
            q.kt = k
            if grad:
                _gx_grad64_flush_tail(q)
            else:
                _gx_fwd64_flush_tail(q)
            k = 0
        tail &= tail - 1
    q.kt = k

cdef enum:
    # a chunk without tail inputs and more than this many middle ones evaluates central and middle for
    # every lane and selects (Xeon AVX-512, 1 thread: 2.0 ns/input) rather than queueing them (~2.3 ns
    # per queued lane on top of the central loop's 0.6 ns/input)
    _GX_QUEUE64_MAX = 20

cdef inline void _gx_fwd64_chunk(const double* x, double* y, _GxDefer64* q) noexcept nogil:
    cdef int j
    cdef unsigned int tail = _gx_far_mask64(x, 4.0)
    cdef unsigned int far = _gx_far_mask64(x, GX_CENTRAL)
    if tail == 0 and fg_popcount32(far) > _GX_QUEUE64_MAX:
        for j in range(_GX_CHUNK):
            y[j] = sel(fabs(x[j]) <= GX_CENTRAL, _gx_fwd64_central(x[j]),
                       _gx_fwd64_far_normal(x[j], _gx_T64m(fabs(x[j]) - 2.5), _gx_exp_half_sq_normal(x[j])))
        return
    for j in range(_GX_CHUNK):
        y[j] = _gx_fwd64_central(x[j])
    _gx_defer64(q, x, NULL, y, far & ~tail, tail, False)

cdef inline void _gx_grad64_chunk(const double* x, const double* d, double* y, _GxDefer64* q) noexcept nogil:
    cdef double gb[_GX_CHUNK]
    cdef int j
    cdef unsigned int tail = _gx_far_mask64(x, 4.0)
    cdef unsigned int far = _gx_far_mask64(x, GX_CENTRAL_GRAD)
    if tail == 0 and fg_popcount32(far) > _GX_QUEUE64_MAX:
        for j in range(_GX_CHUNK):
            gb[j] = sel(fabs(x[j]) <= GX_CENTRAL_GRAD, _gx_grad64_central(x[j]),
                        _gx_grad64_far_normal(x[j], _gx_D64m(fabs(x[j]) - 2.5), _gx_exp_half_sq_normal(x[j])))
        for j in range(_GX_CHUNK):
            y[j] = d[j] * gb[j]
        return
    for j in range(_GX_CHUNK):
        y[j] = d[j] * _gx_grad64_central(x[j])
    _gx_defer64(q, x, d, y, far & ~tail, tail, True)

cdef inline void _gx_fwd64_finish(_GxDefer64* q) noexcept nogil:
    if q.km:
        _gx_fwd64_flush_mid(q)
    if q.kt:
        _gx_fwd64_flush_tail(q)

cdef inline void _gx_grad64_finish(_GxDefer64* q) noexcept nogil:
    if q.km:
        _gx_grad64_flush_mid(q)
    if q.kt:
        _gx_grad64_flush_tail(q)

cdef inline void _gx_fwd_chunk(const real* xb, real* y, _GxDefer* p, _GxDefer64* q) noexcept nogil:
    cdef int j
    cdef unsigned int far
    if real is float:
        far = _gx_far_mask(xb)
        if fg_popcount32(far) <= _GX_PATCH_MAX:
            for j in range(_GX_CHUNK):
                y[j] = <float>_gx_fwd_central32(xb[j])
            while far:
                j = fg_ctz32(far)
                if _gx_defer(p, xb[j], 0, y + j):
                    _gx_fwd_flush(p)
                far &= far - 1
        else:
            for j in range(_GX_CHUNK):
                y[j] = <float>_gx_fwd_full32(xb[j])
    else:
        _gx_fwd64_chunk(xb, y, q)

cdef inline void _gx_grad_chunk(const real* xb, const real* db, real* y, _GxDefer* p,
                                _GxDefer64* q) noexcept nogil:
    # the full path goes through a local buffer and is multiplied by dy in a second loop: a select that
    # feeds a multiply can be threaded into a branch (see the style note above)
    cdef double gb[_GX_CHUNK]
    cdef int j
    cdef unsigned int far
    if real is float:
        far = _gx_far_mask(xb)
        if fg_popcount32(far) <= _GX_PATCH_MAX:   # no selects here: one fused loop
            for j in range(_GX_CHUNK):
                y[j] = <float>(<double>db[j] * _gx_grad_central32(xb[j]))
            while far:
                j = fg_ctz32(far)
                if _gx_defer(p, xb[j], db[j], y + j):
                    _gx_grad_flush(p)
                far &= far - 1
        else:
            for j in range(_GX_CHUNK):
                gb[j] = _gx_grad_full32(xb[j])
            for j in range(_GX_CHUNK):
                y[j] = <float>(<double>db[j] * gb[j])
    else:
        _gx_grad64_chunk(xb, db, y, q)

cdef inline bint _gx_apart(const real* a, real* y, Py_ssize_t n) noexcept nogil:
    # no shared memory: chunks are computed straight from the input.  Otherwise (in place, or a shifted
    # overlap NumPy let through) the input is copied a tile at a time first, which spares gcc a runtime alias
    # check that sends exact aliasing to its scalar fallback.  Deferred lanes keep their own input copy, and
    # a deferred store lands below every address a later chunk reads (NumPy only lets through
    # output-behind overlaps).
    return a + n <= <const real*>y or <const real*>y + n <= a

cdef inline Py_ssize_t _gx_tile_len(Py_ssize_t left) noexcept nogil:
    # whole chunks, at most a tile
    return _GX_TILE if left >= _GX_TILE else left - left % _GX_CHUNK

cdef inline void gelu_none_block(const real* x, real* y, Py_ssize_t n) noexcept nogil:
    cdef real xb[_GX_CHUNK]
    cdef real yb[_GX_CHUNK]
    cdef _GxDefer p
    cdef _GxDefer64 q
    cdef Py_ssize_t i = 0, j, m
    cdef real tile[_GX_TILE]
    cdef Py_ssize_t t
    if real is float:
        if GX_F32_SIMD:
            gx_f_gelu_block(x, y, n)
            return
        _gx_defer_init(&p)
    else:
        _gx_defer64_init(&q)
    if _gx_apart(x, y, n):
        while i + _GX_CHUNK <= n:
            _gx_fwd_chunk(x + i, y + i, &p, &q)
            i += _GX_CHUNK
    while i + _GX_CHUNK <= n:                     # otherwise whole chunks through a local copy, a tile at a time
        m = _gx_tile_len(n - i)
        for j in range(m):
            tile[j] = x[i + j]
        t = 0
        while t < m:
            _gx_fwd_chunk(tile + t, y + i + t, &p, &q)
            t += _GX_CHUNK
        i += m
    m = n - i
    if m:                                         # ragged end: padded chunk, copied back once complete
        for j in range(_GX_CHUNK):
            xb[j] = x[i + j] if j < m else 0
        _gx_fwd_chunk(xb, yb, &p, &q)
    if real is float:
        if p.k:
            _gx_fwd_flush(&p)
    else:
        _gx_fwd64_finish(&q)
    for j in range(m):
        y[i + j] = yb[j]

cdef inline void gelu_none_grad_block(const real* x, const real* dy, real* y, Py_ssize_t n) noexcept nogil:
    cdef real xb[_GX_CHUNK]
    cdef real db[_GX_CHUNK]
    cdef real yb[_GX_CHUNK]
    cdef _GxDefer p
    cdef _GxDefer64 q
    cdef Py_ssize_t i = 0, j, m
    cdef real tile[_GX_TILE]
    cdef real dtile[_GX_TILE]
    cdef Py_ssize_t t
    if real is float:
        if GX_F32_SIMD:
            gx_f_gelu_grad_block(x, dy, y, n)
            return
        _gx_defer_init(&p)
    else:
        _gx_defer64_init(&q)
    if _gx_apart(x, y, n) and _gx_apart(dy, y, n):
        while i + _GX_CHUNK <= n:
            _gx_grad_chunk(x + i, dy + i, y + i, &p, &q)
            i += _GX_CHUNK
    while i + _GX_CHUNK <= n:
        m = _gx_tile_len(n - i)
        for j in range(m):
            tile[j] = x[i + j]
            dtile[j] = dy[i + j]
        t = 0
        while t < m:
            _gx_grad_chunk(tile + t, dtile + t, y + i + t, &p, &q)
            t += _GX_CHUNK
        i += m
    m = n - i
    if m:
        for j in range(_GX_CHUNK):
            xb[j] = x[i + j] if j < m else 0
            db[j] = dy[i + j] if j < m else 0
        _gx_grad_chunk(xb, db, yb, &p, &q)
    if real is float:
        if p.k:
            _gx_grad_flush(&p)
    else:
        _gx_grad64_finish(&q)
    for j in range(m):
        y[i + j] = yb[j]
