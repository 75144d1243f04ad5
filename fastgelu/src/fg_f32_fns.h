/* The six float32 functions: the one enum every float32 kernel takes, and each function's record.  A kernel
   is compiled for one function (its fn a compile-time constant), so every field folds into its code. */
#ifndef FG_F32_FNS_H
#define FG_F32_FNS_H
#include "fg_gelu_f32_tail.h"
#include "fg_xsig_f32_math.h"
#if FG_F32_SIMD

/* the order they were added in (the numbers are in no file and no call) */
typedef enum {
    FG_F_GELU,
    FG_F_GELU_GRAD,
    FG_F_GELU_TANH,
    FG_F_GELU_SIGMOID,
    FG_F_GELU_SIGMOID_GRAD,
    FG_F_GELU_TANH_GRAD,
    FG_F_NFN
} fg_f_fn;

/* the forms: a function's formula family, which its double fix-ups compute (fg_f32_gradfix.h) */
typedef enum { FG_F_FORM_EXACT, FG_F_FORM_TANH, FG_F_FORM_SIGMOID } fg_f_form;

typedef struct {
    int grad;                   /* 1: dy GELU'(x), from x and dy; 0: GELU(x) */
    fg_f_form form;
    float far;                  /* gradients: from x < -far on, the tail's clamp holds only for |dy| <= 1
                                   (fg_f32_gradfix.h) */
    const fg_f_table* central;  /* the central form's table (fg_gelu_f32_central.h) */
} fg_f_rec;

static const fg_f_rec fg_f_fns[FG_F_NFN] = {
    [FG_F_GELU] = {0, FG_F_FORM_EXACT, 0.0f, &fg_f_gelu_central},
    [FG_F_GELU_GRAD] = {1, FG_F_FORM_EXACT, FG_F_AMAX, &fg_f_gelu_grad_central},
    [FG_F_GELU_TANH] = {0, FG_F_FORM_TANH, 0.0f, &fg_f_gelu_tanh_central},
    [FG_F_GELU_SIGMOID] = {0, FG_F_FORM_SIGMOID, 0.0f, &fg_f_gelu_sigmoid_central},
    [FG_F_GELU_SIGMOID_GRAD] = {1, FG_F_FORM_SIGMOID, FG_F_XFAR_SIG, &fg_f_gelu_sigmoid_grad_central},
    [FG_F_GELU_TANH_GRAD] = {1, FG_F_FORM_TANH, FG_F_XFAR_TANH, &fg_f_gelu_tanh_grad_central},
};

#endif
#endif
