/* The central form of the float32 kernels: forward and gradient of every function from its table
   (fg_f_table, fg_f32_table.h; a function's table is its record's, fg_f32_fns.h), no exp.  With a = |x|
   clamped at the table's RP:
     forward   y = max(-0.0, x) - F,  F = a*Phi(-a)  (the tanh form: F = a*sigma(-w(a)); sigmoid: a*sigma(-1.702a))
     gradient  y = dy - G*dy (x >= 0) or G*dy (x < 0),  G = GELU'(-a):  Phi(-a) - a*phi(a)  (tanh and sigmoid
               forms: sigma(-w) - a*w'*sigma(w)*sigma(-w); w odd, so GELU'(x) + GELU'(-x) = 1 for all three)
   F and G are polynomials C0 + u*(C1 + ...) on intervals of a, u = a - L_i, their coefficients picked per
   lane by a register permute (FG_F_TAB): 32 intervals a table on AVX-512 (vpermt2ps), 8 on AVX2 and NEON
   (vpermps, vqtbl2q).  The interval is i = round(a*(K2*a + K)) (FMAs leave i in the low bits); with K2 > 0
   the intervals narrow as a grows, as F's relative change per unit of a does (~a), so the same error budget
   reaches further.
   - A table's reach R ends its intervals where F's Gaussian decay makes u*(C1 + ...) too large a share of F
     for float Horner.  Where the intervals reach far enough, the clamp at R is exact for x > 0 (F(R) below
     half an ulp of R, G(R) below half an ulp of 1), so only x < -R leaves the tables.
   - A positive slot (8-entry tables): the last interval holds x in (R, RP], RP the clamp beyond which
     x - F rounds to x (1 - G to 1); there y needs F (G) only to a fraction of the result's ulp, absolutely,
     which one piece gives, so only x < -R takes the tail.  A table without one queues |x| > R.
   - L_i = i*H (H != 0): u = a - i*H by one FMA from the index, a permute fewer.  Else L_i is row 0, each a
     float at which F (G) is a float to ~1e-4 ulp, so C0 is exact and the only roundings are Horner's; where
     L_i = i*H, C0 = F(L_i) rounded, the fit absorbing that rounding everywhere but at u = 0.  Intervals
     expanded at their right end (tools/fit_gelu_f32.py's re: u <= 0) keep Horner's terms of G's sign where
     it decays.
   The sigmoid form's F falls only like e^(-1.702a), but sigma's poles at a = +-i pi/1.702 bound every
   interval's width alike: its tables have even intervals.  Each table's R, RP, degree and fitted error are
   its record's (fg_f32_tables.h); why each is what it is, with the alternatives measured:
   docs/design/kernels.md.  The lanes beyond go to the function's tail (fg_f32_route.h) through the queue
   (fg_f32_queue.h). */
#ifndef FG_F32_CENTRAL_H
#define FG_F32_CENTRAL_H
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
           matters: an FMA more than Horner for a shorter chain (the odd degrees: docs/design/kernels.md) */
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
