/* The float32 kernels' entry points, three a form of FG_F32_FORMS (fg_f32_fns.h), the header Cython includes
   for them (_c.pxd) and tools/gelu_f32_kernel.py compiles alone:
     fg_f_<form>_block(x, y, n)                              y = GELU(x); y may be x
     fg_f_<form>_grad_block(x, dy, y, n)                     y = dy GELU'(x); y may be x or dy
     fg_f_<form>_mul_block(x, u, y, n, lost, tiny, carry)    y = GELU(x) u, y apart from x and u (the gated
                                                             forward: fg_f_central_seg's mul, fg_f32_drive.h)
   Each form's algorithm and error bound: its header (fg_gelu_f32.h, fg_xsig_f32.h).  Compiled where
   FG_F32_SIMD (fg_simd.h); elsewhere, and in every build made with FASTGELU_F32_FWD=0, float32 takes the
   double paths of the .pxi files and these are stubs. */
#ifndef FG_F32_KERNELS_H
#define FG_F32_KERNELS_H
#include "fg_f32_fns.h"
#if FG_F32_SIMD
#include "fg_f32_drive.h"

#define FG_F_ENTRIES(name, fwd, grad)                                                                      \
    static void fg_f_##name##_block(const float* x, float* y, ptrdiff_t n) {                               \
        const float* dy = NULL;                                                                            \
        FG_F_CENTRAL_BLOCK(fwd, x, dy, y, n)                                                               \
    }                                                                                                      \
    static void fg_f_##name##_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {         \
        FG_F_CENTRAL_BLOCK(grad, x, dy, y, n)                                                              \
    }                                                                                                      \
    static ptrdiff_t fg_f_##name##_mul_block(const float* x, const float* u, float* y, ptrdiff_t n,        \
                                             ptrdiff_t* lost, int* tiny, int* carry) {                     \
        FG_F_CENTRAL_MUL_BLOCK(fwd, x, u, y, n, lost, tiny, carry)                                         \
    }
#else
#define FG_F_ENTRIES(name, fwd, grad)                                                                      \
    static void fg_f_##name##_block(const float* x, float* y, ptrdiff_t n) { (void)x; (void)y; (void)n; } \
    static void fg_f_##name##_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {         \
        (void)x; (void)dy; (void)y; (void)n;                                                               \
    }                                                                                                      \
    static ptrdiff_t fg_f_##name##_mul_block(const float* x, const float* u, float* y, ptrdiff_t n,        \
                                             ptrdiff_t* lost, int* tiny, int* carry) {                     \
        (void)x; (void)u; (void)y; (void)n; (void)lost; (void)carry;                                       \
        *tiny = 0;                                                                                         \
        return 0;                                                                                          \
    }
#endif
FG_F32_FORMS(FG_F_ENTRIES)
#undef FG_F_ENTRIES

#endif
