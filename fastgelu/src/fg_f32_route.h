/* Where each lane of a float32 kernel gets its result: the central form (fg_f32_central.h) for x >= -R (and
   x > R where the table reaches or has a positive slot), the tail (fn's formula, fg_f32_fns.h) for the rest;
   which lanes those are (fg_f_tail_mask), how a chunk sums them up in one operation a vector
   (fg_f_summary), which gradient results the central form cannot be trusted with (fg_f_grad_bad), and
   which forward results lost their relative accuracy before a gated product (fg_f_lost_mask).  Used by the
   queue (fg_f32_queue.h) and the chunk driver (fg_f32_chunk.h). */
#ifndef FG_F32_ROUTE_H
#define FG_F32_ROUTE_H
#include "fg_f32_central.h"
#include "fg_f32_gradfix.h"
#if FG_F32_SIMD

/* the tail's result for the lanes m of a vector: fn's formula (fg_f_tail_formula), and for a gradient the
   lanes it cannot be trusted with recomputed in double (fg_f32_gradfix.h) */
static inline __attribute__((always_inline)) fg_fv fg_f_tail(fg_fv x, fg_fv dy, fg_fm m, const fg_f_fn fn) {
    fg_fv r = fg_f_tail_formula(x, dy, fn);
    if (!fg_f_fns[fn].grad)
        return r;
    const float lim = fg_f_fns[fn].far;
    unsigned int s = fg_f_suspect(x, r, lim) & m;
    if (s) {
        float sxl[FG_F_W] __attribute__((aligned(64))), sdl[FG_F_W] __attribute__((aligned(64)));
        float rr[FG_F_W] __attribute__((aligned(64)));
        FG_F_STORE(sxl, x);
        FG_F_STORE(sdl, dy);
        FG_F_STORE(rr, r);
        fg_f_grad_fix(sxl, sdl, rr, s, lim, fg_f_fns[fn].form);
        r = FG_F_LOADU(rr);
    }
    return r;
}

/* the lanes whose forward result r has lost its relative accuracy: below the normal range from a nonzero x
   (the gated forward redoes them in double: _gated.pxi's gm_lost) */
static inline __attribute__((always_inline)) fg_fm fg_f_lost_mask(fg_fv x, fg_fv r) {
    return FG_F_BITS(FG_F_LT(FG_F_ABS(r), FG_F_SET1(0x1p-126f))) & FG_F_BITS(FG_F_NEQ(x, FG_F_SET1(0.0f)));
}

/* the lanes beyond R of a table with a positive slot, or of any table with 32 entries, are x < -R alone */
static inline __attribute__((always_inline)) int fg_f_onesided(const fg_f_fn fn) {
    return FG_F_TAB32 || fg_f_fns[fn].central->slot;
}
/* Which lanes of a vector the tail takes, from x alone: only x < -R where x > R is exact from the central
   form (the 32-entry tables reach far enough that the clamp at R is exact; a table with a positive slot),
   else |x| > R; the gradient's also x NaN where FG_F_ABSMIN gives it a number (or, without a positive
   slot, where it is NaN: NLE) */
static inline __attribute__((always_inline)) fg_fm fg_f_tail_mask(fg_fv x, const fg_f_fn fn) {
#ifdef FG_F_REACH       /* tools/bound_f32.py --reach only: the tables' results taken out to this |x|, wrong */
    const float R = FG_F_REACH;
#else
    const float R = fg_f_fns[fn].central->R;
#endif
    if (fg_f_onesided(fn))    /* x > R takes the clamp or the positive slot (else the NaN x: fg_f_grad_bad) */
        return fg_f_fns[fn].grad && FG_F_ABSMIN_NAN_IS_C ? FG_F_BITS(FG_F_NGE(x, FG_F_SET1(-R)))
                                                                : FG_F_BITS(FG_F_LT(x, FG_F_SET1(-R)));
    if (fg_f_fns[fn].grad)
        return FG_F_BITS(FG_F_NLE(FG_F_ABS(x), FG_F_SET1(R)));
    return FG_F_BITS(FG_F_GT(FG_F_ABS(x), FG_F_SET1(R)));
}

/* a chunk's summary for the list mode, one operation a vector: acc holds a tail lane (fg_f_tail_mask) if
   any vector had one: one-sided, the least x (FG_F_MIN returns its second operand, acc, for x NaN, not a
   tail lane there), or, for a gradient whose NaN is a tail lane, the tail lanes' x themselves; two-sided,
   the largest |x| (the gradient's as an integer: NaN above inf) */
static inline __attribute__((always_inline)) fg_fv fg_f_summary(fg_fv acc, fg_fv x, const fg_f_fn fn) {
    if (fg_f_onesided(fn))
        return fg_f_fns[fn].grad && FG_F_ABSMIN_NAN_IS_C ? FG_F_SELECT(fg_f_tail_mask(x, fn), x, acc)
                                                                : FG_F_MIN(x, acc);
    fg_fv ax = FG_F_ABS(x);
    return fg_f_fns[fn].grad ? FG_F_CASTF(FG_F_MAXI(FG_F_CASTI(acc), FG_F_CASTI(ax))) : FG_F_MAX(ax, acc);
}

/* the central form of one vector (dy: gradient only), *m its tail lanes (fg_f_tail_mask); the gradient's
   results that are not finite are the chunk's to find (fg_f_grad_bad) */
static inline __attribute__((always_inline)) fg_fv fg_f_central_v(fg_fv x, fg_fv dy, fg_fm* m, const fg_f_fn fn,
                                                                  const int chk, int* seen) {
    *m = fg_f_tail_mask(x, fn);
    return fg_f_fns[fn].grad ? fg_f_grad_c(x, dy, fn) : fg_f_fwd_c(x, fn, chk, seen);
}

static inline __attribute__((always_inline)) int fg_f_anynan(fg_fv v) {
    return FG_F_BITS(FG_F_UNORD(v, v)) != 0;
}

/* the gradient's central results y that are not finite (a huge or infinite dy; with an 8-entry table's
   positive slot: also x NaN, and |y| > 2^126, as dy (1 - G) near the overflow threshold needs G to more
   than the slot's absolute accuracy to round to inf or to the largest float rightly) outside the tail
   lanes: redone through the tail (fg_f_grad_fix's double check) */
static inline __attribute__((always_inline)) fg_fm fg_f_grad_bad(fg_fv x, fg_fv y, const fg_f_fn fn) {
    const float R = fg_f_fns[fn].central->R;
    const int pos = fg_f_fns[fn].central->slot;
    fg_fm mf = FG_F_TAB32 ? (fg_fm)fg_f_suspect(x, y, R)
             : pos ? FG_F_BITS(FG_F_NLE(FG_F_ABS(y), FG_F_SET1(0x1p126f)))
                   : FG_F_BITS(FG_F_NLE(FG_F_FMA(y, FG_F_SET1(0.0f), FG_F_ABS(x)), FG_F_SET1(R)));
    return mf & (fg_fm)~fg_f_tail_mask(x, fn);
}
#endif
#endif
