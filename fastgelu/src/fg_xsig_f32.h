/* The tanh and sigmoid forms of GELU, x*sigma(w(x)) with w = 2 sqrt(2/pi) (x + 0.044715 x^3) (the tanh
   form: 0.5x(1 + tanh(w/2))) or w = 1.702x, forward and gradient, in float32 arithmetic on SIMD vectors
   (fg_simd.h).  Compiled where FG_F32_SIMD, as fg_gelu_f32.h.

   Algorithm (fg_xsig_f32_math.h), with T = exp(-|w|): x sigma(w) = x/(1 + T) for x >= 0 and -|x| T/(1 + T)
   for x < 0; the gradient sigma (1 + x w' (1 - sigma)) = 1 + Q or -Q, Q = T U/(1 + T)^2, U = |x| w'(|x|) -
   (1 + T): no cancellation, no overflow.  z = |w| log2(e) as a float pair (constants as hi + lo, x^2 and
   the products split by FMA: exp's argument must be right to ~2^-26 absolute up to z = 180), 2^-z = 2^-m 2^f
   with the exact form's Q (fg_f32_common.h), and every quotient by 1 + T or (1 + T)^2 corrected through its
   FMA remainder, so that the reciprocal may be an estimate (vrcp14ps, vrcpps, vrecpe: no division): T's
   error and one rounding.  The forwards run the central form of fg_gelu_f32_central.h (tables, no exp)
   for x >= -R and the formula beyond (fg_f_tanh_tail, fg_f_xsig; through the queue of fg_f32_drive.h); so
   do the gradients (w is odd, so GELU'(x) + GELU'(-x) = 1: their tables hold GELU'(-a); the formula
   fg_f_xsig_grad beyond R); gradient lanes a large dy could make wrong are recomputed in double
   (fg_f32_gradfix.h).

   Maximum error over all 2^32 inputs (tools/sweep_f32.py; when, and at which commit: docs/accuracy.md):
     tanh forward       AVX-512 1.598 ulp (x = -5.297395), AVX2 1.782 (x = -2.791164, central form)
     sigmoid forward    1.639 ulp (x = -44.593903, the formula's), both builds; central form AVX-512 1.142
                        (x = -0.14149077), AVX2 1.420 (x = -0.35188538)
     tanh gradient      AVX-512 1.652 ulp (x = -10.178195, the formula's), AVX2 1.733 (x = -3.386892,
                        central form); central form AVX-512 1.130 (x = 1.4828203)
     sigmoid gradient   1.651 ulp (x = -53.15698, the formula's), both builds; central form AVX-512 1.159
                        (x = 0.9504925), AVX2 1.376 (x = -4.4465976)
   NEON gives the AVX2 build's bits, the gradients' last bit aside where their result is below 2^-100
   (docs/arm.md). */
#ifndef FG_XSIG_F32_H
#define FG_XSIG_F32_H
#include "fg_simd.h"
#if FG_F32_SIMD
#include "fg_xsig_f32_math.h"
#include "fg_f32_drive.h"

static void fg_f_tanh_block(const float* x, float* y, ptrdiff_t n) {   /* its central form: fg_f32_drive.h */
    const float* dy = NULL;
    FG_F_CENTRAL_BLOCK(FG_F_GELU_TANH, x, dy, y, n)
}
static ptrdiff_t fg_f_tanh_mul_block(const float* x, const float* u, float* y, ptrdiff_t n, ptrdiff_t* lost,
                                     int* tiny, int* carry) {  /* fg_f_gelu_mul_block's */
    FG_F_CENTRAL_MUL_BLOCK(FG_F_GELU_TANH, x, u, y, n, lost, tiny, carry)
}
static void fg_f_sig_block(const float* x, float* y, ptrdiff_t n) {    /* its central form: fg_f32_drive.h */
    const float* dy = NULL;
    FG_F_CENTRAL_BLOCK(FG_F_GELU_SIGMOID, x, dy, y, n)
}
static ptrdiff_t fg_f_sig_mul_block(const float* x, const float* u, float* y, ptrdiff_t n, ptrdiff_t* lost,
                                    int* tiny, int* carry) {
    FG_F_CENTRAL_MUL_BLOCK(FG_F_GELU_SIGMOID, x, u, y, n, lost, tiny, carry)
}
static void fg_f_tanh_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {
    FG_F_CENTRAL_BLOCK(FG_F_GELU_TANH_GRAD, x, dy, y, n)     /* its central form: fg_f32_drive.h */
}
static void fg_f_sig_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {
    FG_F_CENTRAL_BLOCK(FG_F_GELU_SIGMOID_GRAD, x, dy, y, n)      /* its central form: fg_f32_drive.h */
}
#else
static void fg_f_tanh_block(const float* x, float* y, ptrdiff_t n) { (void)x; (void)y; (void)n; }
static void fg_f_sig_block(const float* x, float* y, ptrdiff_t n) { (void)x; (void)y; (void)n; }
static ptrdiff_t fg_f_sig_mul_block(const float* x, const float* u, float* y, ptrdiff_t n, ptrdiff_t* lost,
                                    int* tiny, int* carry) {
    (void)x; (void)u; (void)y; (void)n; (void)lost; (void)carry; *tiny = 0; return 0; }
static ptrdiff_t fg_f_tanh_mul_block(const float* x, const float* u, float* y, ptrdiff_t n, ptrdiff_t* lost,
                                     int* tiny, int* carry) {
    (void)x; (void)u; (void)y; (void)n; (void)lost; (void)carry; *tiny = 0; return 0; }
static void fg_f_tanh_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {
    (void)x; (void)dy; (void)y; (void)n; }
static void fg_f_sig_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {
    (void)x; (void)dy; (void)y; (void)n; }
#endif
#endif
