#ifndef FG_EXACT_H
#define FG_EXACT_H
/* C constants rather than Cython module globals: a global double could alias the output pointer,
   which costs reloads or runtime alias checks in the vectorized loops */
#define FG_INV_SQRT2PI_HI 0.3989422804014327            /* 1/sqrt(2pi) = FG_INV_SQRT2PI_HI + FG_INV_SQRT2PI_LO */
#define FG_INV_SQRT2PI_LO (-2.49232720227773e-17)
#define FG_SQRT2_OVER_PI_HI 0.7978845608028654           /* 2/sqrt(2pi) */
#define FG_SQRT2_OVER_PI_LO (-4.98465440455546e-17)
#define FG_SCALE_DN 5.421010862427522e-20     /* 2^-64, undoes the 2^64 passed to exp_dd_scaled */
/* float64: |x| <= these is the central piece of GELU and of GELU' (tools/fit_exact.py B1, B1G) */
#define FG_CENTRAL 1.25
#define FG_CENTRAL_GRAD 1.0
#endif
