#ifndef FG_LANES_H
#define FG_LANES_H
#if defined(__GNUC__) || defined(__clang__)
static inline int fg_ctz32(unsigned int m) { return __builtin_ctz(m); }
static inline int fg_popcount32(unsigned int m) { return __builtin_popcount(m); }
#else
static inline int fg_ctz32(unsigned int m) { int k = 0; while (!(m & 1u)) { m >>= 1; k++; } return k; }
static inline int fg_popcount32(unsigned int m) { int k = 0; while (m) { m &= m - 1u; k++; } return k; }
#endif
/* bit j set when |x[j]| > 3 (NaN: not set, the central polynomial gives NaN), j < 32.  gcc vectorizes
   the portable loop, but its OR-reduction of shifted flags takes several times the instructions of a
   compare-to-mask (AVX-512) or movemask (AVX, SSE2) */
#if defined(__AVX512F__)
#include <immintrin.h>
static inline unsigned int fg_far_mask32(const float* x) {
    const __m512 lim = _mm512_set1_ps(3.0f);
    unsigned int lo = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x)), lim, _CMP_GT_OQ);
    unsigned int hi = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + 16)), lim, _CMP_GT_OQ);
    return lo | (hi << 16);
}
#elif defined(__AVX__)
#include <immintrin.h>
static inline unsigned int fg_far_mask32(const float* x) {
    const __m256 lim = _mm256_set1_ps(3.0f), sign = _mm256_set1_ps(-0.0f);
    unsigned int m = 0;
    for (int k = 0; k < 4; k++)
        m |= (unsigned int)_mm256_movemask_ps(
            _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * k)), lim, _CMP_GT_OQ)) << (8 * k);
    return m;
}
#elif defined(__SSE2__)
#include <emmintrin.h>
static inline unsigned int fg_far_mask32(const float* x) {
    const __m128 lim = _mm_set1_ps(3.0f), sign = _mm_set1_ps(-0.0f);
    unsigned int m = 0;
    for (int k = 0; k < 8; k++)
        m |= (unsigned int)_mm_movemask_ps(_mm_cmpgt_ps(_mm_andnot_ps(sign, _mm_loadu_ps(x + 4 * k)), lim))
             << (4 * k);
    return m;
}
#else
static inline unsigned int fg_far_mask32(const float* x) {
    unsigned int m = 0;
    for (unsigned int j = 0; j < 32; j++)
        m |= (unsigned int)((x[j] > 3.0f) | (x[j] < -3.0f)) << j;
    return m;
}
#endif
/* the same for 32 doubles and a limit: bit j set when |x[j]| > lim (NaN: not set) */
#if defined(__AVX512F__)
static inline unsigned int fg_far_mask64(const double* x, double lim) {
    const __m512d l = _mm512_set1_pd(lim);
    unsigned int m = 0;
    for (int k = 0; k < 4; k++)
        m |= (unsigned int)_mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_loadu_pd(x + 8 * k)), l, _CMP_GT_OQ)
             << (8 * k);
    return m;
}
#elif defined(__AVX__)
static inline unsigned int fg_far_mask64(const double* x, double lim) {
    const __m256d l = _mm256_set1_pd(lim), sign = _mm256_set1_pd(-0.0);
    unsigned int m = 0;
    for (int k = 0; k < 8; k++)
        m |= (unsigned int)_mm256_movemask_pd(
            _mm256_cmp_pd(_mm256_andnot_pd(sign, _mm256_loadu_pd(x + 4 * k)), l, _CMP_GT_OQ)) << (4 * k);
    return m;
}
#elif defined(__SSE2__)
static inline unsigned int fg_far_mask64(const double* x, double lim) {
    const __m128d l = _mm_set1_pd(lim), sign = _mm_set1_pd(-0.0);
    unsigned int m = 0;
    for (int k = 0; k < 16; k++)
        m |= (unsigned int)_mm_movemask_pd(_mm_cmpgt_pd(_mm_andnot_pd(sign, _mm_loadu_pd(x + 2 * k)), l))
             << (2 * k);
    return m;
}
#else
static inline unsigned int fg_far_mask64(const double* x, double lim) {
    unsigned int m = 0;
    for (unsigned int j = 0; j < 32; j++)
        m |= (unsigned int)((x[j] > lim) | (x[j] < -lim)) << j;
    return m;
}
#endif

/* AVX-512: append the lanes of `mask` (bit j: x[j] and y + j) to a queue holding k, compressed a vector at
   a time (to a register, then a plain store: Zen 4 runs the memory form of vcompresspd in microcode);
   returns the new count.  The queue needs room for 32 + 8 lanes past k. */
#if defined(__AVX512F__)
#define FG_QUEUE64_VEC 1
static inline int fg_queue64(double* xq, double** yq, int k, const double* x, double* y, unsigned int mask) {
    const __m512i step = _mm512_setr_epi64(0, 8, 16, 24, 32, 40, 48, 56);
    for (int v = 0; v < 4; v++) {
        __mmask8 m = (__mmask8)(mask >> (8 * v));
        _mm512_storeu_pd(xq + k, _mm512_maskz_compress_pd(m, _mm512_loadu_pd(x + 8 * v)));
        _mm512_storeu_si512((void*)(yq + k), _mm512_maskz_compress_epi64(
            m, _mm512_add_epi64(_mm512_set1_epi64((long long)(y + 8 * v)), step)));
        k += __builtin_popcount((unsigned int)m);
    }
    return k;
}
#else
#define FG_QUEUE64_VEC 0
static inline int fg_queue64(double* xq, double** yq, int k, const double* x, double* y, unsigned int mask) {
    (void)xq; (void)yq; (void)x; (void)y; (void)mask;
    return k;
}
#endif
#endif
