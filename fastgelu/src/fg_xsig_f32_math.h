/* The tanh and sigmoid forms' vector math (fg_xsig_f32.h: the algorithm and its error): z = |w| log2(e) as a
   float pair, T = 2^-z, x sigma(w), its gradient, and the tanh form's tail.  th = 1: tanh form, th = 0:
   sigmoid form; the functions are inlined, so th is a compile-time constant. */
#ifndef FG_XSIG_F32_MATH_H
#define FG_XSIG_F32_MATH_H
#include "fg_xsig.h"
#include "fg_f32_common.h"
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
    /* the exact form's degree-6 Q (fg_f32_common.h): as accurate in float as FG_Q's degree 7 */
    gx_fv c = GX_F_FMA(gx_f_Q1(f), f, GX_F_SET1(GX_F_Q0));
    gx_fv p = GX_F_FMA(c, f, GX_F_SET1(1.0f));  /* 2^f */
#if GX_F_HAS_SCALEF
    gx_fv Tp = GX_F_SCALEF(p, GX_F_SUB(GX_F_SET1(100.0f), mf));
#else
    gx_fv Tp = GX_F_CASTF(GX_F_ADDI(GX_F_CASTI(p), GX_F_SLLI(GX_F_ADDI(GX_F_CASTI(t), GX_F_SET1I(100 - 0x4B400000)), 23)));
#endif
    *T = GX_F_MUL(GX_F_MAX(Tp, GX_F_SET1(1.0f)), GX_F_SET1(GS_F_ISC));
    return Tp;
}

#define GS_F_GE0(x) GX_F_GE(x, GX_F_SET1(0.0f))

/* x sigma(w): x >= 0: x/(1 + T); x < 0: -|x| T/(1 + T), T = exp(-|w|).  Numerator and 1 + T are exact
   float pairs and the quotient is corrected through its FMA remainder, so the error is T's plus one
   rounding.  |x| <= TINY: x/2 rounded (gx_f_tiny: x sigma(w) = x/2 (1 + O(x)), as for the exact form) */
static inline __attribute__((always_inline)) gx_fv gs_f_xsig(gx_fv x, const int th) {
    const gx_fv L = GX_F_SET1(th ? 21.0f : 400.0f), one = GX_F_SET1(1.0f);
    gx_fv a = GX_F_MIN(L, GX_F_ABS(x));                  /* NaN stays */
    gx_vm tinyv = GX_F_LE(a, GX_F_SET1(GX_F_TINY));
    gx_fm tiny = GX_F_BITS(tinyv);
    if (__builtin_expect(tiny == (gx_fm)((1u << GX_F_W) - 1u), 0))
        return gx_f_tiny(x);
    /* |x| not clamped below TINY: the tiny lanes' results are replaced, and a subnormal product (an assist)
       only occurs for 0 < |x| < ~1e-19 beside normal lanes in one vector; the clamp was slower */
    gx_fv zh, zl, s, sl, T;
    gs_f_z(a, th, &zh, &zl, &s, &sl);
    gx_fv Tp = gs_f_exp2(zh, zl, &T);
    gx_fv dh = GX_F_ADD(T, one);
    gx_fv dl = GX_F_ADD(GX_F_SUB(one, dh), T);          /* 1 + T = dh + dl exactly */
    gx_vm pos = GS_F_GE0(x);
    gx_fv Tn = GX_F_SEL(pos, one, Tp);
    gx_fv nh = GX_F_MUL(a, Tn);                          /* x >= 0: |x|;  x < 0: |x| T 2^100 = nh + nl */
    gx_fv nl = GX_F_FMS(a, Tn, nh);
    gx_fv r = gx_f_rcp(dh);      /* approximate: the remainder correction squares its error (no division) */
    gx_fv q = GX_F_MUL(nh, r);
    gx_fv e = GX_F_ADD(GX_F_FNMA(q, dh, nh), nl);       /* nh + nl - q (dh + dl), the first part exact */
    e = GX_F_FNMA(q, dl, e);
    gx_fv y = GX_F_MUL(GX_F_FMA(e, r, q), GX_F_SEL(pos, one, GX_F_SET1(-GS_F_ISC)));
    y = GX_F_SEL(GX_F_GT(x, L), x, y);                 /* beyond L: x */
    if (__builtin_expect(tiny != 0, 0))
        y = GX_F_SEL(tinyv, gx_f_tiny(x), y);
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
   then overflow for |dy| > 2^117: gx_f_grad_fix recomputes infinite results) */
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
    gx_vm pos = GS_F_GE0(x);
    gx_vm tb = GX_F_GE(Tp, one);                        /* T >= 2^-100 */
    gx_fv E = GX_F_SEL(GX_F_VMOR(pos, tb), T, Tp);
    gx_fv dyn = GX_F_ZERO_IF(pos, dy);                  /* x >= 0: 0, no subnormal from the unused part */
    gx_fv sc = GX_F_SEL(tb, GX_F_SET1(-1.0f), GX_F_SET1(-GS_F_ISC));
    gx_fv Nh = GX_F_MUL(Uh, E);
    gx_fv Nl = GX_F_FMA(Ul, E, GX_F_FMS(Uh, E, Nh));    /* T U to ~2^-46 */
    gx_fv Dh = GX_F_MUL(dh, dh);
    gx_fv Dl = GX_F_FMA(GX_F_ADD(dh, dh), dl, GX_F_FMS(dh, dh, Dh));
    gx_fv r = gx_f_rcp(Dh);
    gx_fv q = GX_F_MUL(Nh, r);
    gx_fv e = GX_F_ADD(GX_F_FNMA(q, Dh, Nh), Nl);
    e = GX_F_FNMA(q, Dl, e);
    gx_fv er = GX_F_MUL(e, r);                          /* Q = q + er */
    gx_fv yp = GX_F_FMA(GX_F_ADD(q, er), dy, dy);       /* x >= 0: dy + dy Q */
    gx_fv qd = GX_F_MUL(q, dyn);                        /* x < 0: -(q + er) dy, scaled (0 for x >= 0) */
    gx_fv t = GX_F_FMA(er, dyn, GX_F_FMS(q, dyn, qd));
    /* q dy underflowed to a zero of the right sign (|result| < half the smallest subnormal): t then holds
       only er dy's sign, and qd sc + t sc of two zeros of opposite signs would be +0 where the result is -0 */
    gx_fv yn = GX_F_SEL(GX_F_NEQ(qd, GX_F_SET1(0.0f)), GX_F_FMA(qd, sc, GX_F_MUL(t, sc)), GX_F_MUL(qd, sc));
    return GX_F_SEL(pos, yp, yn);
}

/* the tanh form for |x| >= R (the central form's tail lanes, fg_f32_drive.h): F = a T/(1 + T) with T = exp(-w) <= 2^-10 there, so
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
#endif
#endif
