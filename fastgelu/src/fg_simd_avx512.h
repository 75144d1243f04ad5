/* SIMD primitives of the float32 kernels: AVX-512 F/BW/VL/DQ, 16 lanes (see fg_simd.h for the contract). */
#ifndef FG_SIMD_AVX512_H
#define FG_SIMD_AVX512_H
#include <immintrin.h>

typedef __m512 fg_fv;
typedef __m512i fg_iv;
typedef __mmask16 fg_vm;                 /* a compare's result, as bits */
typedef __mmask16 fg_fm;
#define FG_F_W 16
#define FG_F_TAB32 1                     /* 32-entry tables: one vpermt2ps per coefficient */
#define FG_F_HAS_SCALEF 1
#ifndef FG_F_HAS_SCATTER                 /* 0: the queue written back lane by lane (an A/B: tools/bound_f32.py --cflags) */
#define FG_F_HAS_SCATTER 1
#endif
#define FG_F_BV_IN_REG 0                 /* broadcast at each push: the tables hold half the registers
                                            (docs/design/kernels.md) */

#define FG_F_SET1 _mm512_set1_ps
#define FG_F_FMA _mm512_fmadd_ps
#define FG_F_FMS _mm512_fmsub_ps
#define FG_F_FNMA _mm512_fnmadd_ps
#define FG_F_MUL _mm512_mul_ps
#define FG_F_ADD _mm512_add_ps
#define FG_F_SUB _mm512_sub_ps
#define FG_F_DIV _mm512_div_ps
#define FG_F_MAX _mm512_max_ps
#define FG_F_MIN _mm512_min_ps
#define FG_F_ABS _mm512_abs_ps
/* min(|x|, c), one vrangeps; NaN gives c (vrangeps returns the number) */
#define FG_F_ABSMIN(x, c) _mm512_range_ps(x, FG_F_SET1(c), 10)
#define FG_F_ABSMIN_NAN_IS_C 1
#define FG_F_SCALEF _mm512_scalef_ps

#define FG_F_SET1I _mm512_set1_epi32
#define FG_F_ADDI _mm512_add_epi32
#define FG_F_SLLI _mm512_slli_epi32
#define FG_F_SRLI _mm512_srli_epi32
#define FG_F_MAXI _mm512_max_epi32
#define FG_F_CASTI _mm512_castps_si512
#define FG_F_CASTF _mm512_castsi512_ps

#define FG_F_LT(a, b) _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ)
#define FG_F_LE(a, b) _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ)
#define FG_F_GT(a, b) _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ)
#define FG_F_GE(a, b) _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ)
#define FG_F_NLE(a, b) _mm512_cmp_ps_mask(a, b, _CMP_NLE_UQ)
#define FG_F_NGE(a, b) _mm512_cmp_ps_mask(a, b, _CMP_NGE_UQ)
#define FG_F_NEQ(a, b) _mm512_cmp_ps_mask(a, b, _CMP_NEQ_UQ)
#define FG_F_UNORD(a, b) _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q)
#define FG_F_BITS(m) ((fg_fm)(m))
#define FG_F_ANY(m) ((m) != 0)
#define FG_F_VMOR(a, b) ((fg_vm)((a) | (b)))
#define FG_F_SEL(m, t, f) _mm512_mask_blend_ps(m, f, t)
#define FG_F_ZERO_IF(m, v) _mm512_maskz_mov_ps((__mmask16)~(m), v)
/* t where x < 0, else f (-0.0 and NaN: f) */
#define FG_F_SEL_NEG(x, t, f) _mm512_mask_mov_ps(f, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), t)
#define FG_F_SELECT(m, t, f) _mm512_mask_mov_ps(f, m, t)

#define FG_F_LOADU _mm512_loadu_ps
#define FG_F_STOREU _mm512_storeu_ps
#define FG_F_STORE _mm512_store_ps
#define FG_F_STOREUI(p, v) _mm512_storeu_si512((void*)(p), v)
#define FG_F_TAILMASK(k, r) __mmask16 k = (__mmask16)((1u << (r)) - 1u)
#define FG_F_MASKLOAD(p, k) _mm512_maskz_loadu_ps(k, p)
#define FG_F_MASKSTORE(p, k, v) _mm512_mask_storeu_ps(p, k, v)
#define FG_F_SCATTER(y, k, ip, v) _mm512_mask_i32scatter_ps(y, k, _mm512_loadu_si512(ip), v, 4)
#define FG_F_PREFETCH(p) _mm_prefetch((const char*)(p), _MM_HINT_T0)
#define FG_F_PREFETCHW(p) _mm_prefetch((const char*)(p), _MM_HINT_ET0)

#define FG_F_TAB(t) _mm512_permutex2var_ps(_mm512_load_ps(t), idx, _mm512_load_ps((t) + 16))

/* 1/d to ~2^-14 */
#define fg_f_rcp _mm512_rcp14_ps

/* x/2 correctly rounded for |x| <= 2^-30 (the contract: fg_simd.h) */
static inline __attribute__((always_inline)) fg_fv fg_f_tiny(fg_fv x) {
    __m512i xi = _mm512_castps_si512(x);
    __m512i mag = _mm512_and_si512(xi, _mm512_set1_epi32(0x7fffffff));
    __m512i half = _mm512_srli_epi32(_mm512_mask_add_epi32(mag, _mm512_cmpgt_epi32_mask(xi, _mm512_setzero_si512()),
                                                           mag, _mm512_set1_epi32(1)), 1);
    __m512i m = _mm512_mask_blend_epi32(_mm512_cmplt_epi32_mask(mag, _mm512_set1_epi32(0x01000000)),
                                        _mm512_sub_epi32(mag, _mm512_set1_epi32(0x00800000)), half);
    return _mm512_castsi512_ps(_mm512_or_si512(m, _mm512_andnot_si512(_mm512_set1_epi32(0x7fffffff), xi)));
}

/* compress: vcompressps to a register (Zen 4 runs its memory form in microcode) */
typedef __mmask16 fg_fc;
#define FG_F_COMPRESS_PREP(m) (m)
#define FG_F_COMPRESS(c, m, v) ((void)(c), _mm512_maskz_compress_ps(m, v))
#define FG_F_COMPRESS_IDX(c, m, bv) _mm512_maskz_compress_epi32(m, _mm512_add_epi32( \
    _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), bv))

#endif
