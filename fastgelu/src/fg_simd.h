/* The SIMD primitives the float32 kernels (fg_gelu_f32.h, fg_xsig_f32.h) are written on: one header per
   instruction set, chosen here at compile time.  GX_F32_SIMD is 1 where one applies (and FASTGELU_F32_FWD,
   on unless the build sets FASTGELU_F32_FWD=0), else 0 and the float32 functions take the scalar path.

   The contract every ISA header meets (gx_fv: W float lanes; gx_iv: W int32 lanes; gx_vm: the result of a
   compare, in whatever form the ISA has; gx_fm: a lane mask as bits, lane j at bit j):
     GX_F_W                 lanes a vector
     GX_F_TAB32             1: 32-entry coefficient tables (one two-source permute a coefficient), 0: 8-entry
     GX_F_HAS_SCALEF        1: GX_F_SCALEF(v, e) = v * 2^e exists (one operation, whatever e)
     GX_F_HAS_SCATTER       1: GX_F_SCATTER(y, k, idx, v) stores the lanes k of v to y[idx]
     GX_F_BV_IN_REG         1: the queue keeps its offsets as a vector (else a broadcast a push)
     GX_F_SET1, FMA (a*b+c), FMS (a*b-c), FNMA (c-a*b), MUL, ADD, SUB, DIV, ABS
     GX_F_MAX(a, b), GX_F_MIN(a, b)   x86 semantics: a > b ? a : b and a < b ? a : b (a NaN gives b; the
                            kernels rely on it)
     GX_F_ABSMIN(x, c)      min(|x|, c); x NaN: NaN, or c where the ISA has that in one operation
                            (GX_F_ABSMIN_NAN_IS_C 1: AVX-512's vrangeps)
     GX_F_NGE               unordered not-greater-or-equal, as NLE
     GX_F_SET1I, ADDI, SLLI, SRLI, MAXI (signed), CASTI / CASTF (bit casts)
     GX_F_LT, LE, GT, GE (ordered), NLE, NEQ (unordered: true for NaN), UNORD: gx_vm
     GX_F_BITS(m) gx_fm, GX_F_ANY(m), GX_F_VMOR(a, b), GX_F_SEL(m, t, f) = m ? t : f, GX_F_ZERO_IF(m, v)
     GX_F_SELECT(b, t, f)   the same from a gx_fm
     GX_F_SEL_NEG(x, t, f)  t where x < 0 (or where x's sign bit is set: -0.0 and NaN go either way), else f
     GX_F_LOADU, STOREU, STORE (aligned), STOREUI (int vector), PREFETCH, PREFETCHW (for writing)
     GX_F_TAILMASK(k, r)    declares k, the mask of the first r lanes, for MASKLOAD(p, k) (others read as 0,
                            no fault) and MASKSTORE(p, k, v)
     GX_F_TAB(t)            t[idx] per lane, idx (a gx_iv in scope) in [0, 8) or [0, 32) by its low bits
     gx_f_rcp(d)            1/d to 2^-14 or better (used only with a remainder correction)
     gx_f_tiny(x)           x/2 correctly rounded, for |x| <= 2^-30, by integer arithmetic: x*Phi(x) = x/2 (1 +
                            0.8x + ...), so for x/2 normal it is x/2 (exponent minus one), and for a subnormal
                            x/2 a tie rounds up in magnitude for x > 0 (the true value lies above) and down for
                            x < 0.  No subnormal floating-point operation (it takes a microcode assist)
     gx_fc, GX_F_COMPRESS_PREP(m), GX_F_COMPRESS(c, m, v), GX_F_COMPRESS_IDX(c, m, bv): the lanes m of v
                            moved to the front; and their offsets j + bv */
#ifndef FG_SIMD_H
#define FG_SIMD_H
#include <stddef.h>

#if defined(FASTGELU_F32_FWD) && (defined(__GNUC__) || defined(__clang__))
#if defined(__AVX512F__)
#include "fg_simd_avx512.h"
#define GX_F32_SIMD 1
#define GX_F32_SIMD_NAME "AVX-512, 16 lanes"
#elif defined(__AVX2__) && defined(__FMA__)
#include "fg_simd_avx2.h"
#define GX_F32_SIMD 1
#define GX_F32_SIMD_NAME "AVX2, 8 lanes"
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include "fg_simd_neon.h"
#define GX_F32_SIMD 1
#define GX_F32_SIMD_NAME "NEON, 4 lanes"
#endif
#endif
#if defined(FASTGELU_F32_FWD)
#define GX_F32_REQUESTED 1
#else
#define GX_F32_REQUESTED 0
#endif
#ifndef GX_F32_SIMD
#define GX_F32_SIMD 0
#define GX_F32_SIMD_NAME ""
#endif

#endif
