# Exact GELU, x*Phi(x) with Phi the standard normal cdf, and its gradient Phi(x) + x*phi(x).
#
# Accuracy design (the contract: docs/accuracy.md; tools/sweep_f32.py and tools/check_f64.py
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
#   as deep as Horner's (the single chain left the FMA units waiting on latency); the float64 ones take their
#   first three terms by Horner around that split of the rest (tools/fit_exact.py, LEAD64).
# * In place (y == x or y == dy) goes through a local copy, 256 inputs at a time, so gcc never needs a
#   runtime alias check (which sends exactly-aliased calls to its scalar fallback).
# Coefficients: tools/fit_exact.py (weighted minimax against mpmath; rounding to double is part of the fit).
#
# float32 kernels (AVX-512: 16 lanes; AVX2: 8), in float32 arithmetic.
# The central form: the exact forward and gradient, and the tanh form's forward (_gelu_sigmoid.pxi).
# With a = min(|x|, R):
#   forward   y = max(-0.0, x) - F,  F = a*Phi(-a)  (AVX-512 R = 5.75; tanh form: F = a*sigma(-w(a)), R = 5.25)
#   gradient  y = dy - G*dy (x >= 0) or G*dy (x < 0),  G = Phi(-a) - a*phi(a)  (AVX-512 R = 7.5)
#   F and G straight from a table, no exp: 32 intervals i = round(a*(K2*a + K)) (two FMAs leave i in the
#   low bits), u = a - L_i exact, C0 + u*(C1 + ...) with the coefficients picked per lane by vpermt2ps.
#   The intervals narrow as a grows, as F's relative change per unit of a does (~a): even intervals (K2 = 0)
#   needed degree 6 for R = 6 (forward 1.317 ulp); these take degree 5 to the same error budget (forward
#   R = 5.75, 1.498 ulp; tanh form 5.25), one permute and one FMA fewer for one FMA more (Zen 4 kernel A/B:
#   +5-6% at randn sigma = 1, +3-5% at 3), and the gradient degree 6 to R = 7.5 (1/4 as many tail lanes at
#   sigma = 3: +3-4% there, +17% at U(-8, 8), -3-7% at sigma = 1).  AVX2: 8 slots (vpermps).  The forward:
#   7 even intervals to R = 3.4 and the last for x > R, clamped at RP = 5.5 (x - F rounds to x beyond): there
#   y = x - F needs F only to a fraction of ulp(x), absolutely, which one degree-7 piece gives (fit error 0.06
#   ulp), so only x < -R takes the tail (R = 3.5: 2.05 ulp at the steep end).  The gradient (R = 4.0, degree
#   7) and the tanh form (3.1, degree 6) keep 8 intervals and queue |x| > R: their last slot needed a degree
#   more (gradient 8 to RP = 6.0, tanh form 7 to 5.25), and with it one permute more per vector, which cost
#   9-11% and 12-15% at randn sigma = 1 on Zen 3 (for 5-10% and 12% at sigma = 3, 25% and 30% at U(-8, 8)).  Uneven intervals gain little
#   there (8 are too few: the first ones may not widen) and cost one FMA.  Each L_i is a float at which F (G)
#   is a float to ~1e-4 ulp, so C0 is exact and the only roundings are Horner's; but AVX2's forward, whose
#   L_i = i*H (u = a - i*H by an FMA from the index: one permute fewer, +2-5% on Zen 3), C0 = F(L_i) rounded,
#   the fit absorbing that rounding everywhere but at u = 0.  R ends the tables where F's Gaussian decay
#   (e^-a per unit of a) makes u*(C1 + ...) too large a share of F for float Horner; on AVX-512 the same R
#   clamps x > R (F(R) is below half an ulp of R; for the gradient, a*phi(a) below half an ulp of 1).
#   Lanes with x < -R and -inf (AVX-512 gradient: also NaN x) are compressed into a queue, per
#   chunk of 64 vectors, that the tail below computes a vector at a time, the results scattered to place
#   (gradient results that are not finite, found per chunk, are redone from the chunk's copies).  How a
#   chunk finds those lanes follows the chunks before it (gx_f_list): after quiet ones, one summary of the
#   chunk (one operation a vector) and a search only if it shows a lane; sparse, a branch-free list of the
#   vectors with such lanes (at sigma = 3 a third of the AVX-512 vectors list one: a branch would
#   mispredict), compressed after the loop; dense (1/16 of the lanes), every vector compressed as it goes.
#   A lane's result depends on its x (and dy) alone, whatever path it takes.
#   Cost per vector: forward 18 vector operations, gradient 21 (AVX-512).  On Zen 4 zmm FMAs and permutes
#   (vpermt2ps, vpermps) compete for the same pipes: one of them a cycle, alone or mixed 1:1 (microbenchmark;
#   add-type operations go beside them): the forward's 7 FMAs and 7 permutes take 14 of the 16.5 cycles per
#   vector it runs at sigma = 1, so a degree or a permute less is worth ~7% there.  A chunk computing its tail
#   lanes in place instead (central and tail for every vector that has one) was slower at every spread
#   (AVX2 U(-8, 8): forward 1.16 against 1.21-1.29 Gelem/s, gradient 0.76 against 0.80-0.85).
# The tails, no table:
#   forward   F = exp(-a^2/2) (C - r(a^2)), C = 1/sqrt(2 pi) rounded, r = C - a m(a)/sqrt(2 pi) (m: Mills'
#     ratio) rational of degree (2, 3): r/C <= 0.08, so the roundings sit in the small part; 29 vector
#     operations against the exp form's 40 (of them 10 permutes).  AVX2: 8-17% faster at randn sigma = 3
#     and U(-8, 8) than through the exp form; its maximum 1.252 ulp (was 1.448; the central form's is now
#     larger).  The tanh form's: F = a T/(1 + T), T = exp(-w) < 2^-10, 1/(1 + T) = 1 - T (1 - T) to 2^-30,
#     no division (_gelu_sigmoid.pxi).
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
# Error over all 2^32 inputs (tools/sweep_f32.py): forward 1.498 ulp (AVX-512, at x = -0.2147808 in the
# central form) / 1.595 (AVX2, at -0.2915032, the central form's), gradient 1.524 / 1.591 (AVX2 at -3.9997187,
# central; both were 1.252 and 1.485 with Horner's rule throughout, see gx_f_central).  The AVX2 loops are
# bound by their floating-point operations (Xeon: a table-free forward for every lane, 34 of them per
# vector, ran 14 cycles per vector, the same with its division replaced by a product; permutes issue on
# another port): the central forward has ~14, the tail ~28; and by the Horner chain's latency (Zen 4: the
# central forward's ~40 instructions per vector took 12 cycles).
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
    # c0..c2 by Horner around the rest as E(s^2) + s*O(s^2)
    cdef double s2 = s * s
    return -0.06649038006690544 + s * (0.009973557010035768 + s * (-0.0011873282154798916 + s * (0.00011543468761264932 + s2 * (6.659693184746055e-07 + s2 * (2.2734634313855593e-09 + s2 * (5.081715267595744e-12 + s2 * (5.571472745036923e-15)))) + s * (-9.444656246184902e-06 + s2 * (-4.1226617865057884e-08 + s2 * (-1.1295717492665952e-10 + s2 * (-2.0077906994018968e-13)))))))

cdef inline double _gx_G64(double s) noexcept nogil:
    # float64 central |x| <= 1: GELU'(x) = 1/2 + 2C*x + x*s*G(s)
    # degree 10, max weighted error 2.30e-17
    # c0..c2 by Horner around the rest as E(s^2) + s*O(s^2)
    cdef double s2 = s * s
    return -0.26596152026762176 + s * (0.05984134206021428 + s * (-0.00949862572383359 + s * (0.0011543468760764465 + s2 * (9.323569488238017e-06 + s2 * (4.0918813441830015e-08 + s2 * (1.0943219762537664e-10))) + s * (-0.00011333587467924009 + s2 * (-6.596236212813472e-07 + s2 * (-2.2555142454854045e-09 + s2 * (-3.9335304618388896e-12)))))))

