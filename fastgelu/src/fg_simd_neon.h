/* SIMD primitives of the float32 kernels: AArch64 NEON (Advanced SIMD), 4 lanes, FMA always there (see
   fg_simd.h for the contract).  The kernels run with FPCR = 0 (fg_env.h): no flush-to-zero.  Where x86 and
   NEON differ in an operation the kernels rely on (min/max with a NaN, masked loads), the x86 semantics are
   built here, so a lane's bits are those of the AVX2 kernel, whose 8-entry tables this ISA shares. */
#ifndef FG_SIMD_NEON_H
#define FG_SIMD_NEON_H
#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

typedef float32x4_t fg_fv;
typedef int32x4_t fg_iv;
typedef uint32x4_t fg_vm;                /* a compare's result: all-ones lanes */
typedef unsigned int fg_fm;              /* a lane mask as bits */
#define FG_F_W 4
#define FG_F_TAB32 0                     /* 8-entry tables: vqtbl2q_u8 looks up 32 bytes, one instruction */
#define FG_F_HAS_SCALEF 0
#define FG_F_HAS_SCATTER 0
#define FG_F_BV_IN_REG 1

#define FG_F_SET1 vdupq_n_f32
#define FG_F_FMA(a, b, c) vfmaq_f32(c, a, b)                  /* a*b + c, one rounding */
#define FG_F_FMS(a, b, c) vfmaq_f32(vnegq_f32(c), a, b)       /* a*b - c */
#define FG_F_FNMA(a, b, c) vfmsq_f32(c, a, b)                 /* c - a*b */
#define FG_F_MUL vmulq_f32
#define FG_F_ADD vaddq_f32
#define FG_F_SUB vsubq_f32
#define FG_F_DIV vdivq_f32
/* x86's: a > b ? a : b and a < b ? a : b (fmax/fmin return the NaN; the kernels need the second operand) */
#define FG_F_MAX(a, b) fg_f_max_x86(a, b)
#define FG_F_MIN(a, b) fg_f_min_x86(a, b)
static inline __attribute__((always_inline)) fg_fv fg_f_max_x86(fg_fv a, fg_fv b) {
    return vbslq_f32(vcgtq_f32(a, b), a, b);
}
static inline __attribute__((always_inline)) fg_fv fg_f_min_x86(fg_fv a, fg_fv b) {
    return vbslq_f32(vcltq_f32(a, b), a, b);
}
#define FG_F_ABS vabsq_f32
#define FG_F_ABSMIN(x, c) FG_F_MIN(FG_F_SET1(c), FG_F_ABS(x))      /* NaN stays NaN */
#define FG_F_ABSMIN_NAN_IS_C 0

#define FG_F_SET1I vdupq_n_s32
#define FG_F_ADDI vaddq_s32
#define FG_F_SLLI(v, n) vshlq_n_s32(v, n)
#define FG_F_SRLI(v, n) vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_s32(v), n))
#define FG_F_MAXI vmaxq_s32
#define FG_F_CASTI vreinterpretq_s32_f32
#define FG_F_CASTF vreinterpretq_f32_s32

#define FG_F_LT vcltq_f32
#define FG_F_LE vcleq_f32
#define FG_F_GT vcgtq_f32
#define FG_F_GE vcgeq_f32
#define FG_F_NLE(a, b) vmvnq_u32(vcleq_f32(a, b))
#define FG_F_NGE(a, b) vmvnq_u32(vcgeq_f32(a, b))
#define FG_F_NEQ(a, b) vmvnq_u32(vceqq_f32(a, b))
#define FG_F_UNORD(a, b) vmvnq_u32(vandq_u32(vceqq_f32(a, a), vceqq_f32(b, b)))
static inline __attribute__((always_inline)) fg_fm fg_f_bits(fg_vm m) {
    const uint32_t w[4] = {1, 2, 4, 8};
    return (fg_fm)vaddvq_u32(vandq_u32(m, vld1q_u32(w)));
}
#define FG_F_BITS fg_f_bits
#define FG_F_ANY(m) (vmaxvq_u32(m) != 0)
#define FG_F_VMOR vorrq_u32
#define FG_F_SEL(m, t, f) vbslq_f32(m, t, f)
#define FG_F_ZERO_IF(m, v) vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(v), m))
/* t where x's sign bit is set (as AVX2's blendv), else f */
#define FG_F_SEL_NEG(x, t, f) vbslq_f32(vreinterpretq_u32_s32(vshrq_n_s32(vreinterpretq_s32_f32(x), 31)), t, f)
static inline __attribute__((always_inline)) fg_fv fg_f_selb(fg_fm m, fg_fv t, fg_fv f) {
    const uint32_t w[4] = {1, 2, 4, 8};
    return vbslq_f32(vtstq_u32(vdupq_n_u32(m), vld1q_u32(w)), t, f);
}
#define FG_F_SELECT fg_f_selb

