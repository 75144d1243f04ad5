/* What the float32 kernels' math shares (fg_gelu_f32_central.h, fg_gelu_f32_tail.h, fg_xsig_f32_math.h): the
   lower clamp of |x|, the rounding constant, and 2^f, from which every exp of theirs is formed.

   2^f = 1 + f*Q(f) on |f| <= 1/2, Q = Q0 + f*Q1(f) of degree 5 (GX_F_Q0..Q5, fg_gelu_f32_tables.h: relative
   error 3.0e-9).  exp(-a^2/2) = 2^mn * 2^f with a^2 = s + sl formed exactly by an FMA (else the error would
   grow like a^2): mn by MAGIC, f = fh + fl, and 2^f - 1 = f*Q0 + f^2*Q1(f) with the leading product Q0*f
   taken from fh and fl unrounded. */
#ifndef FG_F32_COMMON_H
#define FG_F32_COMMON_H
#include "fg_simd.h"
#if GX_F32_SIMD
#include "fg_gelu_f32_tables.h"

#define GX_F_TINY 0x1p-30f     /* |x| below: y = x/2 rounded, by integer arithmetic (gx_f_tiny); the main
                                  paths see max(|x|, TINY), so none of their products is subnormal (a
                                  subnormal operand takes a microcode assist) */
#define GX_F_MAGIC 12582912.0f /* 1.5*2^23: v + MAGIC is round(v) + MAGIC, round(v) in the low bits */

/* Q1 by Horner (Estrin's shorter chains are no faster: the loops are bound by their operations), and q =
   2^f - 1 from f = fh + fl */
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
#if !GX_F_HAS_SCALEF
/* 2^(mn + 64) from b: times S (< 4) normal and exact, so a later 2^-64 rounds a subnormal result once */
static inline __attribute__((always_inline)) gx_fv gx_f_scale64(gx_fv b) {
    return GX_F_CASTF(GX_F_SLLI(GX_F_ADDI(GX_F_CASTI(b), GX_F_SET1I(127 + 64 - 0x4B400000)), 23));
}
/* S * 2^mn from b, for a normal result: mn added to S's exponent field */
static inline __attribute__((always_inline)) gx_fv gx_f_scale_normal(gx_fv S, gx_fv b) {
    return GX_F_CASTF(GX_F_ADDI(GX_F_CASTI(S), GX_F_SLLI(GX_F_CASTI(b), 23)));
}
#endif
#endif
#endif
