/* The tanh and sigmoid forms of the float32 kernels: x*sigma(w(x)) with w = 2 sqrt(2/pi) (x + 0.044715 x^3)
   (the tanh form, 0.5x(1 + tanh(w/2))) or w = 1.702x, forward and gradient, in float32 arithmetic on SIMD
   vectors (fg_simd.h).  Within 2 ULP over all float32 inputs; the measured maxima of each build, where they
   fall and at which commit: docs/accuracy.md (tools/sweep_f32.py).

   Algorithm, with T = exp(-|w|): x sigma(w) = x/(1 + T) for x >= 0 and -|x| T/(1 + T) for x < 0; the gradient
   sigma (1 + x w' (1 - sigma)) = 1 + Q or -Q, Q = T U/(1 + T)^2, U = |x| w'(|x|) - (1 + T): no cancellation,
   no overflow.  z = |w| log2(e) as a float pair (constants as hi + lo, x^2 and the products split by FMA:
   exp's argument must be right to ~2^-26 absolute up to z = 180), 2^-z = 2^-m 2^f with the exact form's Q
   (fg_f32_common.h), and every quotient by 1 + T or (1 + T)^2 corrected through its FMA remainder, so that
   the reciprocal may be an estimate (vrcp14ps, vrcpps, vrecpe: no division): T's error and one rounding.
   The functions run the central form (fg_f32_central.h: tables, no exp) for x >= -R, and the formulas here
   beyond (the tanh forward fg_f_tanh_tail, the sigmoid forward fg_f_xsig, the gradients fg_f_xsig_grad;
   through the queue of fg_f32_drive.h); w is odd, so GELU'(x) + GELU'(-x) = 1 and the gradients' tables
   hold GELU'(-a).  Gradient lanes a large dy could make wrong are recomputed in double (fg_f32_gradfix.h;
   the formula, fg_xsig_grad_double, here).  th = 1: tanh form, th = 0: sigmoid form; the functions are
   inlined, so th is a compile-time constant.  NEON gives the AVX2 build's bits, the gradients' last bit
   aside where their result is below 2^-100 (docs/arm.md). */
#ifndef FG_XSIG_F32_H
#define FG_XSIG_F32_H
#include "fg_xsig.h"
#include "fg_f32_common.h"
#if FG_F32_SIMD
#include <math.h>
#define FG_F_P1_HI 1.5957691669464111f      /* tanh: |x| w'(|x|) = x (P1 + P3 x^2), P1 = 2 sqrt(2/pi) */
#define FG_F_P1_LO (-4.534068054340423e-08f)
#define FG_F_P3_HI 0.21406444907188416f     /* 3 * 0.044715 * P1 */
#define FG_F_P3_LO (-2.540834209696641e-10f)
#define FG_F_KS_HI 1.7020000219345093f      /* sigmoid: |x| w' = 1.702 |x| */
#define FG_F_KS_LO (-2.1934509319976314e-08f)
#define FG_F_ISC 0x1p-100f                  /* T is carried as Tp = T*2^100: normal (>= 2^-80) up to Z_MAX,
                                               and so are the products and remainders formed from it */

/* z = |w| log2(e) as zh + zl (~2^-45 relative; exp's argument must be right to ~2^-26 absolute up to
   z = 180), with a^2 = s + sl exactly */
static inline __attribute__((always_inline)) void fg_f_z(fg_fv a, const int th, fg_fv* zh, fg_fv* zl,
                                                         fg_fv* s, fg_fv* sl) {
    if (th) {
        const fg_fv kh = FG_F_SET1(FG_K_TANH_HI), kah = FG_F_SET1(FG_KA_TANH_HI);
        *s = FG_F_MUL(a, a);
        *sl = FG_F_FMS(a, a, *s);
        fg_fv m = FG_F_MUL(kah, *s);        /* K A a^2 = m + ml */
        fg_fv ml = FG_F_ADD(FG_F_FMS(kah, *s, m),
                            FG_F_FMA(kah, *sl, FG_F_MUL(FG_F_SET1(FG_KA_TANH_LO), *s)));
        fg_fv t = FG_F_ADD(kh, m);          /* K + K A a^2 = t + tl (two-sum: m may exceed K) */
        fg_fv bb = FG_F_SUB(t, kh);
        fg_fv tl = FG_F_ADD(FG_F_ADD(FG_F_SUB(kh, FG_F_SUB(t, bb)), FG_F_SUB(m, bb)),
                            FG_F_ADD(ml, FG_F_SET1(FG_K_TANH_LO)));
        *zh = FG_F_MUL(a, t);
        *zl = FG_F_FMA(a, tl, FG_F_FMS(a, t, *zh));
    } else {
        const fg_fv k = FG_F_SET1(FG_K_SIG_HI);
        *zh = FG_F_MUL(k, a);
        *zl = FG_F_FMA(FG_F_SET1(FG_K_SIG_LO), a, FG_F_FMS(k, a, *zh));
    }
}