#define FG_F_LOADU vld1q_f32
#define FG_F_STOREU vst1q_f32
#define FG_F_STORE vst1q_f32
#define FG_F_STOREUI(p, v) vst1q_s32((int32_t*)(p), v)
/* no masked load or store: the first r lanes through a zeroed buffer (only a call's last partial vector) */
#define FG_F_TAILMASK(k, r) const int k = (int)(r)
static inline __attribute__((always_inline)) fg_fv fg_f_loadn(const float* p, int r) {
    float b[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    memcpy(b, p, (size_t)r * sizeof(float));
    return vld1q_f32(b);
}
static inline __attribute__((always_inline)) void fg_f_storen(float* p, int r, fg_fv v) {
    float b[4];
    vst1q_f32(b, v);
    memcpy(p, b, (size_t)r * sizeof(float));
}
#define FG_F_MASKLOAD(p, k) fg_f_loadn(p, k)
#define FG_F_MASKSTORE(p, k, v) fg_f_storen(p, k, v)
#define FG_F_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 3)
#define FG_F_PREFETCHW(p) __builtin_prefetch((const void*)(p), 1, 3)

/* 8-entry tables: lane index i (low 3 bits of idx) to the bytes 4i..4i+3 of the 32-byte row, one tbl.  The
   byte indices are a function of idx alone: the compiler forms them once for all of a function's lookups */
static inline __attribute__((always_inline)) fg_fv fg_f_tab8(const float* t, fg_iv idx) {
    uint32x4_t i = vandq_u32(vreinterpretq_u32_s32(idx), vdupq_n_u32(7));
    uint8x16_t b = vreinterpretq_u8_u32(vmlaq_n_u32(vdupq_n_u32(0x03020100u), i, 0x04040404u));
    return vreinterpretq_f32_u8(vqtbl2q_u8(vld1q_u8_x2((const uint8_t*)t), b));   /* the pair in registers */
}
#define FG_F_TAB(t) fg_f_tab8(t, idx)

/* 1/d to ~2^-31: the estimate (2^-8) and two Newton steps, so that what the remainder correction leaves of
   its error (its square, ~2^-62) cannot tip a rounding where AVX2's (2^-23, squared) does not */
static inline __attribute__((always_inline)) fg_fv fg_f_rcp(fg_fv d) {
    fg_fv r = vrecpeq_f32(d);
    r = vmulq_f32(r, vrecpsq_f32(d, r));
    return vmulq_f32(r, vrecpsq_f32(d, r));
}

/* x/2 correctly rounded for |x| <= 2^-30 (the contract: fg_simd.h), by integer arithmetic */
static inline __attribute__((always_inline)) fg_fv fg_f_tiny(fg_fv x) {
    int32x4_t xi = vreinterpretq_s32_f32(x);
    int32x4_t mag = vandq_s32(xi, vdupq_n_s32(0x7fffffff));
    int32x4_t pos = vreinterpretq_s32_u32(vcgtq_s32(xi, vdupq_n_s32(0)));        /* -1 where x > 0 */
    int32x4_t half = vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_s32(vsubq_s32(mag, pos)), 1));
    int32x4_t m = vbslq_s32(vcltq_s32(mag, vdupq_n_s32(0x01000000)), half,
                            vsubq_s32(mag, vdupq_n_s32(0x00800000)));
    return vreinterpretq_f32_s32(vorrq_s32(m, vbicq_s32(xi, vdupq_n_s32(0x7fffffff))));
}

/* compress: byte indices that move the lanes of mask m to the front (tbl); a lane's offset is its first
   byte index / 4 */
static uint8_t fg_f_cbyte[16][16] __attribute__((aligned(16)));
__attribute__((constructor)) static void fg_f_cbyte_init(void) {
    for (int m = 0; m < 16; m++)
        for (int j = 0, k = 0; j < 4; j++)
            if (m >> j & 1) {
                for (int b = 0; b < 4; b++)
                    fg_f_cbyte[m][4 * k + b] = (uint8_t)(4 * j + b);
                k++;
            }
}
typedef uint8x16_t fg_fc;
#define FG_F_COMPRESS_PREP(m) vld1q_u8(fg_f_cbyte[m])
#define FG_F_COMPRESS(c, m, v) vreinterpretq_f32_u8(vqtbl1q_u8(vreinterpretq_u8_f32(v), c))
#define FG_F_COMPRESS_IDX(c, m, bv) vaddq_s32(vreinterpretq_s32_u32(vshrq_n_u32(vandq_u32( \
    vreinterpretq_u32_u8(c), vdupq_n_u32(0xffu)), 2)), bv)

#endif
