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
# float32 in the AVX2 and AVX-512 builds (GX_F32_SIMD): the GS_F kernels below, float32 arithmetic on full
#   vectors for the forward and the gradient. z = |w| log2(e) as a float pair (constants as hi + lo, x^2 and
#   products split by FMA: exp's argument must be right to ~2^-26 absolute up to |w| ~ 104), 2^-z = 2^-m 2^f with
#   a degree-6 polynomial, and every quotient by 1 + T or (1 + T)^2 corrected through its FMA remainder (so the
#   reciprocal may be vrcp14ps/vrcpps: no division), leaving T's error (~0.7 ulp) and one rounding. All
#   inputs: forward 1.598 ulp (tanh), 1.639 (sigmoid); gradient 1.652, 1.651 (AVX-512 and AVX2).
# float32 otherwise: the baseline build (no FMA) computes both in double; an FMA build made with
#   FASTGELU_F32_FWD=0 runs the forward as scalar float32 code (_xsig32: the same method, auto-vectorized,
#   with a division) and the gradient in double.  The double evaluation: w in plain double (rel. error ~2^-51, and |w| < 2^7 where results are nonzero, so exp's
#   argument is off by < 2^-44 absolute), exp_fast (2^-27.7): total < 0.6 ulp.
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

from libc.math cimport fabs, fabsf