/* Tp = T*2^100 = 2^(100 - z), z clamped to Z_MAX; and T = max(T, 2^-100), exact down to there and normal
   (below, T only enters 1 + T, where it is far below the ulp, and x >= 0's Q, which is negligible there) */
static inline __attribute__((always_inline)) fg_fv fg_f_exp2(fg_fv zh, fg_fv zl, fg_fv* T) {
    const fg_fv sh = FG_F_SET1(FG_SHIFTER_F);
    fg_fv zc = FG_F_MIN(FG_F_SET1(FG_Z_MAX), zh);
    fg_fv t = FG_F_SUB(sh, zc);                 /* SHIFTER - round(z): an integer */
    fg_fv mf = FG_F_SUB(sh, t);                 /* round(z), exact */
    fg_fv f = FG_F_SUB(FG_F_SUB(mf, zc), zl);   /* round(z) - z in [-1/2, 1/2]; the first difference exact */
    /* the exact form's degree-6 Q (fg_f32_common.h): as accurate in float as FG_Q's degree 7 */
    fg_fv c = FG_F_FMA(fg_f_Q1(f), f, FG_F_SET1(FG_F_Q0));
    fg_fv p = FG_F_FMA(c, f, FG_F_SET1(1.0f));  /* 2^f */
#if FG_F_HAS_SCALEF
    fg_fv Tp = FG_F_SCALEF(p, FG_F_SUB(FG_F_SET1(100.0f), mf));
#else
    fg_fv Tp = FG_F_CASTF(FG_F_ADDI(FG_F_CASTI(p), FG_F_SLLI(FG_F_ADDI(FG_F_CASTI(t), FG_F_SET1I(100 - 0x4B400000)), 23)));
#endif
    *T = FG_F_MUL(FG_F_MAX(Tp, FG_F_SET1(1.0f)), FG_F_SET1(FG_F_ISC));
    return Tp;
}

#define FG_F_GE0(x) FG_F_GE(x, FG_F_SET1(0.0f))

/* x sigma(w): x >= 0: x/(1 + T); x < 0: -|x| T/(1 + T), T = exp(-|w|).  Numerator and 1 + T are exact
   float pairs and the quotient is corrected through its FMA remainder, so the error is T's plus one
   rounding.  |x| <= TINY: x/2 rounded (fg_f_tiny: x sigma(w) = x/2 (1 + O(x)), as for the exact form) */
static inline __attribute__((always_inline)) fg_fv fg_f_xsig(fg_fv x, const int th) {
    const fg_fv L = FG_F_SET1(th ? 21.0f : 400.0f), one = FG_F_SET1(1.0f);
    fg_fv a = FG_F_MIN(L, FG_F_ABS(x));                  /* NaN stays */
    fg_vm tinyv = FG_F_LE(a, FG_F_SET1(FG_F_TINY));
    fg_fm tiny = FG_F_BITS(tinyv);
    if (__builtin_expect(tiny == (fg_fm)((1u << FG_F_W) - 1u), 0))
        return fg_f_tiny(x);
    /* |x| not clamped below TINY: the tiny lanes' results are replaced, and a subnormal product (an assist)
       only occurs for 0 < |x| < ~1e-19 beside normal lanes in one vector, and the clamp cost every vector
       (docs/design/kernels.md) */
    fg_fv zh, zl, s, sl, T;
    fg_f_z(a, th, &zh, &zl, &s, &sl);
    fg_fv Tp = fg_f_exp2(zh, zl, &T);
    fg_fv dh = FG_F_ADD(T, one);
    fg_fv dl = FG_F_ADD(FG_F_SUB(one, dh), T);          /* 1 + T = dh + dl exactly */
    fg_vm pos = FG_F_GE0(x);
    fg_fv Tn = FG_F_SEL(pos, one, Tp);
    fg_fv nh = FG_F_MUL(a, Tn);                          /* x >= 0: |x|;  x < 0: |x| T 2^100 = nh + nl */
    fg_fv nl = FG_F_FMS(a, Tn, nh);
    fg_fv r = fg_f_rcp(dh);      /* approximate: the remainder correction squares its error (no division) */
    fg_fv q = FG_F_MUL(nh, r);
    fg_fv e = FG_F_ADD(FG_F_FNMA(q, dh, nh), nl);       /* nh + nl - q (dh + dl), the first part exact */
    e = FG_F_FNMA(q, dl, e);
    fg_fv y = FG_F_MUL(FG_F_FMA(e, r, q), FG_F_SEL(pos, one, FG_F_SET1(-FG_F_ISC)));
    y = FG_F_SEL(FG_F_GT(x, L), x, y);                 /* beyond L: x */
    if (__builtin_expect(tiny != 0, 0))
        y = FG_F_SEL(tinyv, fg_f_tiny(x), y);
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
   then overflow for |dy| > 2^117: fg_f_grad_fix recomputes infinite results) */
