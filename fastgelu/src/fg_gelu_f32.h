/* The exact form of the float32 kernels: GELU(x) = x*Phi(x) and its gradient dy*(Phi(x) + x*phi(x)), in
   float32 arithmetic on SIMD vectors (fg_simd.h: AVX-512, AVX2; NEON with AVX2's 8-entry tables and bits).
   Within 2 ULP over all float32 inputs; the measured maxima of each build, where they fall and at which
   commit: docs/accuracy.md (tools/sweep_f32.py sweeps all 2^32 inputs).

   Algorithm, with a = |x|: GELU = max(-0, x) - F and GELU' = 1 - G (x >= 0) or G (x < 0), F = a*Phi(-a),
   G = Phi(-a) - a*phi(a): no cancellation (F <= a/2, |G| <= 1/2); for x < 0 the result needs relative
   accuracy, so Phi(-a) decays inside exp(-a^2/2) with its argument formed exactly.
   - |x| up to R (and x > R where the table reaches or holds a positive slot): F and G from per-interval
     polynomials picked per lane by a register permute, no exp (fg_f32_central.h; the tables
     fg_f_gelu_central and fg_f_gelu_grad_central);
   - beyond, this header, with a = min(|x|, AMAX):
     forward   F = exp(-a^2/2) (C - r(a^2)), C = 1/sqrt(2 pi) rounded, r = C - a m(a)/sqrt(2 pi) (m: Mills'
               ratio) rational, fitted over the tails' range (fg_f32_tables.h): r is a small part of C
               there, so the roundings sit in the small part.  No table, no permute.
     gradient  G = exp(-a^2/2) D(a) (the exp form), D on intervals of a picked by bits(a + 1) (FG_F_CN/4
               per octave of a + 1), its coefficients per lane by a permute (the table fg_f_gelu_grad_exp).
               D = H + v, v = C0 + u*(C1 + ...), u = a - L exact, with a float lead H, so float rounding
               sits in the small part v; E*D = 2^mn (H + (v + q*(H + v))), scaled last (scalef; else
               2^(mn+64), then 2^-64) so that a subnormal result rounds once.  The queue, not this formula,
               is most of a tail lane's cost (docs/design/kernels.md).
     Those lanes are queued per chunk and redone (fg_f32_drive.h); exp(-a^2/2) from an exact a^2:
     fg_f32_common.h;
   - |x| <= 2^-30: x/2 correctly rounded by integer arithmetic (fg_f_tiny), the gradient 1/2;
   - gradient lanes a large dy could make wrong: recomputed in double (fg_f32_gradfix.h; the formula,
     fg_gelu_grad_double, here).
   A lane's result depends on its x (and dy) alone, whatever path it takes.
   Coefficients: tools/fit_gelu_f32.py writes fg_f32_tables.h. */
#ifndef FG_GELU_F32_H
#define FG_GELU_F32_H
#include "fg_f32_common.h"
#if FG_F32_SIMD
#include <math.h>

#define FG_F_AMAX 14.99f       /* |x| clamp: a*Phi(-a) rounds to 0 from ~14.2 on; inf makes no NaN */
#define FG_F_BIG 12.5f       /* |x| up to this: exp(-a^2/2) * P is normal (AVX2 scales it in one add) */

/* G = exp(-a^2/2) D(a) (the gradient's exp form, its table fg_f_gelu_grad_exp): a = min(|x|, AMAX) (NaN stays), evaluated at
   ac = max(TINY, a) */
static inline __attribute__((always_inline)) fg_fv fg_f_expD(fg_fv a, fg_fv ac, const int normal,
                                                             fg_fv dy, fg_fv* Fdy) {
    const fg_f_exp_table* t = &fg_f_gelu_grad_exp;
    /* the index needs no lower clamp (a + 1 = 1 for tiny a) */
    fg_iv idx = FG_F_SRLI(FG_F_CASTI(FG_F_ADD(a, FG_F_SET1(1.0f))), t->shift);
    fg_fv L = FG_F_TAB(t->L);
    fg_fv u = FG_F_SUB(ac, L);                           /* exact (Sterbenz; L = 0 on the first interval) */
    fg_fv b, mn;
    fg_fv q = fg_f_exp_red(ac, &b, &mn, !FG_F_TAB32);    /* the 32-entry D holds 2^(a^2 KL) */
    /* D(a) = H + v, v = C0 + u*(C1 + ...) */
    fg_fv v = FG_F_TAB(t->c[t->deg + 1]);
    for (int k = t->deg; k >= 1; k--)
        v = FG_F_FMA(v, u, FG_F_TAB(t->c[k]));
    fg_fv H = FG_F_TAB(t->c[0]);
    /* E*D = 2^mn (1 + q)(H + v) = 2^mn (H + (v + q*D)): the roundings sit in the small part */
    fg_fv S = FG_F_ADD(H, FG_F_FMA(q, FG_F_ADD(H, v), v));
    /* times 2^mn, exact while normal, a subnormal rounded once (a*Phi(-a) is subnormal for a in ~[13.2,
       14.2]).  Fdy (if asked for) = F*dy with dy applied before the scaling: a subnormal F times a large dy
       would carry the subnormal's absolute rounding error into a normal result */
#if FG_F_HAS_SCALEF
    (void)normal;       /* scalef costs one operation whatever the scale */
    (void)b;
    if (Fdy)            /* S dy may overflow for |dy| > ~5e37 where the result does not: fg_f_grad_fix */
        *Fdy = FG_F_SCALEF(FG_F_MUL(S, dy), mn);
    return FG_F_SCALEF(S, mn);
#else
    (void)mn;
    if (normal) {       /* the caller knows a <= FG_F_BIG */
        fg_fv F = fg_f_scale_normal(S, b);
        if (Fdy)
            *Fdy = FG_F_MUL(F, dy);
        return F;
    }
    fg_fv P = FG_F_MUL(S, fg_f_scale64(b));                  /* normal: exact */
    if (Fdy) {          /* P dy may overflow for |dy| > ~2^61 where the result does not (fg_f_grad_fix
                           recomputes it in double), so lanes with a <= BIG take the product of the path
                           above: a lane's bits must not depend on its neighbours */
        fg_fv Fn = fg_f_scale_normal(S, b);
        *Fdy = FG_F_SEL(FG_F_LE(a, FG_F_SET1(FG_F_BIG)), FG_F_MUL(Fn, dy),
                        FG_F_MUL(FG_F_MUL(P, dy), FG_F_SET1(0x1p-64f)));
    }
    return FG_F_MUL(P, FG_F_SET1(0x1p-64f));
#endif
}