cdef extern from *:
    # double-double constants (tools/fit_fp.py); C macros so they fold into the vector code
    """
    #define FG_C2_HI 1.5957691216057308         /* 2*sqrt(2/pi) */
    #define FG_C2_LO (-9.96930880911092e-17)
    #define FG_A_HI 0.044715
    #define FG_A_LO 2.1960211427085595e-18
    #define FG_A3 0.134145                      /* 3*0.044715 = FG_A3 + FG_A3_LO */
    #define FG_A3_LO 1.3526957332032908e-17
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
    const double _A3_LO "FG_A3_LO"
    const double _K_HI "FG_K_HI"
    const double _K_LO "FG_K_LO"
    const double _S "FG_S"
    const double _INV_2S "FG_INV_2S"

cdef extern from *:
    # float32 forward: 2^-z with z = |w| log2(e) formed in double, the rest in float32 (tools/fit_fp.py style
    # fit: 2^f = 1 + f*Q(f) on |f| <= 1/2, relative error 2^-28.5 with these float coefficients)
    """
    /* as float pairs hi + lo (2^-49 relative): 2*sqrt(2/pi)*log2(e), that times 0.044715, 1.702*log2(e) */
    #define FG_K_TANH_HI 2.302208185195923f
    #define FG_K_TANH_LO 1.2948402350332344e-08f
    #define FG_KA_TANH_HI 0.10294324159622192f
    #define FG_KA_TANH_LO (-2.016198541454628e-09f)
    #define FG_K_SIG_HI 2.4554669857025146f
    #define FG_K_SIG_LO (-2.6109498563187117e-08f)
    #define FG_Z_MAX 180.0f                  /* 2^-z*2^64 stays a normal float; results there round to 0 */
    #define FG_SHIFTER_F 12582912.0f         /* 1.5*2^23: adding it rounds a float to an integer */
    #define FG_Q0 0.6931471824645996f
    #define FG_Q1 0.24022650718688965f
    #define FG_Q2 0.055504102259874344f
    #define FG_Q3 0.00961803738027811f
    #define FG_Q4 0.001333407824859023f
    #define FG_Q5 0.0001546691928524524f
    #define FG_Q6 1.516626070952043e-05f
    #define FG_ONE_F 1.0f
    #define FG_TWOM64_F 5.421010862427522e-20f
    """
    const float _K_TANH_HI "FG_K_TANH_HI"
    const float _K_TANH_LO "FG_K_TANH_LO"
    const float _KA_TANH_HI "FG_KA_TANH_HI"
    const float _KA_TANH_LO "FG_KA_TANH_LO"
    const float _K_SIG_HI "FG_K_SIG_HI"
    const float _K_SIG_LO "FG_K_SIG_LO"
    const float _Z_MAX "FG_Z_MAX"
    const float _SHIFTER_F "FG_SHIFTER_F"
    const float _Q0 "FG_Q0"
    const float _Q1 "FG_Q1"
    const float _Q2 "FG_Q2"
    const float _Q3 "FG_Q3"
    const float _Q4 "FG_Q4"
    const float _Q5 "FG_Q5"
    const float _Q6 "FG_Q6"
    const float _ONE_F "FG_ONE_F"
    const float _TWOM64_F "FG_TWOM64_F"

cdef extern from *:
    # float32 tanh and sigmoid forms, forward and gradient, in float32 arithmetic on full vectors (the builds
    # that have the exact form's float32 kernels: GX_F32_SIMD; the GX_F_* vector macros are theirs).
    # th = 1: tanh form, th = 0: sigmoid form; the functions are inlined, so th is a compile-time constant.
    """
    #if GX_F32_SIMD
    #define GS_F_P1_HI 1.5957691669464111f      /* tanh: |x| w'(|x|) = x (P1 + P3 x^2), P1 = 2 sqrt(2/pi) */
    #define GS_F_P1_LO (-4.534068054340423e-08f)
    #define GS_F_P3_HI 0.21406444907188416f     /* 3 * 0.044715 * P1 */
    #define GS_F_P3_LO (-2.540834209696641e-10f)
    #define GS_F_KS_HI 1.7020000219345093f      /* sigmoid: |x| w' = 1.702 |x| */
    #define GS_F_KS_LO (-2.1934509319976314e-08f)
    #define GS_F_SC 0x1p100f                    /* T is carried as Tp = T*2^100: normal (>= 2^-80) up to Z_MAX,
                                                   and so are the products and remainders formed from it */
    #define GS_F_ISC 0x1p-100f

    /* z = |w| log2(e) as zh + zl (~2^-45 relative; exp's argument must be right to ~2^-26 absolute up to
       z = 180), with a^2 = s + sl exactly */
    static inline __attribute__((always_inline)) void gs_f_z(gx_fv a, const int th, gx_fv* zh, gx_fv* zl,
                                                             gx_fv* s, gx_fv* sl) {
        if (th) {
            const gx_fv kh = GX_F_SET1(FG_K_TANH_HI), kah = GX_F_SET1(FG_KA_TANH_HI);
            *s = GX_F_MUL(a, a);
            *sl = GX_F_FMS(a, a, *s);
            gx_fv m = GX_F_MUL(kah, *s);        /* K A a^2 = m + ml */
            gx_fv ml = GX_F_ADD(GX_F_FMS(kah, *s, m),
                                GX_F_FMA(kah, *sl, GX_F_MUL(GX_F_SET1(FG_KA_TANH_LO), *s)));
            gx_fv t = GX_F_ADD(kh, m);          /* K + K A a^2 = t + tl (two-sum: m may exceed K) */
            gx_fv bb = GX_F_SUB(t, kh);
            gx_fv tl = GX_F_ADD(GX_F_ADD(GX_F_SUB(kh, GX_F_SUB(t, bb)), GX_F_SUB(m, bb)),
                                GX_F_ADD(ml, GX_F_SET1(FG_K_TANH_LO)));
            *zh = GX_F_MUL(a, t);
            *zl = GX_F_FMA(a, tl, GX_F_FMS(a, t, *zh));
        } else {
            const gx_fv k = GX_F_SET1(FG_K_SIG_HI);
            *zh = GX_F_MUL(k, a);
            *zl = GX_F_FMA(GX_F_SET1(FG_K_SIG_LO), a, GX_F_FMS(k, a, *zh));
        }
    }

    /* Tp = T*2^100 = 2^(100 - z), z clamped to Z_MAX; and T = max(T, 2^-100), exact down to there and normal
       (below, T only enters 1 + T, where it is far below the ulp, and x >= 0's Q, which is negligible there) */
    static inline __attribute__((always_inline)) gx_fv gs_f_exp2(gx_fv zh, gx_fv zl, gx_fv* T) {
        const gx_fv sh = GX_F_SET1(FG_SHIFTER_F);
        gx_fv zc = GX_F_MIN(GX_F_SET1(FG_Z_MAX), zh);
        gx_fv t = GX_F_SUB(sh, zc);                 /* SHIFTER - round(z): an integer */
        gx_fv mf = GX_F_SUB(sh, t);                 /* round(z), exact */
        gx_fv f = GX_F_SUB(GX_F_SUB(mf, zc), zl);   /* round(z) - z in [-1/2, 1/2]; the first difference exact */
        /* the exact form's degree-6 Q (_gelu_exact.pxi): as accurate in float as FG_Q's degree 7 */
        gx_fv c = GX_F_FMA(gx_f_Q1(f), f, GX_F_SET1(GX_F_Q0));
        gx_fv p = GX_F_FMA(c, f, GX_F_SET1(1.0f));  /* 2^f */
    #if defined(__AVX512F__)
        gx_fv Tp = _mm512_scalef_ps(p, GX_F_SUB(GX_F_SET1(100.0f), mf));
    #else
        gx_fv Tp = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), _mm256_slli_epi32(
            _mm256_add_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(100 - 0x4B400000)), 23)));
    #endif
        *T = GX_F_MUL(GX_F_MAX(Tp, GX_F_SET1(1.0f)), GX_F_SET1(GS_F_ISC));
        return Tp;
    }

    /* 1/d to ~2^-14 (AVX-512) or ~2^-23 (AVX2: one Newton step): only ever used with a remainder correction,
       whose error is the square of this one (a division cost ~25% of the loop) */
    static inline __attribute__((always_inline)) gx_fv gs_f_rcp(gx_fv d) {
    #if defined(__AVX512F__)
        return _mm512_rcp14_ps(d);
    #else
        gx_fv r = _mm256_rcp_ps(d);
        return GX_F_MUL(r, GX_F_FNMA(d, r, GX_F_SET1(2.0f)));
    #endif
    }

    #if defined(__AVX512F__)
    typedef __mmask16 gs_mask;
    #define GS_F_GE0(x) _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ)
    #define GS_F_SEL(m, a, b) _mm512_mask_blend_ps(m, b, a)        /* m ? a : b */
    #else
    typedef gx_fv gs_mask;
    #define GS_F_GE0(x) _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ)
    #define GS_F_SEL(m, a, b) _mm256_blendv_ps(b, a, m)
    #endif

    /* x sigma(w): x >= 0: x/(1 + T); x < 0: -|x| T/(1 + T), T = exp(-|w|).  Numerator and 1 + T are exact
       float pairs and the quotient is corrected through its FMA remainder, so the error is T's plus one
       rounding.  |x| <= TINY: x/2 rounded (gx_f_tiny: x sigma(w) = x/2 (1 + O(x)), as for the exact form) */
    static inline __attribute__((always_inline)) gx_fv gs_f_xsig(gx_fv x, const int th) {
        const gx_fv L = GX_F_SET1(th ? 21.0f : 400.0f), one = GX_F_SET1(1.0f);
        gx_fv a = GX_F_MIN(L, GX_F_ABS(x));                  /* NaN stays */
    #if defined(__AVX512F__)
        __mmask16 tiny = _mm512_cmp_ps_mask(a, GX_F_SET1(GX_F_TINY), _CMP_LE_OQ);
        if (__builtin_expect(tiny == 0xffff, 0))
            return gx_f_tiny(x);
    #else
        gx_fv tinyv = _mm256_cmp_ps(a, GX_F_SET1(GX_F_TINY), _CMP_LE_OQ);
        int tiny = _mm256_movemask_ps(tinyv);
        if (__builtin_expect(tiny == 0xff, 0))
            return gx_f_tiny(x);
    #endif
        /* |x| not clamped below TINY: the tiny lanes' results are replaced, and a subnormal product (an assist)
           only occurs for 0 < |x| < ~1e-19 beside normal lanes in one vector; the clamp cost 2-5% */
        gx_fv zh, zl, s, sl, T;
        gs_f_z(a, th, &zh, &zl, &s, &sl);
        gx_fv Tp = gs_f_exp2(zh, zl, &T);
        gx_fv dh = GX_F_ADD(T, one);
        gx_fv dl = GX_F_ADD(GX_F_SUB(one, dh), T);          /* 1 + T = dh + dl exactly */
        gs_mask pos = GS_F_GE0(x);
        gx_fv Tn = GS_F_SEL(pos, one, Tp);
        gx_fv nh = GX_F_MUL(a, Tn);                          /* x >= 0: |x|;  x < 0: |x| T 2^100 = nh + nl */
        gx_fv nl = GX_F_FMS(a, Tn, nh);
        gx_fv r = gs_f_rcp(dh);
        gx_fv q = GX_F_MUL(nh, r);
        gx_fv e = GX_F_ADD(GX_F_FNMA(q, dh, nh), nl);       /* nh + nl - q (dh + dl), the first part exact */
        e = GX_F_FNMA(q, dl, e);
        gx_fv y = GX_F_MUL(GX_F_FMA(e, r, q), GS_F_SEL(pos, one, GX_F_SET1(-GS_F_ISC)));
    #if defined(__AVX512F__)
        y = _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, L, _CMP_GT_OQ), x);    /* beyond L: x */
        if (__builtin_expect(tiny != 0, 0))
            y = _mm512_mask_mov_ps(y, tiny, gx_f_tiny(x));
    #else
        y = _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, L, _CMP_GT_OQ));
        if (__builtin_expect(tiny != 0, 0))
            y = _mm256_blendv_ps(y, gx_f_tiny(x), tinyv);
    #endif
        return y;
    }

    /* dy (x sigma(w))', (x sigma(w))' = sigma (1 + p (1 - sigma)) with p = |x| w'(|x|) (w' is even):
         x >= 0: 1 + Q,  x < 0: -Q,   Q = T U / D,  U = p - (1 + T),  D = (1 + T)^2.
       Errors are measured in ulps of max(sigma, p sigma (1 - sigma)) = T^[x<0] max(1 + T, p)/D, so U (which
       cancels at the gradient's zero near x = -0.75) is needed to ulps of max(1 + T, p): it is carried as an
       exact pair from p = ph + pl (~2^-40).  For
       x >= 0, Q < 0.2 and the result above 1 (it has twice the ulp of sigma < 1): 1 + Q is rounded once, in
       the FMA with dy.  For x < 0 the corrected quotient times dy is rounded once; when T < 2^-100 it is
       carried times 2^100 and the 2^-100 goes into that last FMA (a subnormal result rounds once; q dy may
       then overflow for |dy| > 2^117: GX_F_GRAD_LOOP recomputes infinite results) */
    static inline __attribute__((always_inline)) gx_fv gs_f_xsig_grad(gx_fv x, gx_fv dy, const int th) {
        const gx_fv L = GX_F_SET1(th ? 21.0f : 400.0f), one = GX_F_SET1(1.0f);
        gx_fv a = GX_F_MAX(GX_F_SET1(GX_F_TINY), GX_F_MIN(L, GX_F_ABS(x)));   /* NaN stays */
        gx_fv zh, zl, s, sl, T;
        gs_f_z(a, th, &zh, &zl, &s, &sl);
        gx_fv Tp = gs_f_exp2(zh, zl, &T);
        gx_fv dh = GX_F_ADD(T, one);
        gx_fv dl = GX_F_ADD(GX_F_SUB(one, dh), T);
        gx_fv ph, pl;
        if (th) {
            /* P1 + P3 a^2 = g + gl (the rounding of g alone cost 2.35 ulp near x = -5.7) */
            const gx_fv p1 = GX_F_SET1(GS_F_P1_HI), p3 = GX_F_SET1(GS_F_P3_HI);
            gx_fv m = GX_F_MUL(p3, s);
            gx_fv ml = GX_F_ADD(GX_F_FMS(p3, s, m), GX_F_FMA(p3, sl, GX_F_FMA(GX_F_SET1(GS_F_P3_LO), s,
                                                                              GX_F_SET1(GS_F_P1_LO))));
            gx_fv g = GX_F_ADD(p1, m);
            gx_fv gb = GX_F_SUB(g, p1);
            gx_fv gl = GX_F_ADD(GX_F_ADD(GX_F_SUB(p1, GX_F_SUB(g, gb)), GX_F_SUB(m, gb)), ml);
            ph = GX_F_MUL(a, g);
            pl = GX_F_FMA(a, gl, GX_F_FMS(a, g, ph));
        } else {
            const gx_fv k = GX_F_SET1(GS_F_KS_HI);
            ph = GX_F_MUL(k, a);
            pl = GX_F_FMA(GX_F_SET1(GS_F_KS_LO), a, GX_F_FMS(k, a, ph));
        }
        gx_fv Uh = GX_F_SUB(ph, dh);                        /* two-sum: ph - dh = Uh + Ul exactly */
        gx_fv bb = GX_F_SUB(Uh, ph);
        gx_fv Ul = GX_F_SUB(GX_F_SUB(ph, GX_F_SUB(Uh, bb)), GX_F_ADD(bb, dh));
        Ul = GX_F_ADD(Ul, GX_F_SUB(pl, dl));
        gs_mask pos = GS_F_GE0(x);
    #if defined(__AVX512F__)
        __mmask16 tb = _mm512_cmp_ps_mask(Tp, one, _CMP_GE_OQ);                     /* T >= 2^-100 */
        gx_fv E = _mm512_mask_blend_ps(pos | tb, Tp, T);
        gx_fv dyn = _mm512_maskz_mov_ps(~pos, dy);          /* x >= 0: 0, no subnormal from the unused part */
        gx_fv sc = _mm512_mask_blend_ps(tb, GX_F_SET1(-GS_F_ISC), GX_F_SET1(-1.0f));
    #else
        gx_fv tb = _mm256_cmp_ps(Tp, one, _CMP_GE_OQ);
        gx_fv E = _mm256_blendv_ps(Tp, T, _mm256_or_ps(pos, tb));
        gx_fv dyn = _mm256_andnot_ps(pos, dy);
        gx_fv sc = _mm256_blendv_ps(GX_F_SET1(-GS_F_ISC), GX_F_SET1(-1.0f), tb);
    #endif
        gx_fv Nh = GX_F_MUL(Uh, E);
        gx_fv Nl = GX_F_FMA(Ul, E, GX_F_FMS(Uh, E, Nh));    /* T U to ~2^-46 */
        gx_fv Dh = GX_F_MUL(dh, dh);
        gx_fv Dl = GX_F_FMA(GX_F_ADD(dh, dh), dl, GX_F_FMS(dh, dh, Dh));
        gx_fv r = gs_f_rcp(Dh);
        gx_fv q = GX_F_MUL(Nh, r);
        gx_fv e = GX_F_ADD(GX_F_FNMA(q, Dh, Nh), Nl);
        e = GX_F_FNMA(q, Dl, e);
        gx_fv er = GX_F_MUL(e, r);                          /* Q = q + er */
        gx_fv yp = GX_F_FMA(GX_F_ADD(q, er), dy, dy);       /* x >= 0: dy + dy Q */
        gx_fv qd = GX_F_MUL(q, dyn);                        /* x < 0: -(q + er) dy, scaled (0 for x >= 0) */
        gx_fv t = GX_F_FMA(er, dyn, GX_F_FMS(q, dyn, qd));
        return GS_F_SEL(pos, yp, GX_F_FMA(qd, sc, GX_F_MUL(t, sc)));
    }

    /* the tanh form for |x| >= R (AVX2's tail lanes): F = a T/(1 + T) with T = exp(-w) <= 2^-10 there, so
       1/(1 + T) = 1 - T (1 - T) to 2^-30: no division.  a Tp = nh + nl exactly, F = nh + (nl - nh T (1 - T))
       rounded once (a rounded 1 - T (1 - T) cost 0.3 ulp) */
    static inline gx_fv gs_f_tanh_tail(gx_fv x) {
        const gx_fv one = GX_F_SET1(1.0f);
        gx_fv a = GX_F_MIN(GX_F_SET1(21.0f), GX_F_ABS(x));
        gx_fv zh, zl, s, sl, T;
        gs_f_z(a, 1, &zh, &zl, &s, &sl);
        gx_fv Tp = gs_f_exp2(zh, zl, &T);
        gx_fv nh = GX_F_MUL(a, Tp);
        gx_fv e = GX_F_FNMA(nh, GX_F_MUL(T, GX_F_SUB(one, T)), GX_F_FMS(a, Tp, nh));
        gx_fv F = GX_F_MUL(GX_F_ADD(nh, e), GX_F_SET1(GS_F_ISC));
        return GX_F_SUB(GX_F_MAX(GX_F_SET1(-0.0f), x), F);
    }

    #define GS_F_XFAR_TANH 11.25f     /* z(11.25) < Z_MAX < z(11.43): beyond, gradients with |dy| > 1 are fixed up */
    #define GS_F_XFAR_SIG 72.0f       /* z(72) < Z_MAX < z(73.3) */
    static void gs_f_tanh_block(const float* x, float* y, ptrdiff_t n) {   /* its central form: _gelu_exact.pxi */
        const float* dy = NULL;
        GX_F_CENTRAL_BLOCK(GX_F_TANH, x, dy, y, n)
    }
    static void gs_f_sig_block(const float* x, float* y, ptrdiff_t n) { GX_F_FWD_LOOP(gs_f_xsig, 0) }
    #define gs_f_grad_k(x, dy, kind) gs_f_xsig_grad(x, dy, kind == 1)
    static void gs_f_tanh_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {
        GX_F_GRAD_LOOP(gs_f_grad_k, 1, GS_F_XFAR_TANH) }
    static void gs_f_sig_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {
        GX_F_GRAD_LOOP(gs_f_grad_k, 2, GS_F_XFAR_SIG) }
    #else
    static void gs_f_tanh_block(const float* x, float* y, ptrdiff_t n) { (void)x; (void)y; (void)n; }
    static void gs_f_sig_block(const float* x, float* y, ptrdiff_t n) { (void)x; (void)y; (void)n; }
    static void gs_f_tanh_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {
        (void)x; (void)dy; (void)y; (void)n; }
    static void gs_f_sig_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {
        (void)x; (void)dy; (void)y; (void)n; }
    #endif
    """
    void gs_f_tanh_block(const float* x, float* y, Py_ssize_t n) noexcept nogil
    void gs_f_sig_block(const float* x, float* y, Py_ssize_t n) noexcept nogil
    void gs_f_tanh_grad_block(const float* x, const float* dy, float* y, Py_ssize_t n) noexcept nogil
    void gs_f_sig_grad_block(const float* x, const float* dy, float* y, Py_ssize_t n) noexcept nogil

cdef inline double _absclamp(double x, double L) noexcept nogil:
    # |x| limited to L; NaN passes (the comparison is false)
    x = fabs(x)
    return sel(x > L, L, x)

cdef inline double _w_d(double x, vtag v) noexcept nogil:
    if vtag is _TanhP:
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

cdef inline dd_t _w_dd(double x, vtag v) noexcept nogil:
    """w(x) as hi + lo, relative error ~2^-100 (0 <= x <= L)."""
    cdef dd_t q
    if vtag is _TanhP:
        return _c2_cubic_dd(x, _A_HI, _A_LO)
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

cdef inline dd_t _p64(double xa, vtag v) noexcept nogil:
    # |x| w'(|x|) as hi + lo. In the negative tail the gradient is ~ -sigma * p, so p's error is the
    # result's: without FMA, plain double (5 roundings) reached 5 ulp at x = -6.825, so p is carried in
    # double-double there; with FMA plain double keeps 4 ulp, and double-double cost 5-12% of the speed.
    cdef dd_t q
    if FG_HAVE_FMA:
        if vtag is _TanhP:
            q.hi = _C2_HI * fg_fma(_A3 * xa * xa, xa, xa)
        else:
            q.hi = _K_HI * xa
        q.lo = 0.0
        return q
    if vtag is _TanhP:                         # C2 x (1 + 3a x^2)
        return _c2_cubic_dd(xa, _A3, _A3_LO)
    return _w_dd(xa, v)                        # sigmoid: x w'(x) = 1.702 x = w(x)

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
    return fg_fma(-y1, de * s0, y1) * sel(pos, 1.0, _INV_2S)

ctypedef struct ff_t:
    float hi
    float lo

cdef inline ff_t _z(float xa, vtag v) noexcept nogil:
    """|w| log2(e) for 0 <= |x| <= L as hi + lo, ~2^-45 relative: exp's argument needs ~2^-26 absolute up to 180."""
    cdef ff_t z
    cdef float s, sl, m, ml, t, bb, tl
    if vtag is _TanhP:
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

