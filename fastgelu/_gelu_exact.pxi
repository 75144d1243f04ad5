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
#   branch-free and vectorized.  float64 queues every input beyond the central piece by piece
#   (_gelu_exact64.pxi).  The float32 polynomials are evaluated as E(s^2) + s*O(s^2): two chains half
#   as deep as Horner's (the single chain left the FMA units waiting on latency); the float64 ones take their
#   first three terms by Horner around that split of the rest (tools/fit_exact.py, LEAD64).
# * In place (y == x or y == dy) goes through a local copy, 256 inputs at a time, so gcc never needs a
#   runtime alias check (which sends exactly-aliased calls to its scalar fallback).
# Coefficients: tools/fit_exact.py (weighted minimax against mpmath; rounding to double is part of the fit).
#
# float32 kernels (AVX-512: 16 lanes; AVX2: 8; NEON: 4, with AVX2's 8-entry tables and bits), in float32
# arithmetic: src/fg_gelu_f32.h, on the primitives of src/fg_simd.h.
# The central form: the exact forward and gradient, and the tanh form's forward (src/fg_xsig_f32.h).
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
#   ulp), so only x < -R takes the tail (R = 3.5: 2.05 ulp at the steep end).  The tanh form likewise: 7
#   intervals to R = 3.3 and the slot to RP = 5.25, degree 7, L_i = i*H.  The gradient (R = 4.0, degree 7)
#   keeps 8 intervals and queues |x| > R: its last slot needed a degree more (8 to RP = 6.0), and with it one
#   permute more per vector, which cost 9-11% at randn sigma = 1 on Zen 3 (for 5-10% at sigma = 3, 25% at
#   U(-8, 8)).  Uneven intervals gain little
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

cdef enum:
    _GX_CHUNK = 32                              # inputs per dispatch decision (a bit of a 32-bit mask)
    _GX_TILE = 256                              # in-place copy unit (32 at a time was slower than out of
                                                # place; 256 at a time is not)

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
        return grad_times64(dy, _gx_grad64(x), x)



cdef enum:
    # float32 in the baseline build (no FMA; the AVX2 and AVX-512 builds run the float32 kernels above): a
    # chunk with at most this many inputs beyond |x| = 3 runs the central loop and defers those lanes
    # (_GxDefer); more go to the vector full path.  randn data: 8% of chunks hold such inputs, nearly always
    # one or two; at sigma = 3, ~10 of 32.  16 was faster than 8 at sigma = 3 and the same at sigma = 1; a
    # flush through the tail piece alone was faster still at 256K but slowed small in-place calls (gcc's code
    # for the tile loop changed), so the flush keeps the full path (docs/performance.md has the figures).
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

include "_gelu_exact64.pxi"

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
