#ifndef FG_EXACT_H
#define FG_EXACT_H
/* C constants rather than Cython module globals: a global double could alias the output pointer,
   which costs reloads or runtime alias checks in the vectorized loops */
#define GX_C_HI 0.3989422804014327            /* 1/sqrt(2pi) = GX_C_HI + GX_C_LO */
#define GX_C_LO (-2.49232720227773e-17)
#define GX_C2_HI 0.7978845608028654           /* 2/sqrt(2pi) */
#define GX_C2_LO (-4.98465440455546e-17)
#define GX_SCALE_DN 5.421010862427522e-20     /* 2^-64, undoes the 2^64 passed to exp_dd_scaled */
/* float64: |x| <= these is the central piece of GELU and of GELU' (tools/fit_exact.py B1, B1G) */
#define GX_CENTRAL 1.25
#define GX_CENTRAL_GRAD 1.0
#endif
