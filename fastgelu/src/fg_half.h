#ifndef FG_HALF_H
#define FG_HALF_H
#include <stdint.h>
#include <string.h>
#include "fg_fp.h"

/* selects as masks: gcc will not if-convert a ternary around a float operation (it could trap), and
   the loop would stay scalar below AVX-512 */
static inline uint32_t fg_pick(int c, uint32_t a, uint32_t b) {
    uint32_t m = 0u - (uint32_t)(c != 0);
    return (a & m) | (b & ~m);
}

static inline float fg_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, em = h & 0x7fffu, shifted = em << 13;
    /* normal, inf and NaN: exponent and mantissa moved into place and rebiased (112 = 127 - 15;
       224 = 255 - 31 keeps inf/NaN); a subnormal half m*2^-24 is (1 + m/1024)*2^-14 - 2^-14, exact */
    uint32_t normal = shifted + fg_pick(em >= 0x7c00u, 224u << 23, 112u << 23);
    uint32_t sub = fg_f32_bits(fg_f32_from_bits(shifted + (113u << 23)) - 6.103515625e-05f);
    return fg_f32_from_bits(fg_pick(em < 0x0400u, sub, normal) | sign);
}

static inline uint16_t fg_float_to_half(float f) {
    uint32_t u = fg_f32_bits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    /* normal range: round the 13 dropped mantissa bits to nearest-even, rebias; a carry out of the
       mantissa correctly bumps the exponent, up to infinity */
    uint32_t normal = (a + 0xfffu + ((a >> 13) & 1u) - (112u << 23)) >> 13;
    /* below 2^-14: adding 0.5f aligns the value so the FPU's own round-to-nearest-even drops exactly
       the bits a half subnormal cannot hold */
    uint32_t sub = fg_f32_bits(fg_f32_from_bits(a) + 0.5f) - 0x3f000000u;
    uint32_t big = fg_pick(a > 0x7f800000u, 0x7e00u, 0x7c00u);   /* NaN stays NaN (quiet), else inf */
    uint32_t r = fg_pick(a >= 0x477ff000u, big, fg_pick(a < 0x38800000u, sub, normal));
    return (uint16_t)(r | sign);
}

/* contiguous float16 runs: the F16C instructions (one per 8 values, rounding to nearest-even by
   immediate, whatever MXCSR says) where the build has them; gcc 12 does not vectorize _Float16 casts */
#ifdef __F16C__
#include <immintrin.h>
static inline void fg_halves_to_floats(const uint16_t* h, float* f, long n) {
    long i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(f + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(h + i))));
    for (; i < n; i++) f[i] = fg_half_to_float(h[i]);
}
static inline void fg_floats_to_halves(const float* f, uint16_t* h, long n) {
    long i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i*)(h + i), _mm256_cvtps_ph(_mm256_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) h[i] = fg_float_to_half(f[i]);
}
#else
static inline void fg_halves_to_floats(const uint16_t* h, float* f, long n) {
    for (long i = 0; i < n; i++) f[i] = fg_half_to_float(h[i]);
}
static inline void fg_floats_to_halves(const float* f, uint16_t* h, long n) {
    for (long i = 0; i < n; i++) h[i] = fg_float_to_half(f[i]);
}
#endif

static inline float fg_bf16_to_float(uint16_t b) { return fg_f32_from_bits((uint32_t)b << 16); }

static inline uint16_t fg_float_to_bf16(float f) {
    uint32_t u = fg_f32_bits(f);
    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    return (uint16_t)fg_pick((u & 0x7fffffffu) > 0x7f800000u, (u >> 16) | 0x40u, rounded);
}

static inline void fg_lookup16(const uint16_t* tab, const uint16_t* in, uint16_t* out, long n) {
    long i = 0;
    for (; i + 8 <= n; i += 8) {
        uint16_t r[8];
        for (int k = 0; k < 8; k++) r[k] = tab[in[i + k]];
        memcpy(out + i, r, sizeof r);   /* after all 8 loads: in place (out == in) stays correct */
    }
    for (; i < n; i++) out[i] = tab[in[i]];
}
#endif