/* min(|x|, AMAX).  x = NaN: NaN, or AMAX (FG_F_ABSMIN of AVX-512); the forward's max(-0, x) passes the NaN
   on, and the gradient loop finds it (fg_f_suspect) and sets NaN */
static inline __attribute__((always_inline)) fg_fv fg_f_absmin(fg_fv x) {
    return FG_F_ABSMIN(x, FG_F_AMAX);
}

/* GELU(x) for |x| >= R (x NaN: NaN; the tail lanes): a*Phi(-a) = exp(-a^2/2) (C - r), C + (q (C - r) - r)
   keeping the roundings in the small part (exp as fg_f_expD), and x - F (x >= 0) or -F one rounding: AVX2's
   in the FMA that also takes the subnormal's scaling.  No table: the exp form it replaced spent a third of
   its operations on permutes (docs/design/kernels.md) */
static inline __attribute__((always_inline)) fg_fv fg_f_gelu_tail(fg_fv x) {
    const fg_fv c = FG_F_SET1(FG_F_RC);
    fg_fv a = FG_F_MIN(FG_F_SET1(FG_F_AMAX), FG_F_ABS(x)), b, mn;
    fg_fv q = fg_f_exp_red(a, &b, &mn, 1);
    fg_fv s = FG_F_MUL(a, a);                      /* the same product as inside: one instruction */
    fg_fv num = FG_F_FMA(FG_F_FMA(FG_F_SET1(FG_F_RN2), s, FG_F_SET1(FG_F_RN1)), s, FG_F_SET1(FG_F_RN0));
    fg_fv den = FG_F_FMA(FG_F_FMA(FG_F_FMA(FG_F_SET1(FG_F_RD3), s, FG_F_SET1(FG_F_RD2)), s,
                                  FG_F_SET1(FG_F_RD1)), s, FG_F_SET1(1.0f));
    fg_fv r = FG_F_DIV(num, den);
    fg_fv S = FG_F_ADD(c, FG_F_FMS(q, FG_F_SUB(c, r), r));
    fg_fv xp = FG_F_MAX(FG_F_SET1(-0.0f), x);
#if FG_F_HAS_SCALEF
    (void)b;
    return FG_F_SUB(xp, FG_F_SCALEF(S, mn));
#else
    (void)mn;
    return FG_F_FMA(FG_F_MUL(S, fg_f_scale64(b)), FG_F_SET1(-0x1p-64f), xp);
#endif
}

/* dy * GELU'(x), GELU' = 1 - G for x >= 0 and G for x < 0, G = Phi(-a) - a*phi(a) = exp(-a^2/2) D(a).
   |x| < TINY needs no fix-up: GELU' rounds to 1/2 there, as at TINY. */
static inline __attribute__((always_inline)) fg_fv fg_f_gelu_grad(fg_fv x, fg_fv dy) {
    fg_fv a = fg_f_absmin(x);
    fg_fv Gdy, G, ac = FG_F_MAX(FG_F_SET1(FG_F_TINY), a);
#if FG_F_HAS_SCALEF
    G = fg_f_expD(a, ac, 0, dy, &Gdy);
#else
    if (__builtin_expect(!FG_F_ANY(FG_F_NLE(a, FG_F_SET1(FG_F_BIG))), 1))
        G = fg_f_expD(a, ac, 1, dy, &Gdy);
    else
        G = fg_f_expD(a, ac, 0, dy, &Gdy);
#endif
    fg_fv yp = FG_F_FNMA(G, dy, dy);                          /* dy - G*dy, one rounding */
    return FG_F_SEL_NEG(x, Gdy, yp);                          /* -0.0 gives 1/2 either way */
}

/* dy GELU'(x) in double for one lane, x > -inf (fg_f32_gradfix.h): Phi(x) + x phi(x), x clamped at 37, where
   GELU'(x) is still a normal double of the right sign that times any finite float dy rounds to the float
   result of the unclamped value (+-0), while dy = +-inf gives -+inf, the exact product's limit.  Farther
   out GELU' underflows to +-0 in double: inf * 0 would be NaN, and the sum a +0 of the wrong sign. */
static double fg_gelu_grad_double(float xf, float dyf) {
    double x = xf;
    x = x < -37.0 ? -37.0 : (x > 37.0 ? 37.0 : x);
    return (double)dyf * (0.5 * erfc(-x * 0.7071067811865476) + x * exp(-0.5 * x * x) * 0.3989422804014327);
}
#endif
#endif
