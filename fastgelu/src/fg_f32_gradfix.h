/* Gradients in double, lane by lane, where the float32 kernels cannot be trusted with a large dy:
   - far in the negative tail the kernels clamp (exact: |x| at AMAX; tanh and sigmoid: z at Z_MAX), which is
     right only while dy GELU'(x) underflows, i.e. for |dy| <= 1; a larger dy can lift the product into
     range (1e30 * GELU'(-15) = -4e-22);
   - an intermediate (the scaled G dy, or q dy) can overflow for |dy| > ~2^61 while the result does not,
     and dy = inf makes inf - inf where the result is inf.
   So a vector with x < -lim or a result that is not finite (rare: a cold call) has those lanes recomputed
   here, unless x or dy is NaN (then the result is NaN: the AVX-512 exact kernel computes NaN x as
   x = AMAX).  The driver (fg_f32_drive.h) finds such lanes among the tail lanes (fg_f_suspect) and the
   central results that are not finite, and calls fg_f_grad_fix on them. */
#ifndef FG_F32_GRADFIX_H
#define FG_F32_GRADFIX_H
#include "fg_f32_fns.h"
#if FG_F32_SIMD
#include <math.h>

/* the gradient of a form at a lane, in double */
static double fg_f_grad_double(float xf, float dyf, fg_f_form form) {
    double x = xf, w, t, s, sig, oms;
    /* Each clamp keeps GELU'(x) a normal double of the right sign (exact: -1e-297 at -37; tanh: -5e-259 at
       -20; sigmoid: -6e-279 at -380) that times any finite float dy still rounds to the float result of the
       unclamped value (+-0), while dy = +-inf gives -+inf, the exact product's limit.  Farther out GELU'
       underflows to +-0 in double: inf * 0 would be NaN, and the exact form's sum a +0 of the wrong sign.
       x = -inf is not clamped: GELU'(-inf) is 0 itself (inf * 0 = NaN). */
    if (x == -INFINITY)
        return (double)dyf * 0.0;
    if (form == FG_F_FORM_EXACT) {  /* Phi(x) + x phi(x) */
        x = x < -37.0 ? -37.0 : (x > 37.0 ? 37.0 : x);
        return (double)dyf * (0.5 * erfc(-x * 0.7071067811865476) + x * exp(-0.5 * x * x) * 0.3989422804014327);
    }
    /* sigma (1 + x w' (1 - sigma)) with t = exp(-|w|): no overflow, no cancellation in sigma */
    double L = form == FG_F_FORM_TANH ? 20.0 : 380.0;
    x = x < -L ? -L : (x > L ? L : x);
    double dw = form == FG_F_FORM_TANH ? 1.5957691216057308 * (1.0 + 3.0 * 0.044715 * x * x) : 1.702;
    w = form == FG_F_FORM_TANH ? 1.5957691216057308 * x * (1.0 + 0.044715 * x * x) : 1.702 * x;
    t = exp(-fabs(w));
    s = 1.0 / (1.0 + t);
    sig = w >= 0 ? s : t * s;
    oms = w >= 0 ? t * s : s;
    return (double)dyf * (sig * (1.0 + x * dw * oms));
}
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
