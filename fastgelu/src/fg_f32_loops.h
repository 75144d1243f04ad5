/* The plain loops of the float32 kernels: one kernel call a vector over an array, software prefetch, and
   for the gradients the double fix-up of fg_f32_gradfix.h after each chunk.  The tanh gradient runs these
   (fg_xsig_f32.h); the forwards and the exact and sigmoid gradients run fg_f32_drive.h. */
#ifndef FG_F32_LOOPS_H
#define FG_F32_LOOPS_H
#include "fg_f32_gradfix.h"
#if GX_F32_SIMD

#define GX_F_AHEAD 2048        /* bytes read ahead in software: the hardware prefetcher alone left out-of-cache
                                  arrays well below the in-cache speed (docs/performance.md); 1,024 and
                                  4,096 were no better */

/* the gradient loop of all three forms: grad(x, dy, form) one vector, in chunks of GX_F_GCHUNK vectors.  A
   vector with suspect lanes has its x and dy saved (before y, which may be either, is stored) and is checked
   in double after its chunk, so the loop holds no call.  The check is 4 operations per vector (a pass over
   dy to skip it where all |dy| <= 1 cost as much) */
#define GX_F_GCHUNK 64
#define GX_F_GRAD_LOOP(grad, form, lim)                                                                    \
    float sx[GX_F_GCHUNK][GX_F_W], sd[GX_F_GCHUNK][GX_F_W];                                               \
    ptrdiff_t si[GX_F_GCHUNK];                                                                             \
    unsigned int sm[GX_F_GCHUNK];                                                                          \
    ptrdiff_t i = 0;                                                                                       \
    while (i < n) {                                                                                        \
        ptrdiff_t end = n - i > GX_F_GCHUNK * GX_F_W ? i + GX_F_GCHUNK * GX_F_W : n;                       \
        int ns = 0;                                                                                        \
        for (; i + GX_F_W <= end; i += GX_F_W) {                                                           \
            GX_F_PREFETCH((const char*)(x + i) + GX_F_AHEAD);                               \
            GX_F_PREFETCH((const char*)(dy + i) + GX_F_AHEAD);                              \
            gx_fv yv = grad(GX_F_LOADU(x + i), GX_F_LOADU(dy + i), form);                                 \
            unsigned int m = gx_f_suspect(GX_F_LOADU(x + i), yv, lim);                                    \
            if (__builtin_expect(m != 0, 0)) {                                                             \
                GX_F_STOREU(sx[ns], GX_F_LOADU(x + i));                                                    \
                GX_F_STOREU(sd[ns], GX_F_LOADU(dy + i));                                                   \
                si[ns] = i;                                                                                \
                sm[ns++] = m;                                                                              \
            }                                                                                              \
            GX_F_STOREU(y + i, yv);                                                                        \
        }                                                                                                  \
        if (i < end) {                          /* the last, partial vector (end == n) */                  \
            GX_F_TAILMASK(k, end - i);                                                                     \
            gx_fv xv = GX_F_MASKLOAD(x + i, k), dv = GX_F_MASKLOAD(dy + i, k);                            \
            gx_fv yv = grad(xv, dv, form);                                                                 \
            unsigned int m = gx_f_suspect(xv, yv, lim) & ((1u << (end - i)) - 1u);                         \
            if (m != 0) {                                                                                  \
                GX_F_STOREU(sx[ns], xv);                                                                   \
                GX_F_STOREU(sd[ns], dv);                                                                   \
                si[ns] = i;                                                                                \
                sm[ns++] = m;                                                                              \
            }                                                                                              \
            GX_F_MASKSTORE(y + i, k, yv);                                                                  \
            i = end;                                                                                       \
        }                                                                                                  \
        for (int s_ = 0; s_ < ns; s_++)                                                                    \
            gx_f_grad_fix(sx[s_], sd[s_], y + si[s_], sm[s_], lim, form);                                  \
    }
#endif
#endif
