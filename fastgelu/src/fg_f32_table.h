/* The records of the float32 coefficient tables: what tools/fit_gelu_f32.py states of each table it writes
   (fg_f32_tables.h), and all the kernels read of it.  Every record is a constant the kernels index by a
   compile-time function (fg_f32_fns.h), so each field folds into the code as a literal would. */
#ifndef FG_F32_TABLE_H
#define FG_F32_TABLE_H
#include "fg_simd.h"
#if FG_F32_SIMD

#define FG_F_CN (FG_F_TAB32 ? 32 : 8)   /* entries a row: the intervals one register permute serves */

/* A central table: F(a) = a*Phi(-a) (a forward) or G(a) = GELU'(-a) (a gradient) of a = |x| on intervals
   i = round(a*(K2*a + K)), on each C0 + u*(C1 + ...) in u = a - L_i (fg_f32_central.h) */
typedef struct {
    float R;                    /* the intervals reach a = R: x < -R is the tail's (|x| > R without a slot) */
    float RP;                   /* a's clamp for x > 0: the slot's end, or R where there is no slot */
    int slot;                   /* 1: the last interval is a positive slot, x in (R, RP], where y = x - F
                                   (dy - G dy) needs F (G) only to a fraction of the result's ulp */
    float H;                    /* L_i = i*H; 0: L_i is row 0 */
    float K, K2;                /* the interval index; K2 = 0: even intervals */
    int deg;                    /* the polynomials' degree */
    float err;                  /* the fit's largest weighted error on the central intervals */
    float slot_err;             /* the slot's, in ulps of the result (0: no slot) */
    const float (*c)[FG_F_CN];  /* rows L, C0, ..., C_deg: entry i of row k + 1 is C_k of interval i */
} fg_f_table;

/* The exp form's table (the exact gradient beyond its central table, fg_gelu_f32.h): D(a) on intervals
   picked by the bits of a + 1, (bits(a + 1) >> shift) & (FG_F_CN - 1), D = H + (C0 + u*(C1 + ...)) in
   u = a - L */
typedef struct {
    int shift;
    int deg;
    float err;                  /* the fit's largest weighted error */
    const float* L;             /* each interval's start */
    const float (*c)[FG_F_CN];  /* rows H, C0, ..., C_deg */
} fg_f_exp_table;

#endif
#endif
