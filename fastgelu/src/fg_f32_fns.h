/* The float32 functions: the one enum every float32 kernel takes, each function's record, and the list of
   forms the entry points are made from (fg_f32_kernels.h).  A kernel is compiled for one function (its fn a
   compile-time constant), so every field of its record folds into its code.  A new form: its header (its
   tails and its gradient in double), its two functions here (enum, record, tail and fix-up formulas, a line
   of FG_F32_FORMS), its tables (tools/fit_gelu_f32.py) and its entry points in _c.pxd. */
#ifndef FG_F32_FNS_H
#define FG_F32_FNS_H
#include "fg_simd.h"

/* FG_F32_FORMS(X): X(name, forward, gradient) a form, its entry points fg_f_<name>_block, _grad_block and
   _mul_block */
#define FG_F32_FORMS(X)                                                                                    \
    X(gelu, FG_F_GELU, FG_F_GELU_GRAD)                                                                     \
    X(tanh, FG_F_GELU_TANH, FG_F_GELU_TANH_GRAD)                                                           \
    X(sig, FG_F_GELU_SIGMOID, FG_F_GELU_SIGMOID_GRAD)

/* the order they were added in; the numbers are in no file and no call */
typedef enum {
    FG_F_GELU,
    FG_F_GELU_GRAD,
    FG_F_GELU_TANH,
    FG_F_GELU_SIGMOID,
    FG_F_GELU_SIGMOID_GRAD,
    FG_F_GELU_TANH_GRAD,
    FG_F_NFN
} fg_f_fn;

#if FG_F32_SIMD
#include "fg_gelu_f32.h"
#include "fg_xsig_f32.h"

/* a function's form: the family of formulas its tail and its double fix-ups compute */
typedef enum { FG_F_FORM_EXACT, FG_F_FORM_TANH, FG_F_FORM_SIGMOID } fg_f_form;

typedef struct {
    int grad;                   /* 1: dy GELU'(x), from x and dy; 0: GELU(x) */
    fg_f_form form;
    float far;                  /* gradients: from x < -far on, the tail's clamp holds only for |dy| <= 1
                                   (fg_f32_gradfix.h) */
    const fg_f_table* central;  /* the central form's table (fg_f32_central.h) */
} fg_f_rec;

static const fg_f_rec fg_f_fns[FG_F_NFN] = {
    [FG_F_GELU] = {0, FG_F_FORM_EXACT, 0.0f, &fg_f_gelu_central},
    [FG_F_GELU_GRAD] = {1, FG_F_FORM_EXACT, FG_F_AMAX, &fg_f_gelu_grad_central},
    [FG_F_GELU_TANH] = {0, FG_F_FORM_TANH, 0.0f, &fg_f_gelu_tanh_central},
    [FG_F_GELU_SIGMOID] = {0, FG_F_FORM_SIGMOID, 0.0f, &fg_f_gelu_sigmoid_central},
    [FG_F_GELU_SIGMOID_GRAD] = {1, FG_F_FORM_SIGMOID, FG_F_XFAR_SIG, &fg_f_gelu_sigmoid_grad_central},
    [FG_F_GELU_TANH_GRAD] = {1, FG_F_FORM_TANH, FG_F_XFAR_TANH, &fg_f_gelu_tanh_grad_central},
};

/* fn's result for the lanes beyond its central table (the tail: fg_f32_route.h): GELU(x), or dy GELU'(x)
   before the double fix-ups */
static inline __attribute__((always_inline)) fg_fv fg_f_tail_formula(fg_fv x, fg_fv dy, const fg_f_fn fn) {
    switch (fn) {
    case FG_F_GELU: return fg_f_gelu_tail(x);
    case FG_F_GELU_GRAD: return fg_f_gelu_grad(x, dy);
    case FG_F_GELU_TANH: return fg_f_tanh_tail(x);
    case FG_F_GELU_TANH_GRAD: return fg_f_xsig_grad(x, dy, 1);
    case FG_F_GELU_SIGMOID: return fg_f_xsig(x, 0);
    default: return fg_f_xsig_grad(x, dy, 0);
    }
}

/* dy GELU'(x) of a form in double, one lane (fg_f32_gradfix.h).  x = -inf: GELU'(-inf) is 0 itself, so
   dy = inf gives NaN (inf * 0) as the exact product does */
static double fg_f_grad_double(float xf, float dyf, fg_f_form form) {
    if ((double)xf == -INFINITY)
        return (double)dyf * 0.0;
    return form == FG_F_FORM_EXACT ? fg_gelu_grad_double(xf, dyf)
                                   : fg_xsig_grad_double(xf, dyf, form == FG_F_FORM_TANH);
}

#endif
#endif
