/* SIMD primitives of the float32 kernels: AVX2 + FMA, 8 lanes (see fg_simd.h for the contract of each). */
#ifndef FG_SIMD_AVX2_H
#define FG_SIMD_AVX2_H
#include <immintrin.h>

typedef __m256 fg_fv;
typedef __m256i fg_iv;
typedef __m256 fg_vm;                    /* a compare's result: all-ones lanes */
typedef unsigned int fg_fm;              /* a lane mask as bits */
#define FG_F_W 8
#define FG_F_TAB32 0                     /* 8-entry tables (fg_f32_tables.h) */
#define FG_F_HAS_SCALEF 0
#define FG_F_HAS_SCATTER 0
#define FG_F_BV_IN_REG 1                 /* a broadcast from a general register takes the permutes' port */

#define FG_F_SET1 _mm256_set1_ps
#define FG_F_FMA _mm256_fmadd_ps
#define FG_F_FMS _mm256_fmsub_ps
#define FG_F_FNMA _mm256_fnmadd_ps
#define FG_F_MUL _mm256_mul_ps
#define FG_F_ADD _mm256_add_ps
#define FG_F_SUB _mm256_sub_ps
#define FG_F_DIV _mm256_div_ps
#define FG_F_MAX _mm256_max_ps
#define FG_F_MIN _mm256_min_ps
#define FG_F_ABS(v) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v)
/* min(|x|, c); NaN stays NaN */
#define FG_F_ABSMIN(x, c) FG_F_MIN(FG_F_SET1(c), FG_F_ABS(x))
#define FG_F_ABSMIN_NAN_IS_C 0

#define FG_F_SET1I _mm256_set1_epi32
#define FG_F_ADDI _mm256_add_epi32
#define FG_F_SLLI _mm256_slli_epi32
#define FG_F_SRLI _mm256_srli_epi32
#define FG_F_MAXI _mm256_max_epi32
#define FG_F_CASTI _mm256_castps_si256
#define FG_F_CASTF _mm256_castsi256_ps

#define FG_F_LT(a, b) _mm256_cmp_ps(a, b, _CMP_LT_OQ)
#define FG_F_LE(a, b) _mm256_cmp_ps(a, b, _CMP_LE_OQ)
#define FG_F_GT(a, b) _mm256_cmp_ps(a, b, _CMP_GT_OQ)
#define FG_F_GE(a, b) _mm256_cmp_ps(a, b, _CMP_GE_OQ)
#define FG_F_NLE(a, b) _mm256_cmp_ps(a, b, _CMP_NLE_UQ)
#define FG_F_NGE(a, b) _mm256_cmp_ps(a, b, _CMP_NGE_UQ)
#define FG_F_NEQ(a, b) _mm256_cmp_ps(a, b, _CMP_NEQ_UQ)
#define FG_F_UNORD(a, b) _mm256_cmp_ps(a, b, _CMP_UNORD_Q)
#define FG_F_BITS(m) ((fg_fm)_mm256_movemask_ps(m))
#define FG_F_ANY(m) (!_mm256_testz_ps(m, m))
#define FG_F_VMOR _mm256_or_ps
#define FG_F_SEL(m, t, f) _mm256_blendv_ps(f, t, m)
#define FG_F_ZERO_IF(m, v) _mm256_andnot_ps(m, v)
/* t where x's sign bit is set (x < 0, -0.0, negative NaN), else f */
#define FG_F_SEL_NEG(x, t, f) _mm256_blendv_ps(f, t, x)
static inline __attribute__((always_inline)) fg_fv fg_f_selb(fg_fm m, fg_fv t, fg_fv f) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    __m256i on = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)m), bit), bit);
    return _mm256_blendv_ps(f, t, _mm256_castsi256_ps(on));
}
#define FG_F_SELECT fg_f_selb

