/* What the float32 kernels' math shares (fg_f32_central.h, fg_gelu_f32.h, fg_xsig_f32.h): the
   lower clamp of |x|, the rounding constant, and 2^f, from which every exp of theirs is formed.

   2^f = 1 + f*Q(f) on |f| <= 1/2, Q = Q0 + f*Q1(f) of degree 5 (FG_F_Q0..Q5 and its fitted error FG_F_Q_ERR,
   fg_f32_tables.h).  exp(-a^2/2) = 2^mn * 2^f with a^2 = s + sl formed exactly by an FMA (else the error would
   grow like a^2): mn by MAGIC, f = fh + fl, and 2^f - 1 = f*Q0 + f^2*Q1(f) with the leading product Q0*f
   taken from fh and fl unrounded. */
#ifndef FG_F32_COMMON_H
#define FG_F32_COMMON_H
#include "fg_simd.h"
#if FG_F32_SIMD
#include "fg_f32_tables.h"

#define FG_F_TINY 0x1p-30f     /* |x| below: y = x/2 rounded, by integer arithmetic (fg_f_tiny); the main
                                  paths see max(|x|, TINY), so none of their products is subnormal (a
                                  subnormal operand takes a microcode assist) */
#define FG_F_MAGIC 12582912.0f /* 1.5*2^23: v + MAGIC is round(v) + MAGIC, round(v) in the low bits */

/* Q1 by Horner (the loops are bound by their operations, not this chain), and q =
   2^f - 1 from f = fh + fl */
static inline __attribute__((always_inline)) fg_fv fg_f_Q1(fg_fv f) {
    fg_fv p = FG_F_FMA(FG_F_SET1(FG_F_Q5), f, FG_F_SET1(FG_F_Q4));
    p = FG_F_FMA(p, f, FG_F_SET1(FG_F_Q3));
    p = FG_F_FMA(p, f, FG_F_SET1(FG_F_Q2));
    return FG_F_FMA(p, f, FG_F_SET1(FG_F_Q1));
}
static inline __attribute__((always_inline)) fg_fv fg_f_q_pair(fg_fv fh, fg_fv fl) {
    const fg_fv q0 = FG_F_SET1(FG_F_Q0);
    fg_fv f = FG_F_ADD(fh, fl);
    return FG_F_FMA(fh, q0, FG_F_FMA(FG_F_MUL(f, f), fg_f_Q1(f), FG_F_MUL(fl, q0)));
}

/* exp(-a^2/2) = 2^-z, z = (s + sl)(KH + KL) with a^2 = s + sl exactly; 2^-z = 2^mn * 2^f, mn = round(-s*KH)
   (by MAGIC: bits(b) = bits(MAGIC) + mn), f = fh + fl: fh = -s*KH - mn rounded once (|fh| <= 1/2), fl the
   rest.  Returns q = 2^f - 1.  kl 0 leaves out a^2 KL (AVX-512's exp form: its tables hold D times
   2^(a^2 KL), a smooth factor) */
static inline __attribute__((always_inline)) fg_fv fg_f_exp_red(fg_fv a, fg_fv* b, fg_fv* mn, const int kl) {
    const fg_fv kh = FG_F_SET1(-FG_F_KH), magic = FG_F_SET1(FG_F_MAGIC);
    fg_fv s = FG_F_MUL(a, a);
    fg_fv sl = FG_F_FMS(a, a, s);
    *b = FG_F_FMA(s, kh, magic);
    *mn = FG_F_SUB(*b, magic);
    fg_fv fh = FG_F_FMS(s, kh, *mn);
    return fg_f_q_pair(fh, kl ? FG_F_FMA(sl, kh, FG_F_MUL(s, FG_F_SET1(-FG_F_KL))) : FG_F_MUL(sl, kh));
}
#if !FG_F_HAS_SCALEF
/* 2^(mn + 64) from b: times S (< 4) normal and exact, so a later 2^-64 rounds a subnormal result once */
static inline __attribute__((always_inline)) fg_fv fg_f_scale64(fg_fv b) {
    return FG_F_CASTF(FG_F_SLLI(FG_F_ADDI(FG_F_CASTI(b), FG_F_SET1I(127 + 64 - 0x4B400000)), 23));
}
/* S * 2^mn from b, for a normal result: mn added to S's exponent field */
static inline __attribute__((always_inline)) fg_fv fg_f_scale_normal(fg_fv S, fg_fv b) {
    return FG_F_CASTF(FG_F_ADDI(FG_F_CASTI(S), FG_F_SLLI(FG_F_CASTI(b), 23)));
}
#endif
#endif
#endif
