/* The central form of the float32 kernels: forward and gradient of the exact, tanh and sigmoid forms from
   tables, no exp.  With a = min(|x|, R):
     forward   y = max(-0.0, x) - F,  F = a*Phi(-a)  (the tanh form: F = a*sigma(-w(a)); sigmoid: a*sigma(-1.702a))
     gradient  y = dy - G*dy (x >= 0) or G*dy (x < 0),  G = GELU'(-a):  Phi(-a) - a*phi(a)  (tanh and sigmoid
               forms: sigma(-w) - a*w'*sigma(w)*sigma(-w); w odd, so GELU'(x) + GELU'(-x) = 1 for all three)
   F and G are polynomials C0 + u*(C1 + ...) on intervals of a, u = a - L_i, their coefficients picked per
   lane by a register permute (FG_F_TAB): 32 intervals on AVX-512 (vpermt2ps), 8 on AVX2 and NEON (vpermps,
   vqtbl2q).
   - AVX-512: i = round(a*(K2*a + K)) (two FMAs leave i in the low bits).  The intervals narrow as a grows,
     as F's relative change per unit of a does (~a): even intervals (K2 = 0) needed degree 6 for R = 6;
     these take degree 5 to the same error budget (forward R = 5.75, tanh form 5.25), one permute and one
     FMA fewer for one FMA more; the gradient degree 6 to R = 7.5 (a quarter as many tail lanes at randn
     sigma = 3 as R = 6).  The same R clamps x > R: F(R) is below half an ulp of R, and a*phi(a) below half
     an ulp of 1, so only x < -R leaves the tables.
   - AVX2 and NEON: the forward takes 7 even intervals to R = 3.4 and the last slot for x > R, clamped at
     RP = 5.5 (x - F rounds to x beyond): there y = x - F needs F only to a fraction of ulp(x), absolutely,
     which one degree-7 piece gives (fit error 0.06 ulp), so only x < -R takes the tail (R = 3.5 reached 2.05
     ulp at the steep end).  The tanh form likewise: 7 intervals to R = 3.3 and the slot to RP = 5.25, degree
     7.  Both take L_i = i*H: u = a - i*H by one FMA from the index, a permute fewer.  The gradient: 7
     intervals of degree 7 to R = 3.9 and the slot to RP = 6.0, where 1 - G rounds to 1 (dy - G dy needs G
     to a fraction of ulp(1) there), so only x < -R takes the tail; intervals 2 on expanded at their right
     end (u <= 0: Horner's terms keep G's sign where it decays, tools/fit_gelu_f32.py's re), which R = 3.9
     needs.  Uneven intervals gain little (8 are too few: the first ones may not widen) and cost an FMA.
   - The sigmoid form's F falls only like e^(-1.702a), but sigma's poles at a = +-i pi/1.702 bound every
     interval's width alike: even intervals.  AVX-512: degree 6 to R = 10.25, where the clamp is exact for
     x > 0 (its tail only x < -10.25); AVX2 and NEON: 7 intervals to R = 5.5, degree 8, and the slot to RP =
     10.25 (degree 7 would need intervals of 0.65, and its slot then missed by 3 ulp).  Its gradient's G,
     ~ka e^(-ka), likewise: AVX-512 degree 6 to R = 12.0, beyond which 1 - G rounds to 1 (its tail only x <
     -12); AVX2 and NEON 8 intervals of degree 8 to R = 6.0 (L_i = i*H), |x| > R queued (a slot to 12.0
     missed by 1.6 ulp at degree 8).
   - The tanh form's gradient falls as steeply as its forward: AVX-512 uneven intervals of degree 6 to R =
     5.75, where 1 - G rounds to 1 (degree 5 fitted to 2.6e-7 only); AVX2 and NEON as the exact gradient, 7
     even intervals of degree 7 to R = 3.9, right ends from interval 2, and the slot to RP = 5.75.
   Each L_i is a float at which F (G) is a float to ~1e-4 ulp, so C0 is exact and the only roundings are
   Horner's; where L_i = i*H, C0 = F(L_i) rounded, the fit absorbing that rounding everywhere but at u = 0.
   R ends the tables where F's Gaussian decay (e^-a per unit of a) makes u*(C1 + ...) too large a share of F
   for float Horner.  The lanes beyond go to the tails (fg_gelu_f32_tail.h, fg_xsig_f32_math.h) through the
   queue of fg_f32_drive.h.  The maximum errors of the AVX-512 exact forward and of the AVX2 exact forward
   and gradient and tanh forward and gradient are this form's (fg_gelu_f32.h, fg_xsig_f32.h: the figures);
   the others' are their tails'.  Cost per vector
   (AVX-512): forward 18 vector operations, gradient 21. */
#ifndef FG_GELU_F32_CENTRAL_H
#define FG_GELU_F32_CENTRAL_H
#include "fg_f32_fns.h"
#if FG_F32_SIMD

