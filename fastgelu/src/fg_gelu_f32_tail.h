/* The exact form beyond the central tables (fg_gelu_f32_central.h), in float32 arithmetic; a = min(|x|, AMAX):
     forward   F = exp(-a^2/2) (C - r(a^2)), C = 1/sqrt(2 pi) rounded, r = C - a m(a)/sqrt(2 pi) (m: Mills'
               ratio) rational of degree (2, 3), fitted for a in [3.5, 15]: r/C <= 0.08, so the roundings sit
               in the small part.  No table, no permute.
     gradient  G = exp(-a^2/2) D(a) (the exp form), D on intervals of a picked by bits(a + 1) (N/4 per octave
               of a + 1), its coefficients per lane by a permute: AVX-512 32 intervals, degree 5; AVX2 and
               NEON 8, degree 7.  D = H + v, v = C0 + u*(C1 + ...), u = a - L exact, with a float lead H, so
               float rounding sits in the small part v; E*D = 2^mn (H + (v + q*(H + v))), scaled last
               (scalef; else 2^(mn+64), then 2^-64) so that a subnormal result rounds once.  A rational tail
               for G (C a - (C - r)/a) reached 1.92 ulp and was no faster: the queue, not the tail, is most of
               a gradient tail lane's cost.
   exp(-a^2/2) from an exact a^2: fg_f32_common.h.  The AVX-512 gradient's maximum error is this form's
   (fg_gelu_f32.h: the figures). */
#ifndef FG_GELU_F32_TAIL_H
#define FG_GELU_F32_TAIL_H
#include "fg_f32_common.h"
#if GX_F32_SIMD

#define GX_F_AMAX 14.99f       /* |x| clamp: a*Phi(-a) rounds to 0 from ~14.2 on; inf makes no NaN */
#define GX_F_BIG 12.5f       /* |x| up to this: exp(-a^2/2) * P is normal (AVX2 scales it in one add) */

/* G = exp(-a^2/2) D(a) (the gradient's exp form, table GX_F_D): a = min(|x|, AMAX) (NaN stays), evaluated at
   ac = max(TINY, a) */
static inline __attribute__((always_inline)) gx_fv gx_f_expD(gx_fv a, gx_fv ac, const int normal,
                                                             gx_fv dy, gx_fv* Fdy) {
    const float (*tab)[GX_F_N] = GX_F_D;
    /* the index needs no lower clamp (a + 1 = 1 for tiny a) */
    gx_iv idx = GX_F_SRLI(GX_F_CASTI(GX_F_ADD(a, GX_F_SET1(1.0f))), GX_F_SHIFT);
    gx_fv L = GX_F_TAB(GX_F_L);
    gx_fv u = GX_F_SUB(ac, L);                           /* exact (Sterbenz; L = 0 on the first interval) */
    gx_fv b, mn;
    gx_fv q = gx_f_exp_red(ac, &b, &mn, !GX_F_TAB32);    /* the 32-entry D holds 2^(a^2 KL) */
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
#if GX_F_HAS_SCALEF
    (void)normal;       /* scalef costs one operation whatever the scale */
    (void)b;
    if (Fdy)            /* S dy may overflow for |dy| > ~5e37 where the result does not: gx_f_grad_fix */
        *Fdy = GX_F_SCALEF(GX_F_MUL(S, dy), mn);
    return GX_F_SCALEF(S, mn);
#else
    (void)mn;
    if (normal) {       /* the caller knows a <= GX_F_BIG */
        gx_fv F = gx_f_scale_normal(S, b);
        if (Fdy)
            *Fdy = GX_F_MUL(F, dy);
        return F;
    }
    gx_fv P = GX_F_MUL(S, gx_f_scale64(b));                  /* normal: exact */
    if (Fdy) {          /* P dy may overflow for |dy| > ~2^61 where the result does not (gx_f_grad_fix
                           recomputes it in double), so lanes with a <= BIG take the product of the path
                           above: a lane's bits must not depend on its neighbours */
        gx_fv Fn = gx_f_scale_normal(S, b);
        *Fdy = GX_F_SEL(GX_F_LE(a, GX_F_SET1(GX_F_BIG)), GX_F_MUL(Fn, dy),
                        GX_F_MUL(GX_F_MUL(P, dy), GX_F_SET1(0x1p-64f)));
    }
    return GX_F_MUL(P, GX_F_SET1(0x1p-64f));
#endif
}

/* min(|x|, AMAX).  x = NaN: NaN, or AMAX (GX_F_ABSMIN of AVX-512); the forward's max(-0, x) passes the NaN
   on, and the gradient loop finds it (gx_f_suspect) and sets NaN */
static inline __attribute__((always_inline)) gx_fv gx_f_absmin(gx_fv x) {
    return GX_F_ABSMIN(x, GX_F_AMAX);
}

/* GELU(x) for |x| >= R (x NaN: NaN; the tail lanes): a*Phi(-a) = exp(-a^2/2) (C - r), C + (q (C - r) - r)
   keeping the roundings in the small part (exp as gx_f_expD), and x - F (x >= 0) or -F one rounding: AVX2's
   in the FMA that also takes the subnormal's scaling.  29 vector operations (the exp form's 40 held 10
   permutes) */
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
#if GX_F_HAS_SCALEF
    (void)b;
    return GX_F_SUB(xp, GX_F_SCALEF(S, mn));
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
#if GX_F_HAS_SCALEF
    G = gx_f_expD(a, ac, 0, dy, &Gdy);
#else
    if (__builtin_expect(!GX_F_ANY(GX_F_NLE(a, GX_F_SET1(GX_F_BIG))), 1))
        G = gx_f_expD(a, ac, 1, dy, &Gdy);
    else
        G = gx_f_expD(a, ac, 0, dy, &Gdy);
#endif
    gx_fv yp = GX_F_FNMA(G, dy, dy);                          /* dy - G*dy, one rounding */
    return GX_F_SEL_NEG(x, Gdy, yp);                          /* -0.0 gives 1/2 either way */
}
#endif
#endif
