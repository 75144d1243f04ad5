/* One chunk of FG_F_LIST vectors of a float32 kernel: the central form on every vector, results stored as
   they go, the tail lanes found by the chunk's mode and queued (fg_f32_queue.h), the gradient's results that
   are not finite and the forward's tiny lanes (|x| <= TINY) redone from the chunk's copies of its inputs.
   The segment driver (fg_f32_drive.h) runs the chunks and picks each one's mode. */
#ifndef FG_F32_CHUNK_H
#define FG_F32_CHUNK_H
#include "fg_f32_queue.h"
#if FG_F32_SIMD

#define FG_F_AHEAD 2048             /* bytes read ahead in software: the hardware prefetcher alone left
                                       out-of-cache arrays well below the in-cache speed (other distances:
                                       docs/design/kernels.md) */
#define FG_F_DIRECT 16              /* a chunk with at least 1/16 of its lanes queued has the next one push
                                       each vector's tail lanes as it goes (fg_f_list: PUSHED) */

/* How a chunk finds its tail lanes, chosen by what the chunks before it queued (the figures behind each
   choice: docs/design/kernels.md, "The chunk modes"):
   - none, two chunks running: SUMMED.  Every vector copied and folded into one summary (fg_f_summary, one
     operation); only when that shows a tail lane are the copies searched, with a branch per vector.  Two
     quiet chunks, not one: data that queues a lane now and then would send chunk after chunk to the search.
   - fewer than 1/FG_F_DIRECT of its lanes: LISTED.  Every vector copied, those with tail lanes listed,
     branch-free (where many vectors list a lane, a branch on it mispredicts and a SUMMED chunk's search
     costs more), and pushed to the queue after the loop.
   - more: PUSHED.  Each vector's tail lanes pushed as it goes: wide data.
   A call's first chunk, where nothing is known yet: LISTED with 8-entry tables (their shorter reach leaves
   more lanes to the tail, and the gated and bias kernels' block calls would search a dense first chunk),
   SUMMED with 32. */
typedef struct {
    float x[FG_F_LIST * FG_F_W] __attribute__((aligned(64)));   /* every vector's x and dy at its offset in
                                                                    the chunk (PUSHED forwards: none) */
    float d[FG_F_LIST * FG_F_W] __attribute__((aligned(64)));
    int k[FG_F_LIST];                                            /* LISTED: the offsets of the vectors with
                                                                    tail lanes */
    fg_fm m[FG_F_LIST];
} fg_f_list;
enum { FG_F_LISTED = 0, FG_F_PUSHED = 1, FG_F_SUMMED = 2 };

/* what the vectors of a chunk leave for its end (fg_f_central_step): summaries, listed vectors, queue length */
typedef struct {
    fg_fv acc, accy, acca;
#if FG_F_BV_IN_REG
    fg_iv bv;
#endif
    int ns, nq;
} fg_f_chunk_st;

/* FG_F_PFV vectors a cache line: the read-ahead goes once a line */
#define FG_F_PFV (64 / (FG_F_W * 4) > 1 ? 64 / (FG_F_W * 4) : 1)

/* the vector at offset o of a chunk (x, dy, y, u and the copies all from it) */
static inline __attribute__((always_inline)) void fg_f_central_step(const float* x, const float* dy, float* y,
                                                                    const float* u, ptrdiff_t o, ptrdiff_t i0,
                                                                    fg_f_list* L, fg_f_tailq* q,
                                                                    fg_f_chunk_st* st, const fg_f_fn fn,
                                                                    const int mode, const int chk,
                                                                    int* tiny, const int mul) {
    const int grad = fg_f_fns[fn].grad;
    fg_fm m;
    fg_fv xv = FG_F_LOADU(x + o), dv = grad ? FG_F_LOADU(dy + o) : xv;
    fg_fv yv = fg_f_central_v(xv, dv, &m, fn, chk, tiny);
    if (!chk)   /* vminps returns acca for a NaN */
        st->acca = FG_F_MIN(fg_f_fwd_a(xv, fn), st->acca);
    if (grad || mode != FG_F_PUSHED) {
        FG_F_STORE(L->x + o, xv);
        if (grad)
            FG_F_STORE(L->d + o, dv);
    }
    /* NaN from the first result not finite on (y*0 + acc): one operation a vector; with a positive slot
       (y*y + acc) inf or NaN too from every |y| > 2^126 that fg_f_grad_bad redoes (and from some smaller) */
    if (grad)
        st->accy = FG_F_FMA(yv, fg_f_fns[fn].central->slot ? yv : FG_F_SET1(0.0f), st->accy);
    if (mode == FG_F_PUSHED) {
#if FG_F_BV_IN_REG
        st->nq = fg_f_tailq_pushv(q, st->nq, m, xv, dv, st->bv, grad);
        st->bv = FG_F_ADDI(st->bv, FG_F_SET1I(FG_F_W));
#else
        st->nq = fg_f_tailq_pushv(q, st->nq, m, xv, dv, FG_F_SET1I((int)(i0 + o)), grad);
#endif
    } else if (mode == FG_F_LISTED) {
        L->k[st->ns] = (int)o;
        L->m[st->ns] = m;
        st->ns += m != 0;
    } else {
        st->acc = fg_f_summary(st->acc, xv, fn);
    }
    FG_F_STOREU(y + o, mul ? FG_F_MUL(yv, FG_F_LOADU(u + o)) : yv);
}

/* one chunk [i, end) of whole vectors, after nq lanes queued before it; returns the number of queued lanes
   (in q), and in *tiny whether a forward chunk had lanes <= TINY.  mul (forwards): each result stored times
   u at its offset (the queued lanes' at the flush) */