cdef inline double _gx_T64m(double d) noexcept nogil:
    # float64 a in [1.25, 4], d = a - 2.5 (exact): a*Phi(-a) = exp(-a^2/2)*T(d)
    # degree 21, max weighted error 8.82e-17
    # c0..c2 by Horner around the rest as E(d^2) + d*O(d^2)
    cdef double d2 = d * d
    return 0.3533283284514383 + d * (0.027296451505589295 + d * (-0.011493387568007782 + d * (0.004070402779455042 + d2 * (0.00037403696877277257 + d2 * (2.6062082866220883e-05 + d2 * (1.4892703390745638e-06 + d2 * (7.277295321301766e-08 + d2 * (3.1218566425945675e-09 + d2 * (1.1983741522136652e-10 + d2 * (4.123938222860668e-12 + d2 * (1.4149958549156823e-13 + d2 * (3.3995690665200588e-15))))))))) + d * (-0.0012871274521765882 + d2 * (-0.00010157675344590277 + d2 * (-6.366563887245056e-06 + d2 * (-3.350783842653634e-07 + d2 * (-1.5300680714553963e-08 + d2 * (-6.194434286546678e-10 + d2 * (-2.2621820681661945e-11 + d2 * (-7.313695315390301e-13 + d2 * (-2.860784803145174e-14))))))))))))

cdef inline double _gx_D64m(double d) noexcept nogil:
    # float64 a in [1, 4]: Phi(-a) - a*phi(a) = exp(-a^2/2)*D(d)
    # degree 22, max weighted error 5.02e-17
    # c0..c2 by Horner around the rest as E(d^2) + d*O(d^2)
    cdef double d2 = d * d
    return -0.8560243696230064 + d * (-0.4445562323514271 + d * (0.013648225752794662 + d * (-0.0038311291893358733 + d2 * (-0.00025742549043595843 + d2 * (-1.4510964774519035e-05 + d2 * (-7.073959977588948e-07 + d2 * (-3.046165295326947e-08 + d2 * (-1.1769959717116815e-09 + d2 * (-4.128167500668464e-11 + d2 * (-1.3370457220288991e-12 + d2 * (-3.69345754821699e-14 + d2 * (-1.5271471942406278e-15))))))))) + d * (0.0010176006948635062 + d2 * (6.233949479734847e-05 + d2 * (3.257760351013847e-06 + d2 * (1.489270504455752e-07 + d2 * (6.064388930899968e-09 + d2 * (2.2301220297250178e-10 + d2 * (7.476013458787189e-12 + d2 * (2.3449812431793086e-13 + d2 * (5.863993210497599e-15 + d2 * (2.742574624302463e-16)))))))))))))

cdef inline double _gx_T64t(double w) noexcept nogil:
    # float64 tail a in [4, 40], w = 1/a^2
    # degree 23, max weighted error 6.63e-17
    # c0..c2 by Horner around the rest as E(w^2) + w*O(w^2)
    cdef double w2 = w * w
    return 0.3989422804014324 + w * (-0.39894228040061225 + w * (1.196826840276675 + w * (-5.984133673858265 + w2 * (-376.9610928334137 + w2 * (-53279.06523841649 + w2 * (-10795942.021894336 + w2 * (-753861116.2125823 + w2 * (247182638588.83777 + w2 * (-46948193026618.23 + w2 * (8379889412689265.0 + w2 * (-1.0012734880392654e+18 + w2 * (-5.868302797018368e+20 + w2 * (-7.300884317531336e+21)))))))))) + w * (41.888759356826846 + w2 * (4141.105042639134 + w2 * (758851.4957787457 + w2 * (127440774.7671294 + w2 * (-9337675536.077948 + w2 * (-533174483707.38074 + w2 * (406490079475419.1 + w2 * (-1.4614899896576064e+17 + w2 * (4.938689780257745e+19 + w2 * (3.25724309057304e+21)))))))))))))

