/* Gradients in double, lane by lane, where the float32 kernels cannot be trusted with a large dy:
   - far in the negative tail the kernels clamp (exact: |x| at AMAX; tanh and sigmoid: z at Z_MAX), which is
     right only while dy GELU'(x) underflows, i.e. for |dy| <= 1; a larger dy can lift the product into
     range (1e30 * GELU'(-15) = -4e-22);
   - an intermediate (the scaled G dy, or q dy) can overflow for |dy| > ~2^61 while the result does not,
     and dy = inf makes inf - inf where the result is inf.
   So a vector with x < -lim or a result that is not finite (rare: a cold call) has those lanes recomputed
   here, unless x or dy is NaN (then the result is NaN: the AVX-512 exact kernel computes NaN x as
   x = AMAX).  The driver finds such lanes among the tail lanes (fg_f_suspect, fg_f32_route.h) and the
   central results that are not finite (fg_f32_chunk.h), and calls fg_f_grad_fix on them; each form's
   formula in double is its header's (fg_f_grad_double, fg_f32_fns.h). */
#ifndef FG_F32_GRADFIX_H
#define FG_F32_GRADFIX_H
#include "fg_f32_fns.h"
#if FG_F32_SIMD

/* y: the kernel's results for x[0..], dy[0..] (copies of the inputs: y may have overwritten them) */
static void fg_f_grad_fix(const float* x, const float* dy, float* y, unsigned int m, float lim,
                          fg_f_form form) {
    for (; m; m &= m - 1u) {
        int j = __builtin_ctz(m);
        if (isnan(x[j]) || isnan(dy[j])) {
            y[j] = x[j] + dy[j];
            continue;
        }
        if ((x[j] < -lim && fabsf(dy[j]) > 1.0f) || !isfinite(y[j]))
            y[j] = (float)fg_f_grad_double(x[j], dy[j], form);
    }
}
/* lanes with x < -lim or a result that is inf or NaN (or x NaN), as bits: y*0 - x is -x or NaN, one
   unordered compare */
static inline __attribute__((always_inline)) unsigned int fg_f_suspect(fg_fv x, fg_fv y, float lim) {
    fg_fv u = FG_F_FMS(y, FG_F_SET1(0.0f), x);
    return (unsigned int)FG_F_BITS(FG_F_NLE(u, FG_F_SET1(lim)));
}
#endif
#endif
