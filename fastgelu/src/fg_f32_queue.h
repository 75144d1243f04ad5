/* The tail-lane queue of the float32 kernels: a chunk's tail lanes (fg_f_tail_mask, fg_f32_route.h) are
   compressed into it, their x (a gradient's dy too) and offsets, and computed a vector at a time through the
   tail after the chunk, each result stored to its offset; a gated forward's times u there, and the offsets
   of the lanes whose result lost its accuracy before the product handed back. */
#ifndef FG_F32_QUEUE_H
#define FG_F32_QUEUE_H
#include "fg_f32_route.h"
#if FG_F32_SIMD

#define FG_F_LIST 64                /* vectors a chunk: the queue holds a chunk's tail lanes */
/* a chunk's tail lanes and fewer than a vector's carried from the chunks before, x (gradient: and dy) and
   offsets, compressed */
typedef struct {
    float x[FG_F_LIST * FG_F_W + 2 * FG_F_W] __attribute__((aligned(64)));
    float d[FG_F_LIST * FG_F_W + 2 * FG_F_W] __attribute__((aligned(64)));
    int i[FG_F_LIST * FG_F_W + 2 * FG_F_W] __attribute__((aligned(64)));
} fg_f_tailq;

/* appends the lanes m of a vector at offset base (bv: base in every lane) after the first n (full-width
   stores); returns the new n */
static inline __attribute__((always_inline)) int fg_f_tailq_pushv(fg_f_tailq* q, int n, fg_fm m, fg_fv x,
                                                                  fg_fv d, fg_iv bv, const int grad) {
    fg_fc c = FG_F_COMPRESS_PREP(m);
    FG_F_STOREU(q->x + n, FG_F_COMPRESS(c, m, x));
    if (grad)
        FG_F_STOREU(q->d + n, FG_F_COMPRESS(c, m, d));
    FG_F_STOREUI(q->i + n, FG_F_COMPRESS_IDX(c, m, bv));
    return n + __builtin_popcount(m);
}

/* k <= FG_F_W queued lanes from j on through the exp form, to y (mul: times u at the same offsets; the
   offsets of the lanes that lost their accuracy before the product, fg_f_lost_mask, to lost; returns their
   number) */
static inline __attribute__((always_inline)) int fg_f_tailq_run(const fg_f_tailq* q, int j, int k, float* y,
                                                                const fg_f_fn fn, const float* u, const int mul,
                                                                ptrdiff_t* lost) {
    const int grad = fg_f_fns[fn].grad;
    fg_fm m = (fg_fm)((1u << k) - 1u);
#if FG_F_HAS_SCATTER
    if (!mul) {
        fg_fv xv = FG_F_MASKLOAD(q->x + j, m);
        fg_fv r = fg_f_tail(xv, grad ? FG_F_MASKLOAD(q->d + j, m) : xv, m, fn);
        FG_F_SCATTER(y, m, q->i + j, r);
        return 0;
    }
#endif
    FG_F_TAILMASK(km, k);                   /* lanes past k zero: no floating-point exceptions */
    fg_fv xv = k == FG_F_W ? FG_F_LOADU(q->x + j) : FG_F_MASKLOAD(q->x + j, km);
    float r[FG_F_W] __attribute__((aligned(FG_F_W * 4 > 32 ? FG_F_W * 4 : 32)));
    fg_fv rv = fg_f_tail(xv, grad ? FG_F_MASKLOAD(q->d + j, km) : xv, m, fn);
    FG_F_STORE(r, rv);
    if (mul) {
        for (int l = 0; l < k; l++)
            y[q->i[j + l]] = r[l] * u[q->i[j + l]];
        unsigned int lm = (unsigned int)(fg_f_lost_mask(xv, rv) & m);
        int nl = 0;
        for (; lm; lm &= lm - 1)
            lost[nl++] = q->i[j + __builtin_ctz(lm)];
        return nl;
    }
    for (int l = 0; l < k; l++)
        y[q->i[j + l]] = r[l];
    return 0;
}

/* all nq queued lanes.  Not inlined: inlined in the central loop, its registers went to the exp form and the
   tables to memory.  The products' flush apart, so that the plain kernels' holds no test of mul */
static __attribute__((noinline)) void fg_f_tailq_flush_plain(const fg_f_tailq* q, int nq, float* y,
                                                             const fg_f_fn fn) {
    for (int j = 0; j < nq; j += FG_F_W)
        fg_f_tailq_run(q, j, nq - j < FG_F_W ? nq - j : FG_F_W, y, fn, NULL, 0, NULL);
}
static __attribute__((noinline)) int fg_f_tailq_flush_mul(const fg_f_tailq* q, int nq, float* y, const fg_f_fn fn,
                                                          const float* u, ptrdiff_t* lost) {
    int nl = 0;
    for (int j = 0; j < nq; j += FG_F_W)
        nl += fg_f_tailq_run(q, j, nq - j < FG_F_W ? nq - j : FG_F_W, y, fn, u, 1, lost + nl);
    return nl;
}
static inline __attribute__((always_inline)) int fg_f_tailq_flush(const fg_f_tailq* q, int nq, float* y,
                                                                  const fg_f_fn fn, const float* u, const int mul,
                                                                  ptrdiff_t* lost) {
    if (mul)
        return fg_f_tailq_flush_mul(q, nq, y, fn, u, lost);
    fg_f_tailq_flush_plain(q, nq, y, fn);
    return 0;
}
#endif
#endif