/* F or G from table t at a = min(|x|, RP) (x NaN: RP or NaN) */
static inline __attribute__((always_inline)) fg_fv fg_f_central(fg_fv x, fg_fv a, const fg_f_table* t) {
    /* a table with a positive slot: a beyond the central intervals (only x > 0 takes them: x < -R is a tail
       lane) takes the last slot, by an index from |x| clamped where it reaches that slot, a clamp beside
       a's own, not after the index's FMA on the lookups' chain (the loops wait on that chain).  Slots come
       with even intervals only (K2 = 0: tools/fit_gelu_f32.py), where that clamp is (CN - 1)/K */
    fg_fv ai = t->slot ? FG_F_ABSMIN(x, (float)(FG_F_CN - 1) / t->K) : a;
    /* round(a*(K2*a + K)) lands in the low bits (MAGIC): the permute reads the low five (AVX2: three) */
    fg_fv k = t->K2 != 0.0f ? FG_F_FMA(ai, FG_F_SET1(t->K2), FG_F_SET1(t->K)) : FG_F_SET1(t->K);
    fg_fv v = FG_F_FMA(ai, k, FG_F_SET1(FG_F_MAGIC));
    fg_iv idx = FG_F_CASTI(v);
    /* L_i = i*H: u = a - i*H by one FMA from the index, exact (i*H has few bits; Sterbenz), where a permute
       of L took a slot of the permutes' pipe; else u = a - L: exact (Sterbenz; L = 0 on the first interval) */
    fg_fv u = t->H != 0.0f ? FG_F_FMA(FG_F_SUB(v, FG_F_SET1(FG_F_MAGIC)), FG_F_SET1(-t->H), a)
                           : FG_F_SUB(a, FG_F_TAB(t->c[0]));
    const int deg = t->deg;
    fg_fv p;
    if (!FG_F_TAB32 && deg >= 7 && deg % 2) {
        /* 8-entry tables (AVX2, NEON), whose loops wait on this chain more than on their ports: C2 + C3 u +
           ... in pairs on u^2 (row k + 1 holds C_k), then C0 + u (C1 + u h) as Horner, where the rounding
           matters: 8 FMAs for 7, faster at degree 7; degree 6, the tanh form's, was not */
        fg_fv u2 = FG_F_MUL(u, u);
        p = FG_F_FMA(FG_F_TAB(t->c[deg + 1]), u, FG_F_TAB(t->c[deg]));
        for (int k = deg - 1; k >= 4; k -= 2)
            p = FG_F_FMA(p, u2, FG_F_FMA(FG_F_TAB(t->c[k]), u, FG_F_TAB(t->c[k - 1])));
        p = FG_F_FMA(p, u, FG_F_TAB(t->c[2]));
        return FG_F_FMA(p, u, FG_F_TAB(t->c[1]));
    }
    p = FG_F_TAB(t->c[deg + 1]);
    for (int k = deg; k >= 1; k--)
        p = FG_F_FMA(p, u, FG_F_TAB(t->c[k]));
    return p;
}

/* the forward fn's y = max(-0, x) - F */
static inline __attribute__((always_inline)) fg_fv fg_f_fwd_F(fg_fv x, fg_fv a, const fg_f_fn fn) {
    fg_fv F = fg_f_central(x, a, fg_f_fns[fn].central);
    return FG_F_SUB(FG_F_MAX(FG_F_SET1(-0.0f), x), F);
}

/* a = min(|x|, RP) of a forward fn (NaN: RP or NaN, as FG_F_ABSMIN); x < -R is a tail lane, its result here
   is replaced */
static inline __attribute__((always_inline)) fg_fv fg_f_fwd_a(fg_fv x, const fg_f_fn fn) {
    return FG_F_ABSMIN(x, fg_f_fns[fn].central->RP);
}
/* the lanes of a with |x| <= TINY */
static inline __attribute__((always_inline)) fg_fm fg_f_tiny_mask(fg_fv a) {
    return FG_F_BITS(FG_F_LE(a, FG_F_SET1(FG_F_TINY)));
}

/* the forward fn for x >= -R, NaN and +inf (a = RP for +inf; NaN: a = RP or NaN, and max(-0, x) gives the
   NaN).  chk 0: no test for tiny lanes, whose results the caller redoes (fg_f_central_chunk,
   fg_f32_drive.h); else *seen set when there are some */
static inline __attribute__((always_inline)) fg_fv fg_f_fwd_c(fg_fv x, const fg_f_fn fn, const int chk, int* seen) {
    fg_fv a = fg_f_fwd_a(x, fn);
    if (!chk)
        return fg_f_fwd_F(x, a, fn);
    fg_fm tiny = fg_f_tiny_mask(a);
    /* one test on the common path; a vector of tiny lanes alone (zeros, subnormals) skips the tables */
    if (__builtin_expect(tiny != 0, 0)) {
        *seen = 1;
        if (tiny == (fg_fm)((1u << FG_F_W) - 1u))
            return fg_f_tiny(x);
        return FG_F_SELECT(tiny, fg_f_tiny(x), fg_f_fwd_F(x, a, fn));
    }
    return fg_f_fwd_F(x, a, fn);
}

/* dy GELU'(x) of a gradient fn for x >= -R (x NaN: a suspect lane): G = GELU'(-a) from its table, and
   GELU'(x) + GELU'(-x) = 1 (w is odd for the tanh and sigmoid forms too) */
static inline __attribute__((always_inline)) fg_fv fg_f_grad_c(fg_fv x, fg_fv dy, const fg_f_fn fn) {
    const fg_f_table* t = fg_f_fns[fn].central;
    fg_fv G = fg_f_central(x, FG_F_ABSMIN(x, t->RP), t);
    return FG_F_SEL_NEG(x, FG_F_MUL(G, dy), FG_F_FNMA(G, dy, dy));   /* -0.0 the same either way */
}
#endif
#endif