static inline __attribute__((always_inline)) fg_fv fg_f_xsig_grad(fg_fv x, fg_fv dy, const int th) {
    const fg_fv L = FG_F_SET1(th ? 21.0f : 400.0f), one = FG_F_SET1(1.0f);
    fg_fv a = FG_F_MAX(FG_F_SET1(FG_F_TINY), FG_F_MIN(L, FG_F_ABS(x)));   /* NaN stays */
    fg_fv zh, zl, s, sl, T;
    fg_f_z(a, th, &zh, &zl, &s, &sl);
    fg_fv Tp = fg_f_exp2(zh, zl, &T);
    fg_fv dh = FG_F_ADD(T, one);
    fg_fv dl = FG_F_ADD(FG_F_SUB(one, dh), T);
    fg_fv ph, pl;
    if (th) {
        /* P1 + P3 a^2 = g + gl: g's rounding alone would cost more than the bound (docs/design/kernels.md) */
        const fg_fv p1 = FG_F_SET1(FG_F_P1_HI), p3 = FG_F_SET1(FG_F_P3_HI);
        fg_fv m = FG_F_MUL(p3, s);
        fg_fv ml = FG_F_ADD(FG_F_FMS(p3, s, m), FG_F_FMA(p3, sl, FG_F_FMA(FG_F_SET1(FG_F_P3_LO), s,
                                                                          FG_F_SET1(FG_F_P1_LO))));
        fg_fv g = FG_F_ADD(p1, m);
        fg_fv gb = FG_F_SUB(g, p1);
        fg_fv gl = FG_F_ADD(FG_F_ADD(FG_F_SUB(p1, FG_F_SUB(g, gb)), FG_F_SUB(m, gb)), ml);
        ph = FG_F_MUL(a, g);
        pl = FG_F_FMA(a, gl, FG_F_FMS(a, g, ph));
    } else {
        const fg_fv k = FG_F_SET1(FG_F_KS_HI);
        ph = FG_F_MUL(k, a);
        pl = FG_F_FMA(FG_F_SET1(FG_F_KS_LO), a, FG_F_FMS(k, a, ph));
    }
    fg_fv Uh = FG_F_SUB(ph, dh);                        /* two-sum: ph - dh = Uh + Ul exactly */
    fg_fv bb = FG_F_SUB(Uh, ph);
    fg_fv Ul = FG_F_SUB(FG_F_SUB(ph, FG_F_SUB(Uh, bb)), FG_F_ADD(bb, dh));
    Ul = FG_F_ADD(Ul, FG_F_SUB(pl, dl));
    fg_vm pos = FG_F_GE0(x);
    fg_vm tb = FG_F_GE(Tp, one);                        /* T >= 2^-100 */
    fg_fv E = FG_F_SEL(FG_F_VMOR(pos, tb), T, Tp);
    fg_fv dyn = FG_F_ZERO_IF(pos, dy);                  /* x >= 0: 0, no subnormal from the unused part */
    fg_fv sc = FG_F_SEL(tb, FG_F_SET1(-1.0f), FG_F_SET1(-FG_F_ISC));
    fg_fv Nh = FG_F_MUL(Uh, E);
    fg_fv Nl = FG_F_FMA(Ul, E, FG_F_FMS(Uh, E, Nh));    /* T U to ~2^-46 */
    fg_fv Dh = FG_F_MUL(dh, dh);
    fg_fv Dl = FG_F_FMA(FG_F_ADD(dh, dh), dl, FG_F_FMS(dh, dh, Dh));
    fg_fv r = fg_f_rcp(Dh);
    fg_fv q = FG_F_MUL(Nh, r);
    fg_fv e = FG_F_ADD(FG_F_FNMA(q, Dh, Nh), Nl);
    e = FG_F_FNMA(q, Dl, e);
    fg_fv er = FG_F_MUL(e, r);                          /* Q = q + er */
    fg_fv yp = FG_F_FMA(FG_F_ADD(q, er), dy, dy);       /* x >= 0: dy + dy Q */
    fg_fv qd = FG_F_MUL(q, dyn);                        /* x < 0: -(q + er) dy, scaled (0 for x >= 0) */
    fg_fv t = FG_F_FMA(er, dyn, FG_F_FMS(q, dyn, qd));
    /* q dy underflowed to a zero of the right sign (|result| < half the smallest subnormal): t then holds
       only er dy's sign, and qd sc + t sc of two zeros of opposite signs would be +0 where the result is -0 */
    fg_fv yn = FG_F_SEL(FG_F_NEQ(qd, FG_F_SET1(0.0f)), FG_F_FMA(qd, sc, FG_F_MUL(t, sc)), FG_F_MUL(qd, sc));
    return FG_F_SEL(pos, yp, yn);
}