static inline __attribute__((always_inline)) int fg_f_central_chunk(const float* x, const float* dy, float* y,
                                                                   ptrdiff_t i, ptrdiff_t end, fg_f_list* L,
                                                                   fg_f_tailq* q, const fg_f_fn fn,
                                                                   const int mode, const int per_vector,
                                                                   int nq, int* tiny,
                                                                   const float* u, const int mul) {
    const int grad = fg_f_fns[fn].grad;
    /* Forwards test for tiny lanes per chunk (the least a, one operation a vector, where the test per
       vector takes two and a branch) and redo them from the copies; PUSHED chunks keep none, and the
       chunks after one with tiny lanes test per vector, so that a vector of them alone skips the tables
       (fg_f_fwd_c: all-subnormal data takes microcode assists in them) */
    const int chk = grad || per_vector || mode == FG_F_PUSHED;
    const ptrdiff_t i0 = i, len = (end - i) & -(ptrdiff_t)FG_F_W;
    /* the arrays from the chunk's start: one offset addresses every stream and the copies */
    const float* xc = x + i0;
    const float* dc = grad ? dy + i0 : NULL;
    const float* uc = mul ? u + i0 : NULL;
    float* yc = y + i0;
    fg_f_chunk_st st;
    st.acc = FG_F_SET1(0.0f);
    st.accy = FG_F_SET1(0.0f);
    st.acca = FG_F_SET1(1.0f);
#if FG_F_BV_IN_REG
    st.bv = FG_F_SET1I((int)i0);
#endif
    st.ns = 0;
    st.nq = nq;
    /* y too, for writing: an out-of-cache y held the loop back without it (docs/design/kernels.md) */
#define FG_F_CHUNK_AHEAD(o)                                                                                 \
    do {                                                                                                   \
        FG_F_PREFETCH((const char*)(xc + (o)) + FG_F_AHEAD);                                               \
        if (grad)                                                                                          \
            FG_F_PREFETCH((const char*)(dc + (o)) + FG_F_AHEAD);                                           \
        if (mul)                                                                                           \
            FG_F_PREFETCH((const char*)(uc + (o)) + FG_F_AHEAD);                                           \
        FG_F_PREFETCHW((const char*)(yc + (o)) + FG_F_AHEAD);                                              \
    } while (0)
    ptrdiff_t o = 0;
    if (mode == FG_F_PUSHED || FG_F_PFV == 1) {
        /* PUSHED chunks a vector at a time: unrolled, gcc rebuilt each vector's offsets from a broadcast
           (on the permutes' port) */
        for (; o < len; o += FG_F_W) {
            FG_F_CHUNK_AHEAD(o);
            fg_f_central_step(xc, dc, yc, uc, o, i0, L, q, &st, fn, mode, chk, tiny, mul);
        }
    } else {
        for (; o + FG_F_PFV * FG_F_W <= len; o += FG_F_PFV * FG_F_W) {
            FG_F_CHUNK_AHEAD(o);
            for (int r = 0; r < FG_F_PFV; r++)
                fg_f_central_step(xc, dc, yc, uc, o + r * FG_F_W, i0, L, q, &st, fn, mode, chk, tiny, mul);
        }
        for (; o < len; o += FG_F_W)    /* the chunk's last vectors, fewer than a line's */
            fg_f_central_step(xc, dc, yc, uc, o, i0, L, q, &st, fn, mode, chk, tiny, mul);
    }
#undef FG_F_CHUNK_AHEAD
    nq = st.nq;
    /* the gradient's results that are not finite, checked per chunk: a check per vector costs the loop
       (docs/design/kernels.md) */
    if (grad && __builtin_expect(fg_f_anynan(FG_F_MUL(st.accy, FG_F_SET1(0.0f))), 0)) {
        for (ptrdiff_t k = 0; k < len; k += FG_F_W) {
            fg_fv xv = FG_F_LOADU(L->x + k), yv = FG_F_LOADU(yc + k);
            fg_fm bad = fg_f_grad_bad(xv, yv, fn);
            if (bad)
                FG_F_STOREU(yc + k, FG_F_SELECT(bad, fg_f_tail(xv, FG_F_LOADU(L->d + k), bad, fn), yv));
        }
    }
    if (!chk && __builtin_expect(fg_f_tiny_mask(st.acca) != 0, 0)) {
        *tiny = 1;
        for (ptrdiff_t k = 0; k < len; k += FG_F_W) {
            fg_fv xv = FG_F_LOADU(L->x + k);
            fg_fm t = fg_f_tiny_mask(fg_f_fwd_a(xv, fn));
            if (t) {
                fg_fv tv = fg_f_tiny(xv);
                if (mul)
                    tv = FG_F_MUL(tv, FG_F_LOADU(uc + k));
                FG_F_STOREU(yc + k, FG_F_SELECT(t, tv, FG_F_LOADU(yc + k)));
            }
        }
    }
    for (int j = 0; j < st.ns; j++) {
        ptrdiff_t k = L->k[j];
        nq = fg_f_tailq_pushv(q, nq, L->m[j], FG_F_LOADU(L->x + k),
                              FG_F_LOADU(grad ? L->d + k : L->x + k),
                              FG_F_SET1I((int)(i0 + k)), grad);
    }
    if (mode == FG_F_SUMMED && __builtin_expect(fg_f_tail_mask(st.acc, fn) != 0, 0)) {
        for (ptrdiff_t k = 0; k < len; k += FG_F_W) {
            fg_fv xv = FG_F_LOADU(L->x + k);
            fg_fm m = fg_f_tail_mask(xv, fn);
            if (m)
                nq = fg_f_tailq_pushv(q, nq, m, xv, FG_F_LOADU(grad ? L->d + k : L->x + k),
                                      FG_F_SET1I((int)(i0 + k)), grad);
        }
    }
    return nq;
}
#endif
#endif