cdef inline float _xsig32(float x, vtag v) noexcept nogil:
    """float32 forward in float32 arithmetic: T = exp(-|w|) = 2^-z as 2^-m * 2^f, carried times 2^64 (normal
    down to the smallest results, which are then rounded once, in the last multiply)."""
    cdef float L = <float>_L32(v)
    cdef float xa = fabsf(x)
    xa = self(xa > L, L, xa)                        # NaN passes
    cdef ff_t z = _z(xa, v)
    z.hi = self(z.hi > _Z_MAX, _Z_MAX, z.hi)        # z.lo is then noise on a result that rounds to 0
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
    cdef float nh = self(pos, xf, -P)
    cdef float nl = self(pos, 0, -Pl)
    cdef float rinv = _ONE_F / dh
    cdef float q = nh * rinv
    cdef float r = fg_fmaf(-q, dh, nh) + nl          # nh + nl - q dh, the first part exact
    r = fg_fmaf(-q, dl, r)
    cdef float y = fg_fmaf(r, rinv, q) * self(pos, _ONE_F, _TWOM64_F)
    # beyond L, and at +-0, the result is x itself
    return self((x > L) | (x == 0), x, y)

cdef inline real _xsig(real x, vtag v) noexcept nogil:
    cdef double xd = x
    cdef double xa, T
    cdef float r
    if real is float and GX_F32_SIMD:               # the bits of the block function
        if vtag is _TanhP:
            gs_f_tanh_block(&x, &r, 1)
        else:
            gs_f_sig_block(&x, &r, 1)
        return r
    elif real is float and FG_HAVE_FMA:
        return _xsig32(x, v)
    elif real is float:
        # without FMA the float32 quotient above cannot be corrected: computed in double
        xa = _absclamp(xd, _L32(v))
        T = exp_fast_unclamped(-_w_d(xa, v))        # exp(-|w|)
        return <real>(sel(xd >= 0.0, xd, -(xa * T)) / (1.0 + T))
    else:
        return _fin64(xd, _mexp64(xd, v), v)

cdef inline real _xsig_grad(real x, real dy, vtag v) noexcept nogil:
    cdef double xd = x
    cdef double xa, T, s, q
    cdef bint pos
    cdef float r
    if real is float and GX_F32_SIMD:               # the bits of the block function
        if vtag is _TanhP:
            gs_f_tanh_grad_block(&x, &dy, &r, 1)
        else:
            gs_f_sig_grad_block(&x, &dy, &r, 1)
        return r
    elif real is float:
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
    if real is float and GX_F32_SIMD:
        if vtag is _TanhP:
            gs_f_tanh_block(x, y, n)
        else:
            gs_f_sig_block(x, y, n)
    elif real is float:
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
    if real is float and GX_F32_SIMD:
        if vtag is _TanhP:
            gs_f_tanh_grad_block(x, dy, y, n)
        else:
            gs_f_sig_grad_block(x, dy, y, n)
    elif real is float:
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