cdef inline double _gx_U64t(double w) noexcept nogil:
    # float64 tail: Phi(-a) - a*phi(a) = -a*exp(-a^2/2)*U(w)
    # degree 20, max weighted error 4.87e-17
    # c0..c2 by Horner around the rest as E(w^2) + w*O(w^2)
    cdef double w2 = w * w
    return 0.39894228040143265 + w * (-0.39894228040139157 + w * (0.39894228035613816 + w * (-1.1968268159725806 + w2 * (-41.8871822416842 + w2 * (-4120.2056851000825 + w2 * (-687145.079722673 + w2 * (-65353311.15084747 + w2 * (14648470211.478634 + w2 * (-628063638806.4518 + w2 * (-781476253994132.1 + w2 * (-2.906670706341739e+16)))))))) + w * (5.984125923687639 + w2 * (376.74423491349074 + w2 * (51837.23812611017 + w2 * (8250456.402735095 + w2 * (-179113979.6289304 + w2 * (-176976727058.15427 + w2 * (50440869151149.48 + w2 * (6441844494452415.0 + w2 * (5.68491237087119e+16))))))))))))
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
    /* a*Phi(-a) (forward) for a <= R: 32 intervals i = round(a*(K2*a + K)), u = a - L, C0 + u*(C1 + ...) with C0 exact; degree 5, max weighted error 5.34e-08; rows L, C0, ..., C5 */
    #define GX_F_CR 5.75f
    #define GX_F_CK 2.465139150619507f
    #define GX_F_CK2 0.5239909291267395f
    #define GX_F_CDEG 5
    static const float GX_F_C[7][32] __attribute__((aligned(64))) = {
        {0.0f, 0.37561362981796265f, 0.7053922414779663f, 1.0030544996261597f, 1.2764025926589966f, 1.5307317972183228f, 1.7692720890045166f, 1.994381308555603f, 2.2094101905822754f, 2.412698268890381f, 2.608686923980713f, 2.7974095344543457f, 2.9807417392730713f, 3.15661358833313f, 3.3264949321746826f, 3.492490768432617f, 3.6531858444213867f, 3.809882402420044f, 3.963751792907715f, 4.1125288009643555f, 4.257416725158691f, 4.4012274742126465f, 4.541199207305908f, 4.678003787994385f, 4.812350749969482f, 4.9451093673706055f, 5.073348522186279f, 5.203324317932129f, 5.327516078948975f, 5.448847770690918f, 5.573047637939453f, 5.689460754394531f},
        {0.0f, 0.13281776010990143f, 0.16949382424354553f, 0.15839964151382446f, 0.1287974715232849f, 0.09631034731864929f, 0.06798293441534042f, 0.04598085954785347f, 0.02998846024274826f, 0.019102444872260094f, 0.011855224147439003f, 0.007205314468592405f, 0.004285579081624746f, 0.0025191782042384148f, 0.0014627532800659537f, 0.0008356450125575066f, 0.0004730996733997017f, 0.0002648495137691498f, 0.0001462247164454311f, 8.047162555158138e-05f, 4.402225386002101e-05f, 2.3687451175646856e-05f, 1.2700632396445144e-05f, 6.775648671464296e-06f, 3.5891778225050075e-06f, 1.8816419924405636e-06f, 9.915241889757453e-07f, 5.092878723189642e-07f, 2.65216982597849e-07f, 1.3812061183671176e-07f, 6.975256638952487e-08f, 3.625357791747774e-08f},
        {0.5f, 0.21396048367023468f, 0.02085460163652897f, -0.08405118435621262f, -0.12457995116710663f, -0.12631773948669434f, -0.10913402587175369f, -0.08583850413560867f, -0.06319553405046463f, -0.04448774829506874f, -0.03009655326604843f, -0.019728166982531548f, -0.012555538676679134f, -0.007840288802981377f, -0.0048088207840919495f, -0.002889645053073764f, -0.001713751582428813f, -0.0010017195018008351f, -0.0005759464111179113f, -0.000329115689964965f, -0.00018650868150871247f, -0.00010380409366916865f, -5.7454170018900186e-05f, -3.158712570439093e-05f, -1.721867738524452e-05f, -9.2787604444311e-06f, -5.017483090341557e-06f, -2.643821289893822e-06f, -1.4099355212238152e-06f, -7.511231956414122e-07f, -3.8803423763056344e-07f, -2.0591953386883688e-07f},
        {-0.3989412486553192f, -0.3455415666103363f, -0.2336818128824234f, -0.11987891048192978f, -0.032752908766269684f, 0.021209783852100372f, 0.04713469371199608f, 0.05398755520582199f, 0.050060540437698364f, 0.04149847477674484f, 0.03190479055047035f, 0.023223526775836945f, 0.01616065204143524f, 0.01089739054441452f, 0.007151835598051548f, 0.004567953757941723f, 0.0028623135294765234f, 0.0017594662494957447f, 0.0010599546367302537f, 0.0006321974797174335f, 0.0003727959410753101f, 0.00021546754578594118f, 0.000123537567560561f, 7.020794873824343e-05f, 3.9492537325713784e-05f, 2.1929639842710458e-05f, 1.2195894669275731e-05f, 6.606014267163118e-06f, 3.6143121633358533e-06f, 1.972921154447249e-06f, 1.0442611255712109e-06f, 5.665944513566501e-07f},
        {-5.066352605354041e-05f, 0.08979592472314835f, 0.12808747589588165f, 0.12073779851198196f, 0.0890977755188942f, 0.052255745977163315f, 0.021388735622167587f, 0.0004071482107974589f, -0.011278538033366203f, -0.015905965119600296f, -0.01619611866772175f, -0.014220625162124634f, -0.011392481625080109f, -0.008586864918470383f, -0.006180702243000269f, -0.0042748949490487576f, -0.002871100325137377f, -0.0018773964839056134f, -0.0011962091084569693f, -0.0007504250388592482f, -0.00046344075235538185f, -0.0002797176712192595f, -0.00016692299686837941f, -9.846859757089987e-05f, -5.736382081522606e-05f, -3.2929357985267416e-05f, -1.8887880287365988e-05f, -1.0543980351940263e-05f, -5.932001840847079e-06f, -3.3247438295802567e-06f, -1.8064064306599903e-06f, -1.0038397704192903e-06f},
        {0.06726793199777603f, 0.04673190787434578f, 0.009960499592125416f, -0.0202392116189003f, -0.034805040806531906f, -0.03550823777914047f, -0.028162378817796707f, -0.018255580216646194f, -0.009205006062984467f, -0.0026173493824899197f, 0.0014579077251255512f, 0.003460062202066183f, 0.0040491181425750256f, 0.003819793462753296f, 0.003219513688236475f, 0.0025162205565720797f, 0.0018656300380825996f, 0.0013261573622003198f, 0.0009086231584660709f, 0.0006073998520150781f, 0.0003969307872466743f, 0.0002523666189517826f, 0.00015788347809575498f, 9.726035932544619e-05f, 5.898641757084988e-05f, 3.516417564242147e-05f, 2.0883424440398812e-05f, 1.205892567668343e-05f, 6.9975135374988895e-06f, 4.037387952848803e-06f, 2.2578688003704883e-06f, 1.2876267874162295e-06f},
        {-0.004726395010948181f, -0.01862284354865551f, -0.02325604297220707f, -0.016035163775086403f, -0.005197546444833279f, 0.0035738430451601744f, 0.008094324730336666f, 0.00900508463382721f, 0.007589797489345074f, 0.0052995821461081505f, 0.0030408555176109076f, 0.0012737821089103818f, 9.804280125536025e-05f, -0.0005468741874210536f, -0.0008145456667989492f, -0.0008472940535284579f, -0.0007570539601147175f, -0.0006136930896900594f, -0.0004678148834500462f, -0.00034200772643089294f, -0.00024029190535657108f, -0.0001633266656426713f, -0.00010830230894498527f, -7.021666533546522e-05f, -4.469520354177803e-05f, -2.7853853680426255e-05f, -1.713560959615279e-05f, -1.038057598634623e-05f, -6.215021585376235e-06f, -3.673205810628133e-06f, -2.14670990317245e-06f, -1.2424935675880988e-06f},
    };
    /* Phi(-a) - a*phi(a) (gradient) for a <= R: 32 intervals i = round(a*(K2*a + K)), u = a - L, C0 + u*(C1 + ...) with C0 exact; degree 6, max weighted error 2.27e-08; rows L, C0, ..., C6 */
    #define GX_F_GR 7.5f
    #define GX_F_GK 1.2599600553512573f
    #define GX_F_GK2 0.39198756217956543f
    #define GX_F_GDEG 6
    static const float GX_F_G[8][32] __attribute__((aligned(64))) = {
        {0.0f, 0.6584736704826355f, 1.1648608446121216f, 1.5919468402862549f, 1.9689475297927856f, 2.308631420135498f, 2.6220595836639404f, 2.914355754852295f, 3.1877548694610596f, 3.4463348388671875f, 3.6935744285583496f, 3.927839756011963f, 4.153932094573975f, 4.372798442840576f, 4.582762241363525f, 4.784351825714111f, 4.980776309967041f, 5.1721062660217285f, 5.358583450317383f, 5.536348342895508f, 5.71323823928833f, 5.888184070587158f, 6.054565906524658f, 6.218789577484131f, 6.382094860076904f, 6.53915548324585f, 6.693142890930176f, 6.847793102264404f, 6.996677398681641f, 7.143028259277344f, 7.287514686584473f, 7.428609848022461f},
        {0.5f, 0.04362383857369423f, -0.11375856399536133f, -0.12316591292619705f, -0.08858270943164825f, -0.053626809269189835f, -0.02925192564725876f, -0.01485657412558794f, -0.007186094764620066f, -0.003339651506394148f, -0.0014961108099669218f, -0.0006568770040757954f, -0.0002804574032779783f, -0.00011675710265990347f, -4.80063354189042e-05f, -1.957039967237506e-05f, -7.833950803615153e-06f, -3.08861876874289e-06f, -1.2017274002573686e-06f, -4.7244589040928986e-07f, -1.80610456368413e-07f, -6.758887138857972e-08f, -2.5772470380047707e-08f, -9.676223378107807e-09f, -3.5536515952117043e-09f, -1.3214357386104325e-09f, -4.888172644434974e-10f, -1.7569601329370244e-10f, -6.410572767068246e-11f, -2.327477273411649e-11f, -8.37828677963115e-12f, -3.02626608668366e-12f},
        {-0.7978847026824951f, -0.5031111240386963f, -0.13017906248569489f, 0.06003103032708168f, 0.10776829719543457f, 0.09246528148651123f, 0.06251327693462372f, 0.03707263246178627f, 0.020234489813447f, 0.010385766625404358f, 0.005064382683485746f, 0.00239214557223022f, 0.0010899786138907075f, 0.000481167808175087f, 0.00020856402989011258f, 8.919567335397005e-05f, 3.732349068741314e-05f, 1.533416798338294e-05f, 6.2001108744880185e-06f, 2.5248693873436423e-06f, 9.983698419091525e-07f, 3.8585073980357265e-07f, 1.5155751498241443e-07f, 5.853972950831121e-08f, 2.2096159568718576e-08f, 8.429732467618578e-09f, 3.1954940915568386e-09f, 1.1763988672086612e-09f, 4.3899722745877057e-10f, 1.6286848258939557e-10f, 5.986464796103874e-11f, 2.2059047297129375e-11f},
        {7.966837983985897e-06f, 0.37713566422462463f, 0.3116166591644287f, 0.13108114898204803f, 0.006967220921069384f, -0.0426253005862236f, -0.04833483695983887f, -0.03738272935152054f, -0.024348290637135506f, -0.014272639527916908f, -0.007746165152639151f, -0.003998249303549528f, -0.001967050600796938f, -0.0009291346068494022f, -0.00042759894859045744f, -0.00019294365483801812f, -8.479936514049768e-05f, -3.645061224233359e-05f, -1.5368239473900758e-05f, -6.501389634649968e-06f, -2.665809233803884e-06f, -1.0664388128134306e-06f, -4.323309781284479e-07f, -1.720962927720393e-07f, -6.686887132900665e-08f, -2.6209278303213068e-08f, -1.0194201038871142e-08f, -3.848422025498621e-09f, -1.4703438466767693e-09f, -5.579555706347605e-10f, -2.0959595170566558e-10f, -7.88527923512028e-11f},
        {0.26581528782844543f, 0.06172724440693855f, -0.12336593121290207f, -0.13702397048473358f, -0.07760001718997955f, -0.02268870361149311f, 0.006713960785418749f, 0.015875866636633873f, 0.014928791671991348f, 0.010852895677089691f, 0.006859825924038887f, 0.00397937186062336f, 0.002154867397621274f, 0.00110435311216861f, 0.0005452532204799354f, 0.0002616788260638714f, 0.00012158027675468475f, 5.496783342096023e-05f, 2.42727946897503e-05f, 1.0705937711463775e-05f, 4.566643838188611e-06f, 1.8962160766022862e-06f, 7.952656915222178e-07f, 3.269327635280206e-07f, 1.310121433562017e-07f, 5.2843283526726736e-08f, 2.1120388993267625e-08f, 8.187129196812748e-09f, 3.206428234037162e-09f, 1.2459024922861772e-09f, 4.788009433376317e-10f, 1.8408000124203738e-10f},
        {0.00123020785395056f, -0.11823976784944534f, -0.04831423610448837f, 0.0257423035800457f, 0.04529565945267677f, 0.03264696151018143f, 0.014512994326651096f, 0.0022809766232967377f, -0.003122985363006592f, -0.004291394259780645f, -0.0036182005424052477f, -0.0025164519902318716f, -0.0015574016142636538f, -0.0008873334736563265f, -0.00047797782463021576f, -0.0002469669852871448f, -0.00012245067046023905f, -5.8660425565904006e-05f, -2.7290909201838076e-05f, -1.2610675184987485e-05f, -5.6187504924309906e-06f, -2.430091171845561e-06f, -1.0574798352536163e-06f, -4.501471835283155e-07f, -1.8645349086909846e-07f, -7.75477175807282e-08f, -3.190617192672107e-08f, -1.271837124505737e-08f, -5.113520717969777e-09f, -2.0371080378112083e-09f, -8.018415376120913e-10f, -3.15389159233348e-10f},
        {-0.06509225815534592f, 0.0028385554905980825f, 0.04028559476137161f, 0.0231145191937685f, -0.001044027041643858f, -0.01128423772752285f, -0.010494195856153965f, -0.006004484836012125f, -0.002144280355423689f, 3.6572870158124715e-05f, 0.0008616065024398267f, 0.000937514123506844f, 0.0007349803927354515f, 0.0004918391932733357f, 0.000298569502774626f, 0.00016993857570923865f, 9.12551986402832e-05f, 4.685761086875573e-05f, 2.318242513865698e-05f, 1.1301976883260068e-05f, 5.290728040563408e-06f, 2.3954642074386356e-06f, 1.0858830137294717e-06f, 4.801239015250758e-07f, 2.0625321894840454e-07f, 8.868122591820793e-08f, 3.76413709091139e-08f, 1.5470540404294297e-08f, 6.396054796908857e-09f, 2.616662664323144e-09f, 1.0564515928734863e-09f, 4.255727992230618e-10f},
        {0.011142684146761894f, 0.021531088277697563f, 0.0010737162083387375f, -0.011378973722457886f, -0.008382721804082394f, -0.001813204726204276f, 0.0020118362735956907f, 0.002685765502974391f, 0.0019321690779179335f, 0.0009378275135532022f, 0.00023172625515144318f, -9.033104288391769e-05f, -0.00018354579515289515f, -0.00017466217104811221f, -0.00012900210276711732f, -8.549995982320979e-05f, -5.0296843255637214e-05f, -2.8191943783895113e-05f, -1.5107685612747446e-05f, -7.795241799612995e-06f, -3.85956354875816e-06f, -1.852787249845278e-06f, -8.742211434764613e-07f, -3.996687212293182e-07f, -1.8022782910520618e-07f, -7.987622296923291e-08f, -3.484051447344427e-08f, -1.5054085977794784e-08f, -6.361645432662044e-09f, -2.674320320750212e-09f, -1.1062413207696409e-09f, -4.5322762209920597e-10f},
    };
    /* a*sigma(-w(a)) (tanh form's forward) for a <= R: 32 intervals i = round(a*(K2*a + K)), u = a - L, C0 + u*(C1 + ...) with C0 exact; degree 5, max weighted error 6.96e-08; rows L, C0, ..., C5 */
    #define GX_F_TCR 5.25f
    #define GX_F_TCK 2.399923801422119f
    #define GX_F_TCK2 0.6856924891471863f
    #define GX_F_TCDEG 5
    static const float GX_F_TC[7][32] __attribute__((aligned(64))) = {
        {0.0f, 0.37622490525245667f, 0.6953462958335876f, 0.977128267288208f, 1.2325507402420044f, 1.4679104089736938f, 1.6868491172790527f, 1.893122673034668f, 2.0869710445404053f, 2.2735986709594727f, 2.450087070465088f, 2.62117338180542f, 2.7852776050567627f, 2.942909002304077f, 3.095261335372925f, 3.2433948516845703f, 3.386866569519043f, 3.527259588241577f, 3.6640961170196533f, 3.7971956729888916f, 3.9277026653289795f, 4.055373191833496f, 4.178821563720703f, 4.3006672859191895f, 4.41956090927124f, 4.5367960929870605f, 4.65300989151001f, 4.764595031738281f, 4.8750739097595215f, 4.984314441680908f, 5.093883991241455f, 5.1978888511657715f},
        {0.0f, 0.13295438885688782f, 0.16931472718715668f, 0.16064076125621796f, 0.13441035151481628f, 0.10454041510820389f, 0.077425517141819f, 0.055216845124959946f, 0.038321785628795624f, 0.025814659893512726f, 0.017075540497899055f, 0.01101608294993639f, 0.006980572361499071f, 0.004352719523012638f, 0.002668308326974511f, 0.001605762168765068f, 0.0009517689468339086f, 0.0005532469949685037f, 0.00031634047627449036f, 0.00017831637524068356f, 9.872095688479021e-05f, 5.379066715249792e-05f, 2.9082368200761266e-05f, 1.5418316252180375e-05f, 8.078729479166213e-06f, 4.157991952524753e-06f, 2.095120407830109e-06f, 1.0571657185209915e-06f, 5.235054914010107e-07f, 2.5469697106927924e-07f, 1.2046604069837485e-07f, 5.774546707471018e-08f},
        {0.5f, 0.21359840035438538f, 0.02584233321249485f, -0.07723601162433624f, -0.12099124491214752f, -0.12851056456565857f, -0.11697886884212494f, -0.09750241786241531f, -0.07674053311347961f, -0.05761336907744408f, -0.041878726333379745f, -0.029436223208904266f, -0.020168550312519073f, -0.013514401391148567f, -0.00885992031544447f, -0.005680255126208067f, -0.003573775291442871f, -0.0021990963723510504f, -0.001327493810094893f, -0.0007879313779994845f, -0.00045839929953217506f, -0.00026194064412266016f, -0.00014816131442785263f, -8.206409984268248e-05f, -4.484267992665991e-05f, -2.4038719857344404e-05f, -1.2603100003616419e-05f, -6.602465873584151e-06f, -3.3913586321432376e-06f, -1.7098379885283066e-06f, -8.377118092539604e-07f, -4.150158190441289e-07f},
        {-0.39894115924835205f, -0.3451616168022156f, -0.23721344769001007f, -0.12939061224460602f, -0.0454736165702343f, 0.00959042925387621f, 0.03984738886356354f, 0.05229285731911659f, 0.0534251369535923f, 0.048314791172742844f, 0.040549058467149734f, 0.03215488791465759f, 0.024441886693239212f, 0.017952311784029007f, 0.01278836838901043f, 0.008850200101733208f, 0.005976017564535141f, 0.003929893486201763f, 0.0025251968763768673f, 0.0015896136173978448f, 0.0009780307300388813f, 0.000589435629080981f, 0.0003505554632283747f, 0.00020378074259497225f, 0.00011660382733680308f, 6.534840940730646e-05f, 3.577125244191848e-05f, 1.9516010070219636e-05f, 1.0427492270537186e-05f, 5.462340141093591e-06f, 2.7789847081294283e-06f, 1.4260200487115071e-06f},
        {-5.4136318794917315e-05f, 0.09018559753894806f, 0.12751799821853638f, 0.12207246571779251f, 0.0944402739405632f, 0.06116533651947975f, 0.0317130908370018f, 0.00962987169623375f, -0.004671973641961813f, -0.01271109003573656f, -0.01601814106106758f, -0.016299521550536156f, -0.01482092123478651f, -0.01253597903996706f, -0.010049165226519108f, -0.007707204669713974f, -0.0057010529562830925f, -0.004073540214449167f, -0.0028245688881725073f, -0.0019074463052675128f, -0.0012533323606476188f, -0.0008033984922803938f, -0.0005060579860582948f, -0.0003107306838501245f, -0.00018724336405284703f, -0.00011026394349755719f, -6.330735777737573e-05f, -3.61158381565474e-05f, -2.0146762835793197e-05f, -1.1002214705513325e-05f, -5.830221198266372e-06f, -3.1074412163434317e-06f},
        {0.067637600004673f, 0.046605434268713f, 0.010618899017572403f, -0.018424564972519875f, -0.03319530934095383f, -0.03562764823436737f, -0.030625728890299797f, -0.02256729267537594f, -0.014385498128831387f, -0.00740332854911685f, -0.002267849165946245f, 0.0011626525083556771f, 0.003114499384537339f, 0.003968252334743738f, 0.00408516451716423f, 0.0037570404820144176f, 0.0032067352440208197f, 0.00258394842967391f, 0.001988291274756193f, 0.0014719844330102205f, 0.001051141880452633f, 0.0007270141504704952f, 0.0004908186965622008f, 0.00032159191323444247f, 0.00020586050231941044f, 0.00012835332017857581f, 7.782128523103893e-05f, 4.669117697631009e-05f, 2.73357563855825e-05f, 1.5635750969522633e-05f, 8.669078852108214e-06f, 4.816808996110922e-06f},
        {-0.004901367239654064f, -0.018952390179038048f, -0.0234510600566864f, -0.0166192464530468f, -0.006458274554461241f, 0.0018694179598242044f, 0.006713172420859337f, 0.008429751731455326f, 0.008080786094069481f, 0.006701480597257614f, 0.0048559196293354034f, 0.003111830912530422f, 0.0016430403338745236f, 0.000536840467248112f, -0.0002011435863096267f, -0.0006591997807845473f, -0.0008606563205830753f, -0.0009049894288182259f, -0.0008306075469590724f, -0.0007121612434275448f, -0.0005736470338888466f, -0.0004424775543157011f, -0.00032526568975299597f, -0.0002317472390132025f, -0.00015956128481775522f, -0.00010654397192411125f, -6.906987982802093e-05f, -4.369804446469061e-05f, -2.6985653676092625e-05f, -1.625098957447335e-05f, -9.581895938026719e-06f, -5.521954790310701e-06f},
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
    /* a*Phi(-a) (forward) for a <= R: 8 intervals i = round(a*(K2*a + K)), u = a - L, C0 + u*(C1 + ...) with C0 exact; degree 7, max weighted error 4.72e-08; the last slot x in (R, RP], 0.056 ulp; rows L, C0, ..., C7 */
    #define GX_F_CR 3.4f
    #define GX_F_CRP 5.5f   /* x > 0 clamp (positive slot, the last) */
    #define GX_F_CPOS 1
    #define GX_F_CH 0.5234375f   /* L_i = i*H */
    #define GX_F_CK 1.9104477167129517f
    #define GX_F_CK2 0.0f
    #define GX_F_CDEG 7
    static const float GX_F_C[9][8] __attribute__((aligned(64))) = {
        {0.0f, 0.5234375f, 1.046875f, 1.5703125f, 2.09375f, 2.6171875f, 3.140625f, 3.6640625f},
        {0.0f, 0.15720656514167786f, 0.15449637174606323f, 0.09134698659181595f, 0.03798298537731171f, 0.01160168182104826f, 0.0026473545003682375f, 0.0004547947319224477f},
        {0.5f, 0.11824772506952286f, -0.09386903047561646f, -0.12440190464258194f, -0.07516435533761978f, -0.029557643458247185f, -0.008195404894649982f, -0.0016526386607438326f},
        {-0.3989422917366028f, -0.3002142310142517f, -0.10425573587417603f, 0.027082296088337898f, 0.0531158484518528f, 0.03149230778217316f, 0.011315127834677696f, 0.0027701964136213064f},
        {6.838172339485027e-07f, 0.11307485401630402f, 0.1168639287352562f, 0.04668247699737549f, -0.005969304591417313f, -0.016143547371029854f, -0.008832680061459541f, -0.0027873460203409195f},
        {0.06647660583257675f, 0.0313345231115818f, -0.023664377629756927f, -0.0347595177590847f, -0.013888487592339516f, 0.001609215047210455f, 0.003867256920784712f, 0.0018154361750930548f},
        {0.00012735076597891748f, -0.02278999611735344f, -0.014421182684600353f, 0.004593637306243181f, 0.008594286628067493f, 0.0029497460927814245f, -0.0005140574066899717f, -0.000758577894885093f},
        {-0.010565701872110367f, -0.0031565900426357985f, 0.0055875456891953945f, 0.0038450106512755156f, -0.0008678149897605181f, -0.0017758598551154137f, -0.00046039221342653036f, 0.0001854880974860862f},
        {0.0013439659960567951f, 0.002620706567540765f, 0.0013324783649295568f, -0.0012472613016143441f, -0.00120504479855299f, 0.0003296545473858714f, 0.000321223255014047f, -2.0128007236053236e-05f},
    };
    /* Phi(-a) - a*phi(a) (gradient) for a <= R: 8 intervals i = round(a*(K2*a + K)), u = a - L, C0 + u*(C1 + ...) with C0 exact; degree 7, max weighted error 1.84e-08; rows L, C0, ..., C7 */
    #define GX_F_GR 4.0f
    #define GX_F_GRP 4.0f   /* x > 0 clamp (R: no positive slot) */
    #define GX_F_GPOS 0
    #define GX_F_GK 1.874750018119812f
    #define GX_F_GK2 0.0f
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
    /* a*sigma(-w(a)) (tanh form's forward) for a <= R: 8 intervals i = round(a*(K2*a + K)), u = a - L, C0 + u*(C1 + ...) with C0 exact; degree 6, max weighted error 1.99e-08; rows L, C0, ..., C6 */
    #define GX_F_TCR 3.1f
    #define GX_F_TCRP 3.1f   /* x > 0 clamp (R: no positive slot) */
    #define GX_F_TCPOS 0
    #define GX_F_TCK 2.419032335281372f
    #define GX_F_TCK2 0.0f
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
       permute-bound: 0.67 Gelem/s).  The row is loaded by an instruction of its own: vpermps with a memory
       operand holds its pipe two cycles on Zen 3, the load and the register form one (microbenchmark: 2.5
       against 1.3 cycles per permute), and the central loops are bound by that pipe */
    static inline __attribute__((always_inline)) __m256 gx_f_tab8(const float* t, __m256i idx) {
        __m256 row = _mm256_load_ps(t);
        __asm__ volatile("" : "+x"(row));
        return _mm256_permutevar8x32_ps(row, idx);
    }
    #define GX_F_TAB(t) gx_f_tab8(t, idx)
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
       tables, no exp; the lanes beyond through a queue (gx_f_tailq) to the tails.  randn sigma = 3 puts 2.8% of
       the lanes there on AVX-512 (exact forward: x < -5.75), 13% on AVX2 (x < -3.4; gradient |x| > 4.0: 18%); x ~ U(-8, 8) 14% and 29% */
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
                                                                    float K2, const int deg) {
        /* round(a*(K2*a + K)) lands in the low bits (MAGIC): the permute reads the low five (AVX2: three) */
        gx_fv k = K2 != 0.0f ? GX_F_FMA(a, GX_F_SET1(K2), GX_F_SET1(K)) : GX_F_SET1(K);
    #if defined(__AVX512F__)
        gx_iv idx = GX_F_CASTI(GX_F_FMA(a, k, GX_F_SET1(GX_F_MAGIC)));
    #else
        /* AVX2, a table with a positive slot: a beyond the central intervals (only x > 0 reaches them: a is
           clamped at RP there, at R for x < 0) takes the last slot */
        const int pos = tab == GX_F_C ? GX_F_CPOS : tab == GX_F_G ? GX_F_GPOS : GX_F_TCPOS;
        gx_fv t = GX_F_FMA(a, k, GX_F_SET1(GX_F_MAGIC));
        if (pos)
            t = GX_F_MIN(t, GX_F_SET1(GX_F_MAGIC + (float)(GX_F_CN - 1)));
        gx_iv idx = GX_F_CASTI(t);
        /* the forward's L_i = i*H: u = a - i*H by one FMA from the index, exact (i*H has few bits; Sterbenz),
           where a permute of L cost a cycle of the permutes' pipe */
        const float H = tab == GX_F_C ? GX_F_CH : 0.0f;
    #endif
    #if defined(__AVX512F__)
        gx_fv u = GX_F_SUB(a, GX_F_TAB(tab[0]));             /* exact (Sterbenz; L = 0 on the first interval) */
    #else
        gx_fv u = H != 0.0f ? GX_F_FMA(GX_F_SUB(t, GX_F_SET1(GX_F_MAGIC)), GX_F_SET1(-H), a)
                            : GX_F_SUB(a, GX_F_TAB(tab[0]));
    #endif
        gx_fv p;
    #if !defined(__AVX512F__)
        if (deg >= 7 && deg % 2) {
            /* AVX2, whose loops wait on this chain more than on their ports: C2 + C3 u + ... in pairs on u^2
               (row k + 1 holds C_k), then C0 + u (C1 + u h) as Horner, where the rounding matters (Zen 4,
               degree 7: forward and gradient +2-7%, 8 FMAs for 7; degree 6, the tanh form's, lost 2-3%) */
            gx_fv u2 = GX_F_MUL(u, u);
            p = GX_F_FMA(GX_F_TAB(tab[deg + 1]), u, GX_F_TAB(tab[deg]));
            for (int k = deg - 1; k >= 4; k -= 2)
                p = GX_F_FMA(p, u2, GX_F_FMA(GX_F_TAB(tab[k]), u, GX_F_TAB(tab[k - 1])));
            p = GX_F_FMA(p, u, GX_F_TAB(tab[2]));
            return GX_F_FMA(p, u, GX_F_TAB(tab[1]));
        }
    #endif
        p = GX_F_TAB(tab[deg + 1]);
        for (int k = deg; k >= 1; k--)
            p = GX_F_FMA(p, u, GX_F_TAB(tab[k]));
        return p;
    }

    static inline __attribute__((always_inline)) gx_fv gx_f_fwd_F(gx_fv x, gx_fv a, const int th) {
        gx_fv F = th ? gx_f_central(a, GX_F_TC, GX_F_TCK, GX_F_TCK2, GX_F_TCDEG)
               : gx_f_central(a, GX_F_C, GX_F_CK, GX_F_CK2, GX_F_CDEG);
        return GX_F_SUB(GX_F_MAX(GX_F_SET1(-0.0f), x), F);
    }

    /* a = min(|x|, R) (AVX-512: R for NaN, vrangeps returns the number; AVX2: NaN stays) */
    static inline __attribute__((always_inline)) gx_fv gx_f_fwd_a(gx_fv x, const int th) {
    #if defined(__AVX512F__)
        return _mm512_range_ps(x, GX_F_SET1(th ? GX_F_TCR : GX_F_CR), 10);
    #else
        /* x < -R is a tail lane: its result here is replaced */
        return GX_F_MIN(GX_F_SET1(th ? GX_F_TCRP : GX_F_CRP), GX_F_ABS(x));
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

    /* GELU (th 0: exact, table GX_F_C; 1: the tanh form, GX_F_TC) for x >= -R, NaN and +inf (AVX-512: a = R
       there, max(-0, x) gives the NaN; AVX2: a = RP for +inf, NaN for NaN).  chk 0: no test for tiny lanes, whose
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

    /* dy GELU'(x) for x >= -GR (x NaN: a suspect lane) */
    static inline __attribute__((always_inline)) gx_fv gx_f_gelu_grad_c(gx_fv x, gx_fv dy) {
    #if defined(__AVX512F__)
        gx_fv G = gx_f_central(_mm512_range_ps(x, GX_F_SET1(GX_F_GR), 10), GX_F_G, GX_F_GK, GX_F_GK2, GX_F_GDEG);
        return _mm512_mask_mul_ps(GX_F_FNMA(G, dy, dy), _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ),
                                  G, dy);
    #else
        gx_fv G = gx_f_central(GX_F_MIN(GX_F_SET1(GX_F_GRP), GX_F_ABS(x)), GX_F_G, GX_F_GK, GX_F_GK2, GX_F_GDEG);
        return _mm256_blendv_ps(GX_F_FNMA(G, dy, dy), GX_F_MUL(G, dy), x);   /* by the sign bit: -0.0 the same */
    #endif
    }

    #define GX_F_LIST 64                /* vectors per chunk */
    #define GX_F_DIRECT 16              /* a chunk with at least 1/16 of its lanes queued has the next one push
                                           each vector's tail lanes as it goes (gx_f_list: PUSHED) */
    #define GX_F_SEG ((ptrdiff_t)1 << 30)  /* elements per segment */
    /* a chunk's tail lanes and fewer than a vector's carried from the chunks before, x (gradient: and dy) and
       offsets, compressed */
    typedef struct {
        float x[GX_F_LIST * GX_F_W + 2 * GX_F_W] __attribute__((aligned(64)));
        float d[GX_F_LIST * GX_F_W + 2 * GX_F_W] __attribute__((aligned(64)));
        int i[GX_F_LIST * GX_F_W + 2 * GX_F_W] __attribute__((aligned(64)));
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

    /* the tail lanes of a vector, from x alone: x < -R (AVX2 tables without a positive slot: |x| > R;
       gradient: also x NaN, except the AVX2 one with a positive slot) */
    static inline __attribute__((always_inline)) gx_fm gx_f_tail_mask(gx_fv x, const int kind) {
        const float R = kind == GX_F_EXACT_GRAD ? GX_F_GR : kind == GX_F_TANH ? GX_F_TCR : GX_F_CR;
        /* the predicates spelled out: clang takes only a constant expression there */
    #if defined(__AVX512F__)
        if (kind == GX_F_EXACT_GRAD)
            return _mm512_cmp_ps_mask(x, GX_F_SET1(-R), _CMP_NGE_UQ);
        return _mm512_cmp_ps_mask(x, GX_F_SET1(-R), _CMP_LT_OQ);
    #else
        const int pos = kind == GX_F_EXACT_GRAD ? GX_F_GPOS : kind == GX_F_TANH ? GX_F_TCPOS : GX_F_CPOS;
        if (pos)        /* x > R takes the table's positive slot (the gradient's NaN x: gx_f_grad_bad) */
            return (gx_fm)_mm256_movemask_ps(_mm256_cmp_ps(x, GX_F_SET1(-R), _CMP_LT_OQ));
        if (kind == GX_F_EXACT_GRAD)
            return (gx_fm)_mm256_movemask_ps(_mm256_cmp_ps(GX_F_ABS(x), GX_F_SET1(R), _CMP_NLE_UQ));
        return (gx_fm)_mm256_movemask_ps(_mm256_cmp_ps(GX_F_ABS(x), GX_F_SET1(R), _CMP_GT_OQ));
    #endif
    }

    /* a chunk's summary for the list mode, one operation a vector: acc holds a tail lane (gx_f_tail_mask) if
       any vector had one: the least x (vminps returns its second operand, acc, for x NaN, not a tail lane
       there), for the AVX-512 gradient, where NaN is, the tail lanes' x themselves; AVX2 tables without a
       positive slot: the largest |x| (the gradient's as an integer: NaN above inf) */
    static inline __attribute__((always_inline)) gx_fv gx_f_summary(gx_fv acc, gx_fv x, const int kind) {
    #if defined(__AVX512F__)
        return kind == GX_F_EXACT_GRAD ? _mm512_mask_mov_ps(acc, gx_f_tail_mask(x, kind), x) : _mm512_min_ps(x, acc);
    #else
        const int pos = kind == GX_F_EXACT_GRAD ? GX_F_GPOS : kind == GX_F_TANH ? GX_F_TCPOS : GX_F_CPOS;
        if (pos)
            return _mm256_min_ps(x, acc);
        gx_fv ax = GX_F_ABS(x);     /* the largest |x| (the gradient's as an integer: NaN above inf) */
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

    /* the gradient's central results y that are not finite (a huge or infinite dy; with a positive slot, AVX2:
       also x NaN) outside the tail lanes: redone through the tail (gx_f_grad_fix's double check) */
    static inline __attribute__((always_inline)) gx_fm gx_f_grad_bad(gx_fv x, gx_fv y) {
    #if defined(__AVX512F__)
        gx_fm mf = (gx_fm)gx_f_suspect(x, y, GX_F_GR);
    #else
        gx_fm mf = GX_F_GPOS ? (gx_fm)_mm256_movemask_ps(_mm256_cmp_ps(GX_F_MUL(y, GX_F_SET1(0.0f)), GX_F_SET1(0.0f),
                                                                       _CMP_NEQ_UQ))
                             : (gx_fm)_mm256_movemask_ps(_mm256_cmp_ps(GX_F_FMA(y, GX_F_SET1(0.0f), GX_F_ABS(x)),
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

    /* one chunk [i, end) of whole vectors, after nq lanes queued before it; returns the number of queued lanes
       (in q), and in *tiny whether a forward chunk had lanes <= TINY */
    static inline __attribute__((always_inline)) int gx_f_central_chunk(const float* x, const float* dy, float* y,
                                                                       ptrdiff_t i, ptrdiff_t end, gx_f_list* L,
                                                                       gx_f_tailq* q, const int kind,
                                                                       const int mode, const int per_vector,
                                                                       int nq, int* tiny) {
        const int grad = kind == GX_F_EXACT_GRAD;
        /* Forwards test for tiny lanes per chunk (the least a, one operation a vector, where the test per
           vector took two and a branch: AVX-512 forwards 7-11% faster at sigma = 1, 7% at 3) and redo them
           from the copies; PUSHED chunks keep none, and the chunks after one with tiny lanes test per vector,
           so that a vector of them alone skips the tables (gx_f_fwd_c: all-subnormal data took ~100-cycle
           microcode assists in them, 40x slower) */
        const int chk = grad || per_vector || mode == GX_F_PUSHED;
        const ptrdiff_t i0 = i;
        int nv = 0, ns = 0;
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
       queued lanes are computed a vector at a time after each chunk, whole vectors only, the rest carried to
       the next chunk's (a partial vector's exp form after every chunk cost the AVX-512 gradient 6% at sigma = 3,
       where a chunk queues ~6 lanes; the forwards 2-3%).  No branch on how full a queue is inside the loop
       (AVX2 with one: sigma = 3 at 0.8 Gelem/s) */
    static inline __attribute__((always_inline)) void gx_f_central_seg(const float* x, const float* dy, float* y,
                                                                       ptrdiff_t n, const int kind) {
        const int grad = kind == GX_F_EXACT_GRAD;
        gx_f_list L;
        gx_f_tailq q;
        ptrdiff_t i = 0;
        int mode = GX_F_SUMMED, quiet = 2, tiny = 0, nq = 0;
        while (n - i >= GX_F_W) {
            ptrdiff_t end = n - i > GX_F_LIST * GX_F_W ? i + GX_F_LIST * GX_F_W : n;
            int nq0 = nq, seen = tiny;
            tiny = 0;
            if (mode == GX_F_SUMMED)
                nq = gx_f_central_chunk(x, dy, y, i, end, &L, &q, kind, GX_F_SUMMED, 0, nq, &tiny);
            else if (mode == GX_F_PUSHED)
                nq = gx_f_central_chunk(x, dy, y, i, end, &L, &q, kind, GX_F_PUSHED, 1, nq, &tiny);
            else if (seen)
                nq = gx_f_central_chunk(x, dy, y, i, end, &L, &q, kind, GX_F_LISTED, 1, nq, &tiny);
            else
                nq = gx_f_central_chunk(x, dy, y, i, end, &L, &q, kind, GX_F_LISTED, 0, nq, &tiny);
            int full = nq & -GX_F_W, added = nq - nq0;
            if (full) {
                gx_f_tailq_flush(&q, full, y, kind);
                GX_F_STORE(q.x, GX_F_LOADU(q.x + full));
                if (grad)
                    GX_F_STORE(q.d, GX_F_LOADU(q.d + full));
                GX_F_STORE((float*)q.i, GX_F_LOADU((const float*)(q.i + full)));
                nq -= full;
            }
            quiet = added == 0 && !tiny ? quiet + 1 : 0;
            mode = quiet >= 2 ? GX_F_SUMMED : added * GX_F_DIRECT >= (int)(end - i) ? GX_F_PUSHED : GX_F_LISTED;
            i += (end - i) & -(ptrdiff_t)GX_F_W;
        }
        if (nq)
            gx_f_tailq_flush(&q, nq, y, kind);
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
# branch-free and vectorized; a queued lane costs ~8 scalar operations (AVX-512 forward with many: ~6 a
# vector of 8, _GX_QUEUE64_VEC_MIN), far less than evaluating every piece for every lane and selecting
# (randn sigma=3 holds all pieces in every chunk).  Only tail batches pay for the division and the
# degree-23 polynomial, and only those with some |x| > 37 for the clamped, scaled exp.  The order of the
# stores is that of _GxDefer (float32): a queued store lands below every address a later chunk reads.
cdef extern from *:
    """
    /* AVX-512: append the lanes of `mask` (bit j: x[j] and y + j) to a queue holding k, compressed a vector at
       a time (to a register, then a plain store: Zen 4 runs the memory form of vcompresspd in microcode);
       returns the new count.  The queue needs room for 32 + 8 lanes past k. */
    #if defined(__AVX512F__)
    #define FG_QUEUE64_VEC 1
    static inline int fg_queue64(double* xq, double** yq, int k, const double* x, double* y, unsigned int mask) {
        const __m512i step = _mm512_setr_epi64(0, 8, 16, 24, 32, 40, 48, 56);
        for (int v = 0; v < 4; v++) {
            __mmask8 m = (__mmask8)(mask >> (8 * v));
            _mm512_storeu_pd(xq + k, _mm512_maskz_compress_pd(m, _mm512_loadu_pd(x + 8 * v)));
            _mm512_storeu_si512((void*)(yq + k), _mm512_maskz_compress_epi64(
                m, _mm512_add_epi64(_mm512_set1_epi64((long long)(y + 8 * v)), step)));
            k += __builtin_popcount((unsigned int)m);
        }
        return k;
    }
    #else
    #define FG_QUEUE64_VEC 0
    static inline int fg_queue64(double* xq, double** yq, int k, const double* x, double* y, unsigned int mask) {
        (void)xq; (void)yq; (void)x; (void)y; (void)mask;
        return k;
    }
    #endif
    """
    const bint FG_QUEUE64_VEC
    int fg_queue64(double* xq, double** yq, int k, const double* x, double* y, unsigned int mask) noexcept nogil

cdef enum:
    _GX_Q64 = 2 * _GX_CHUNK + 8                   # a queue: up to 31 lanes, a chunk's 32 more, a vector's store
    # a forward chunk with this many lanes of one piece or more queues them by fg_queue64 (AVX-512).  Its
    # compress runs on the floating-point pipes that the central loop keeps busy, so it pays only for many
    # lanes; fewer go one at a time on the integer pipes (Zen 4 kernel A/B, 1 thread: forward +10-11% at
    # randn sigma = 2, 3 and U(-8, 8), +1% at sigma = 1; from 5 lanes, -3% at sigma = 1.  The gradient:
    # within +-3% at sigma >= 2, -7% at sigma = 1, and AVX2 by a permute table: within +-2%; neither uses it)
    _GX_QUEUE64_VEC_MIN = 9

cdef struct _GxDefer64:
    int km, kt                                    # lanes queued: middle, tail
    double xm[_GX_Q64]
    double dm[_GX_Q64]
    double* ym[_GX_Q64]
    double xt[_GX_Q64]
    double dt[_GX_Q64]
    double* yt[_GX_Q64]

cdef inline void _gx_defer64_init(_GxDefer64* q) noexcept nogil:
    q.km = 0
    q.kt = 0

cdef inline void _gx_pad64(double* xq, double* dq, int k, double v) noexcept nogil:
    """Lanes k.. of a last batch hold an input of its piece (v): no lane of a batch leaves the piece."""
    cdef int j
    for j in range(k, _GX_CHUNK):
        xq[j] = v
        dq[j] = 0

cdef inline void _gx_shift64(double* xq, double** yq) noexcept nogil:
    """After a batch of 32: the lanes queued past it (fewer than 32) move to the front.  All 32 places move,
    a fixed count (a loop to k - 32 was slower)."""
    cdef int j
    for j in range(_GX_CHUNK):
        xq[j] = xq[j + _GX_CHUNK]
        yq[j] = yq[j + _GX_CHUNK]

cdef inline void _gx_fwd64_flush_mid(_GxDefer64* q, int n) noexcept nogil:
    """The first 32 middle lanes, results stored for the first n."""
    cdef double r[_GX_CHUNK]
    cdef int j
    for j in range(_GX_CHUNK):
        r[j] = _gx_fwd64_far_normal(q.xm[j], _gx_T64m(fabs(q.xm[j]) - 2.5), _gx_exp_half_sq_normal(q.xm[j]))
    for j in range(n):
        q.ym[j][0] = r[j]

cdef inline void _gx_fwd64_flush_tail(_GxDefer64* q, int n) noexcept nogil:
    cdef double r[_GX_CHUNK]
    cdef int j
    if _gx_far_mask64(q.xt, 37.0) == 0:           # nearly always: the unscaled exp suffices
        for j in range(_GX_CHUNK):
            r[j] = _gx_fwd64_far_normal(q.xt[j], _gx_T64t_of(q.xt[j]), _gx_exp_half_sq_normal(q.xt[j]))
    else:
        for j in range(_GX_CHUNK):
            r[j] = _gx_fwd64_far(q.xt[j], _gx_T64t_of(q.xt[j]), _gx_exp_half_sq(q.xt[j]))
    for j in range(n):
        q.yt[j][0] = r[j]

cdef inline void _gx_grad64_flush_mid(_GxDefer64* q, int n) noexcept nogil:
    cdef double g[_GX_CHUNK]
    cdef int j
    for j in range(_GX_CHUNK):
        g[j] = _gx_grad64_far_normal(q.xm[j], _gx_D64m(fabs(q.xm[j]) - 2.5), _gx_exp_half_sq_normal(q.xm[j]))
    for j in range(n):
        q.ym[j][0] = q.dm[j] * g[j]

cdef inline void _gx_grad64_flush_tail(_GxDefer64* q, int n) noexcept nogil:
    cdef double g[_GX_CHUNK]
    cdef int j
    if _gx_far_mask64(q.xt, 37.0) == 0:
        for j in range(_GX_CHUNK):
            g[j] = _gx_grad64_far_normal(q.xt[j], _gx_D64t_of(q.xt[j]), _gx_exp_half_sq_normal(q.xt[j]))
    else:
        for j in range(_GX_CHUNK):
            g[j] = _gx_grad64_far(q.xt[j], _gx_D64t_of(q.xt[j]), _gx_exp_half_sq(q.xt[j]))
    for j in range(n):
        q.yt[j][0] = q.dt[j] * g[j]

cdef void _gx_fwd64_many(_GxDefer64* q, const double* x, double* y, unsigned int mask, bint tail) noexcept nogil:
    """Forward, many lanes of one piece (AVX-512): compressed, then a full batch computed and the lanes past
    it moved to the front.  Out of line: inlined, it made the chunks 6% slower at sigma = 1."""
    if tail:
        q.kt = fg_queue64(q.xt, q.yt, q.kt, x, y, mask)
        if q.kt >= _GX_CHUNK:
            _gx_fwd64_flush_tail(q, _GX_CHUNK)
            _gx_shift64(q.xt, q.yt)
            q.kt -= _GX_CHUNK
    else:
        q.km = fg_queue64(q.xm, q.ym, q.km, x, y, mask)
        if q.km >= _GX_CHUNK:
            _gx_fwd64_flush_mid(q, _GX_CHUNK)
            _gx_shift64(q.xm, q.ym)
            q.km -= _GX_CHUNK

cdef inline void _gx_defer64(_GxDefer64* q, const double* x, const double* d, double* y, unsigned int mid,
                             unsigned int tail, bint grad) noexcept nogil:
    """Queue lanes (bit masks) of the middle and the tail piece, computing each full batch of 32: one lane at a
    time, a batch computed when the queue holds 32 exactly, or many forward lanes at once (_gx_fwd64_many: a
    loop over them mispredicts its exit in most chunks).  The counts live in locals: through q, every store
    would reload them."""
    cdef int j, k
    if not grad and FG_QUEUE64_VEC and fg_popcount32(mid) >= _GX_QUEUE64_VEC_MIN:
        _gx_fwd64_many(q, x, y, mid, False)
    else:
        k = q.km
        while mid:
            j = fg_ctz32(mid)
            q.xm[k] = x[j]
            if grad:
                q.dm[k] = d[j]
            q.ym[k] = y + j
            k += 1
            if k == _GX_CHUNK:
                if grad:
                    _gx_grad64_flush_mid(q, _GX_CHUNK)
                else:
                    _gx_fwd64_flush_mid(q, _GX_CHUNK)
                k = 0
            mid &= mid - 1
        q.km = k
    if not grad and FG_QUEUE64_VEC and fg_popcount32(tail) >= _GX_QUEUE64_VEC_MIN:
        _gx_fwd64_many(q, x, y, tail, True)
    else:
        k = q.kt
        while tail:
            j = fg_ctz32(tail)
            q.xt[k] = x[j]
            if grad:
                q.dt[k] = d[j]
            q.yt[k] = y + j
            k += 1
            if k == _GX_CHUNK:
                if grad:
                    _gx_grad64_flush_tail(q, _GX_CHUNK)
                else:
                    _gx_fwd64_flush_tail(q, _GX_CHUNK)
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
        _gx_pad64(q.xm, q.dm, q.km, 2.0)
        _gx_fwd64_flush_mid(q, q.km)
    if q.kt:
        _gx_pad64(q.xt, q.dt, q.kt, 5.0)
        _gx_fwd64_flush_tail(q, q.kt)

cdef inline void _gx_grad64_finish(_GxDefer64* q) noexcept nogil:
    if q.km:
        _gx_pad64(q.xm, q.dm, q.km, 2.0)
        _gx_grad64_flush_mid(q, q.km)
    if q.kt:
        _gx_pad64(q.xt, q.dt, q.kt, 5.0)
        _gx_grad64_flush_tail(q, q.kt)

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