/* the tanh form for |x| >= R (the central form's tail lanes, fg_f32_drive.h): F = a T/(1 + T) with T = exp(-w) <= 2^-10 there, so
   1/(1 + T) = 1 - T (1 - T) to 2^-30: no division.  a Tp = nh + nl exactly, F = nh + (nl - nh T (1 - T))
   rounded once (a rounded 1 - T (1 - T) costs accuracy: docs/design/kernels.md) */
static inline fg_fv fg_f_tanh_tail(fg_fv x) {
    const fg_fv one = FG_F_SET1(1.0f);
    fg_fv a = FG_F_MIN(FG_F_SET1(21.0f), FG_F_ABS(x));
    fg_fv zh, zl, s, sl, T;
    fg_f_z(a, 1, &zh, &zl, &s, &sl);
    fg_fv Tp = fg_f_exp2(zh, zl, &T);
    fg_fv nh = FG_F_MUL(a, Tp);
    fg_fv e = FG_F_FNMA(nh, FG_F_MUL(T, FG_F_SUB(one, T)), FG_F_FMS(a, Tp, nh));
    fg_fv F = FG_F_MUL(FG_F_ADD(nh, e), FG_F_SET1(FG_F_ISC));
    return FG_F_SUB(FG_F_MAX(FG_F_SET1(-0.0f), x), F);
}

#define FG_F_XFAR_TANH 11.25f     /* z(11.25) < Z_MAX < z(11.43): beyond, gradients with |dy| > 1 are fixed up */
#define FG_F_XFAR_SIG 72.0f       /* z(72) < Z_MAX < z(73.3) */

/* dy GELU'(x) in double for one lane, x > -inf (fg_f32_gradfix.h): sigma (1 + x w' (1 - sigma)) with
   t = exp(-|w|), no overflow, no cancellation in sigma; x clamped at 20 (tanh) or 380 (sigmoid), where
   GELU'(x) is still a normal double of the right sign that times any finite float dy rounds to the float
   result of the unclamped value (+-0), while dy = +-inf gives -+inf, the exact product's limit */
static double fg_xsig_grad_double(float xf, float dyf, const int th) {
    double x = xf, w, t, s, sig, oms;
    double L = th ? 20.0 : 380.0;
    x = x < -L ? -L : (x > L ? L : x);
    double dw = th ? 1.5957691216057308 * (1.0 + 3.0 * 0.044715 * x * x) : 1.702;
    w = th ? 1.5957691216057308 * x * (1.0 + 0.044715 * x * x) : 1.702 * x;
    t = exp(-fabs(w));
    s = 1.0 / (1.0 + t);
    sig = w >= 0 ? s : t * s;
    oms = w >= 0 ? t * s : s;
    return (double)dyf * (sig * (1.0 + x * dw * oms));
}
#endif
#endif
