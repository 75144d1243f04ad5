#ifndef FG_FP_H
#define FG_FP_H
#include <stdint.h>
#include <string.h>
#include <math.h>
/* bit casts: memcpy is the portable spelling; gcc turns it into a register move and vectorizes it */
static inline int64_t fg_f64_bits(double x) { int64_t i; memcpy(&i, &x, sizeof i); return i; }
static inline double fg_f64_from_bits(int64_t i) { double x; memcpy(&x, &i, sizeof x); return x; }
/* branch-free select c ? a : b.  Cython's `a if c else b` becomes an if/else around the operand
   expressions (gcc will not speculate FP operations out of it under -ftrapping-math), and even a
   C ?: is a branch in GIMPLE that jump threading duplicates when an operand is a constant (the
   clamps), after which if-conversion fails ("control flow in loop").  Bit masking has no
   control flow at all; gcc vectorizes it to compare + blend/ternlog (AVX2/AVX-512). */
static inline double fg_sel(int c, double a, double b) {
    int64_t m = -(int64_t)(c != 0);
    return fg_f64_from_bits((fg_f64_bits(a) & m) | (fg_f64_bits(b) & ~m));
}
/* __FMA__: x86 with -mfma; __FP_FAST_FMA: gcc on any target with an FMA instruction (the targets where gcc
   contracts); __ARM_FEATURE_FMA: gcc and clang on Arm (clang defines no __FP_FAST_FMA); _M_ARM64: MSVC */
#if defined(__FMA__) || defined(__FP_FAST_FMA) || defined(__ARM_FEATURE_FMA) || defined(_M_ARM64)
#define FG_HAVE_FMA 1
/* exact error of the rounded product p = fl(a*b) */
static inline double fg_two_prod_err(double a, double b, double p) { return fma(a, b, -p); }
static inline double fg_fma(double a, double b, double c) { return fma(a, b, c); }
#else
#define FG_HAVE_FMA 0
/* Veltkamp split (2^27+1) + Dekker product: exact for |a|,|b| < ~1e300 and no underflow in the
   partial products (callers clamp their arguments well inside that range). */
static inline double fg_two_prod_err(double a, double b, double p) {
    double ca = 134217729.0 * a, cb = 134217729.0 * b;
    double ah = ca - (ca - a), bh = cb - (cb - b);
    double al = a - ah, bl = b - bh;
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}
/* without FMA hardware a libm fma() is a slow call: callers use fg_fma only where a separately
   rounded a*b+c is accurate enough */
static inline double fg_fma(double a, double b, double c) { return a * b + c; }
#endif
/* float32 counterparts for the kernels that compute float32 results in float32 (fg_fmaf only where FMA
   hardware exists: FG_HAVE_FMA; the fallback is for compiling, not for exact remainders) */
#if FG_HAVE_FMA
static inline float fg_fmaf(float a, float b, float c) { return fmaf(a, b, c); }
#else
static inline float fg_fmaf(float a, float b, float c) { return a * b + c; }
#endif
static inline uint32_t fg_f32_bits(float x) { uint32_t i; memcpy(&i, &x, sizeof i); return i; }
static inline float fg_f32_from_bits(uint32_t i) { float x; memcpy(&x, &i, sizeof x); return x; }
static inline float fg_sel32(int c, float a, float b) {
    uint32_t m = 0u - (uint32_t)(c != 0);
    return fg_f32_from_bits((fg_f32_bits(a) & m) | (fg_f32_bits(b) & ~m));
}

#define FG_SHIFTER 6755399441055744.0  /* 1.5 * 2^52: adding it rounds to an integer */
#define FG_SHIFTER_BIAS 6755399441056767.0  /* 1.5 * 2^52 + 1023 (IEEE exponent bias) */
#define FG_INV_LN2 1.4426950408889634
#define FG_LN2 0.6931471805599453
#define FG_LN2_HI 0.6931471803691238
#define FG_LN2_LO 1.9082149292705877e-10
#define FG_EQ0 0.5000000000000012
#define FG_EQ1 0.166666666666667
#define FG_EQ2 0.041666666666515535
#define FG_EQ3 0.008333333333307224
#define FG_EQ4 0.0013888888946981637
#define FG_EQ5 0.00019841269917343296
#define FG_EQ6 2.48014899806676e-05
#define FG_EQ7 2.7557216337430217e-06
#define FG_EQ8 2.7631265682309936e-07
#define FG_EQ9 2.5117849305271755e-08
#define FG_FQ0 0.5000000095131322
#define FG_FQ1 0.16666518898887006
#define FG_FQ2 0.041666205975901455
#define FG_FQ3 0.008368882228266178
#define FG_FQ4 0.0013950479485166278
#endif