#define FG_F_LOADU _mm256_loadu_ps
#define FG_F_STOREU _mm256_storeu_ps
#define FG_F_STORE _mm256_store_ps
#define FG_F_STOREUI(p, v) _mm256_storeu_si256((__m256i*)(p), v)
#define FG_F_TAILMASK(k, r) __m256i k = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(r)), \
                                                           _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define FG_F_MASKLOAD(p, k) _mm256_maskload_ps(p, k)
#define FG_F_MASKSTORE(p, k, v) _mm256_maskstore_ps(p, k, v)
#define FG_F_PREFETCH(p) _mm_prefetch((const char*)(p), _MM_HINT_T0)
#define FG_F_PREFETCHW(p) _mm_prefetch((const char*)(p), _MM_HINT_ET0)

/* 8-entry tables: one vpermps per coefficient (two and a blend for 16 entries made the AVX2 kernel
   permute-bound).  The row is loaded by an instruction of its own: vpermps with a memory operand holds its
   pipe longer on Zen 3 than the load and the register form, and the central loops are bound by that pipe
   (docs/design/kernels.md).  The load is the asm's own, volatile, so that it stays in the loop: a load the
   compiler may hoist left it free to keep some rows in registers, which it then spilled (docs/performance.md,
   design history) */
static inline __attribute__((always_inline)) __m256 fg_f_tab8(const float* t, __m256i idx) {
    __m256 row;
    __asm__ volatile("vmovaps %1, %0" : "=x"(row) : "m"(*(const __m256*)t));
    return _mm256_permutevar8x32_ps(row, idx);
}
#define FG_F_TAB(t) fg_f_tab8(t, idx)

/* 1/d to ~2^-23 (one Newton step) */
static inline __attribute__((always_inline)) fg_fv fg_f_rcp(fg_fv d) {
    fg_fv r = _mm256_rcp_ps(d);
    return FG_F_MUL(r, FG_F_FNMA(d, r, FG_F_SET1(2.0f)));
}

/* x/2 correctly rounded for |x| <= 2^-30 (the contract: fg_simd.h), by integer arithmetic: no subnormal
   floating-point operation */
static inline __attribute__((always_inline)) fg_fv fg_f_tiny(fg_fv x) {
    __m256i xi = _mm256_castps_si256(x);
    __m256i mag = _mm256_and_si256(xi, _mm256_set1_epi32(0x7fffffff));
    __m256i pos = _mm256_cmpgt_epi32(xi, _mm256_setzero_si256());           /* -1 where x > 0 */
    __m256i half = _mm256_srli_epi32(_mm256_sub_epi32(mag, pos), 1);
    __m256i m = _mm256_blendv_epi8(_mm256_sub_epi32(mag, _mm256_set1_epi32(0x00800000)), half,
                                   _mm256_cmpgt_epi32(_mm256_set1_epi32(0x01000000), mag));
    return _mm256_castsi256_ps(_mm256_or_si256(m, _mm256_andnot_si256(_mm256_set1_epi32(0x7fffffff), xi)));
}

/* Compress (no vcompressps): vpermps indices that move the lanes of mask m to the front; as int32, 8 KB: a
   plain load, where bytes took a vpmovzxbd on the port the permutes use.  The permute is also the lanes'
   offsets */
static int fg_f_cperm[256][8] __attribute__((aligned(32)));
__attribute__((constructor)) static void fg_f_cperm_init(void) {
    for (int m = 0; m < 256; m++)
        for (int j = 0, k = 0; j < 8; j++)
            if (m >> j & 1)
                fg_f_cperm[m][k++] = j;
}
typedef __m256i fg_fc;
#define FG_F_COMPRESS_PREP(m) _mm256_load_si256((const __m256i*)fg_f_cperm[m])
#define FG_F_COMPRESS(c, m, v) _mm256_permutevar8x32_ps(v, c)
#define FG_F_COMPRESS_IDX(c, m, bv) _mm256_add_epi32(c, bv)

#endif
