/* float32 kernels of the exact GELU, x*Phi(x), and its gradient dy*(Phi(x) + x*phi(x)), in float32
   arithmetic on SIMD vectors (AVX-512: 16 lanes; AVX2: 8; NEON: 4, with AVX2's 8-entry tables and bits),
   written once on the primitives of fg_simd.h.  Compiled where FG_F32_SIMD; elsewhere (and in every build
   made with FASTGELU_F32_FWD=0) float32 takes the double path of _gelu_exact.pxi and these are stubs.

   Algorithm, with a = |x|: GELU = max(-0, x) - F and GELU' = 1 - G (x >= 0) or G (x < 0), F = a*Phi(-a),
   G = Phi(-a) - a*phi(a): no cancellation (F <= a/2, |G| <= 1/2); for x < 0 the result needs relative
   accuracy, so Phi(-a) decays inside exp(-a^2/2) with its argument formed exactly.
   - |x| up to R (and x > R where the clamp at R is exact): F and G from per-interval polynomials picked per
     lane by a register permute, no exp (fg_gelu_f32_central.h);
   - beyond: F = exp(-a^2/2) (C - r(a^2)), r rational; G = exp(-a^2/2) D(a), D from a table
     (fg_gelu_f32_tail.h), those lanes queued per chunk and redone (fg_f32_drive.h);
   - |x| <= 2^-30: x/2 correctly rounded by integer arithmetic (fg_f_tiny), the gradient 1/2;
   - gradient lanes a large dy could make wrong: recomputed in double (fg_f32_gradfix.h).
   A lane's result depends on its x (and dy) alone, whatever path it takes.

   Maximum error over all 2^32 inputs (tools/sweep_f32.py; when, and at which commit: docs/accuracy.md):
     forward    AVX-512 1.498 ulp (x = -0.2147808, central form), AVX2 1.595 (x = -0.2915032, central form)
     gradient   AVX-512 1.524 ulp (x = -13.241632, exp form),     AVX2 1.870 (x = 3.989125, central form's slot)
   NEON runs the AVX2 build's tables and gives its bits (docs/arm.md).
   Coefficients: tools/fit_gelu_f32.py writes fg_gelu_f32_tables.h. */
#ifndef FG_GELU_F32_H
#define FG_GELU_F32_H
#include "fg_simd.h"
#if FG_F32_SIMD
#include "fg_f32_drive.h"

static void fg_f_gelu_block(const float* x, float* y, ptrdiff_t n) {
    const float* dy = NULL;
    FG_F_CENTRAL_BLOCK(FG_F_GELU, x, dy, y, n)
}
static void fg_f_gelu_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {
    FG_F_CENTRAL_BLOCK(FG_F_GELU_GRAD, x, dy, y, n)
}
/* y = GELU(x)*u, y apart from x and u (the gated forward); the flags of fg_f_central_seg */
static ptrdiff_t fg_f_gelu_mul_block(const float* x, const float* u, float* y, ptrdiff_t n, ptrdiff_t* lost,
                                     int* tiny, int* carry) {
    FG_F_CENTRAL_MUL_BLOCK(FG_F_GELU, x, u, y, n, lost, tiny, carry)
}
#else
static void fg_f_gelu_block(const float* x, float* y, ptrdiff_t n) { (void)x; (void)y; (void)n; }
static void fg_f_gelu_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {
    (void)x; (void)dy; (void)y; (void)n; }
static ptrdiff_t fg_f_gelu_mul_block(const float* x, const float* u, float* y, ptrdiff_t n, ptrdiff_t* lost,
                                     int* tiny, int* carry) {
    (void)x; (void)u; (void)y; (void)n; (void)lost; (void)carry; *tiny = 0; return 0; }
#endif
#endif
