/* The SIMD primitives the float32 kernels (fg_gelu_f32.h, fg_xsig_f32.h) are written on: one header per
   instruction set, chosen here at compile time.  FG_F32_SIMD is 1 where one applies (and FG_F32_FWD, which
   setup.py defines unless the environment has FASTGELU_F32_FWD=0), else 0 and the float32 functions take the
   scalar path.

   The contract every ISA header meets (fg_fv: W float lanes; fg_iv: W int32 lanes; fg_vm: the result of a
   compare, in whatever form the ISA has; fg_fm: a lane mask as bits, lane j at bit j):
     FG_F_W                 lanes a vector
     FG_F_TAB32             1: 32-entry coefficient tables (one two-source permute a coefficient), 0: 8-entry
     FG_F_HAS_SCALEF        1: FG_F_SCALEF(v, e) = v * 2^e exists (one operation, whatever e)
     FG_F_HAS_SCATTER       1: FG_F_SCATTER(y, k, idx, v) stores the lanes k of v to y[idx]
     FG_F_BV_IN_REG         1: the queue keeps its offsets as a vector (else a broadcast a push)
     FG_F_SET1, FMA (a*b+c), FMS (a*b-c), FNMA (c-a*b), MUL, ADD, SUB, DIV, ABS
     FG_F_MAX(a, b), FG_F_MIN(a, b)   x86 semantics: a > b ? a : b and a < b ? a : b (a NaN gives b; the
                            kernels rely on it)
     FG_F_ABSMIN(x, c)      min(|x|, c); x NaN: NaN, or c where the ISA has that in one operation
                            (FG_F_ABSMIN_NAN_IS_C 1: AVX-512's vrangeps)
     FG_F_NGE               unordered not-greater-or-equal, as NLE
     FG_F_SET1I, ADDI, SLLI, SRLI, MAXI (signed), CASTI / CASTF (bit casts)
     FG_F_LT, LE, GT, GE (ordered), NLE, NEQ (unordered: true for NaN), UNORD: fg_vm
     FG_F_BITS(m) fg_fm, FG_F_ANY(m), FG_F_VMOR(a, b), FG_F_SEL(m, t, f) = m ? t : f, FG_F_ZERO_IF(m, v)
     FG_F_SELECT(b, t, f)   the same from a fg_fm
     FG_F_SEL_NEG(x, t, f)  t where x < 0 (or where x's sign bit is set: -0.0 and NaN go either way), else f
     FG_F_LOADU, STOREU, STORE (aligned), STOREUI (int vector), PREFETCH, PREFETCHW (for writing)
     FG_F_TAILMASK(k, r)    declares k, the mask of the first r lanes, for MASKLOAD(p, k) (others read as 0,
                            no fault) and MASKSTORE(p, k, v)
     FG_F_TAB(t)            t[idx] per lane, idx (a fg_iv in scope) in [0, 8) or [0, 32) by its low bits
     fg_f_rcp(d)            1/d to 2^-14 or better (used only with a remainder correction)
     fg_f_tiny(x)           x/2 correctly rounded, for |x| <= 2^-30, by integer arithmetic: x*Phi(x) = x/2 (1 +
                            0.8x + ...), so for x/2 normal it is x/2 (exponent minus one), and for a subnormal
                            x/2 a tie rounds up in magnitude for x > 0 (the true value lies above) and down for
                            x < 0.  No subnormal floating-point operation (it takes a microcode assist)
     fg_fc, FG_F_COMPRESS_PREP(m), FG_F_COMPRESS(c, m, v), FG_F_COMPRESS_IDX(c, m, bv): the lanes m of v
                            moved to the front; and their offsets j + bv */
#ifndef FG_SIMD_H
#define FG_SIMD_H
#include <stddef.h>

#if defined(FG_F32_FWD) && (defined(__GNUC__) || defined(__clang__))
#if defined(__AVX512F__)
#include "fg_simd_avx512.h"
#define FG_F32_SIMD 1
#define FG_F32_SIMD_NAME "AVX-512, 16 lanes"
#elif defined(__AVX2__) && defined(__FMA__)
#include "fg_simd_avx2.h"
#define FG_F32_SIMD 1
#define FG_F32_SIMD_NAME "AVX2, 8 lanes"
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include "fg_simd_neon.h"
#define FG_F32_SIMD 1
#define FG_F32_SIMD_NAME "NEON, 4 lanes"
#endif
#endif
#if defined(FG_F32_FWD)
#define FG_F32_REQUESTED 1
#else
#define FG_F32_REQUESTED 0
#endif
#ifndef FG_F32_SIMD
#define FG_F32_SIMD 0
#define FG_F32_SIMD_NAME ""
#endif

#endif
