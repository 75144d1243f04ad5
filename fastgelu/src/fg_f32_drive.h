/* The driver of the central form (fg_gelu_f32_central.h) over an array, for all six float32 functions (the
   three forms' forwards and gradients): the table form on every lane, and the lanes it cannot take (x < -R,
   -inf; the AVX2 and NEON sigmoid gradient's x > R too; the AVX-512 gradients' NaN x; gradient results that
   are not finite) redone through the tails.
   Per chunk of FG_F_LIST vectors, central results stored as they go:
   - the tail lanes (fg_f_tail_mask) are compressed into a queue (fg_f_tailq) that the tail (fg_f_tail:
     fg_gelu_f32_tail.h; fg_f_tanh_tail and fg_f_xsig of fg_xsig_f32_math.h) computes a vector at a time
     after the chunk, the results scattered to place.  randn sigma = 3 puts 2.8% of the lanes there on
     AVX-512 (exact forward: x < -5.75), 13% on AVX2 (x < -3.4; the exact and tanh gradients' x < -3.9:
     10%); x ~ U(-8, 8) 14% and 29%.  How a chunk finds those lanes follows the chunks before it (fg_f_list): after quiet ones, one
     summary of the chunk and a search only if it shows a lane; sparse, a branch-free list of the vectors
     with such lanes; dense, every vector compressed as it goes;
   - gradient results that are not finite, found per chunk, are redone from the chunk's copies; the tail's
     suspect lanes get the double fix-up (fg_f32_gradfix.h);
   - forward inputs with |x| <= TINY (zeros, subnormals): x/2 correctly rounded (fg_f_tiny), found per chunk
     by the least |x| and redone, or, after a chunk that had some, per vector, where a vector of them alone
     skips the tables; the gradient evaluates them at TINY (1/2).  A subnormal operand takes a microcode
     assist: the main paths have none, but for forward inputs 0 < |x| < ~1e-19 beside normal ones in a
     vector.
   A lane's result depends on its x (and dy) alone, whatever path it takes.  Arrays go in segments of
   FG_F_SEG elements (queued offsets are int32). */
#ifndef FG_F32_DRIVE_H
#define FG_F32_DRIVE_H
#include "fg_gelu_f32_central.h"
#include "fg_gelu_f32_tail.h"
#include "fg_xsig_f32_math.h"
#include "fg_f32_gradfix.h"
#if FG_F32_SIMD

#define FG_F_AHEAD 2048        /* bytes read ahead in software: the hardware prefetcher alone left out-of-cache
                                  arrays well below the in-cache speed (docs/performance.md); 1,024 and
                                  4,096 were no better */

/* A build may take a segment over: FG_F_SEG_HOOK(x, dy, y, n, fn) nonzero when it has written y[0, n)
   (tools/bound_f32_hook.h: the central form alone, for tools/bound_f32.py).  The package's: none */
#ifndef FG_F_SEG_HOOK
#define FG_F_SEG_HOOK(x, dy, y, n, fn) 0
#endif

#define FG_F_LIST 64                /* vectors per chunk */
#define FG_F_DIRECT 16              /* a chunk with at least 1/16 of its lanes queued has the next one push
                                       each vector's tail lanes as it goes (fg_f_list: PUSHED) */
#define FG_F_SEG ((ptrdiff_t)1 << 30)  /* elements per segment */
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

/* the exp form for the tail lanes m of a vector: the forward, or the gradient (exact: fg_f_gelu_grad;
   tanh and sigmoid forms: fg_f_xsig_grad) with its double fix-ups */
static inline __attribute__((always_inline)) fg_fv fg_f_tail(fg_fv x, fg_fv dy, fg_fm m, const fg_f_fn fn) {
    if (!fg_f_fns[fn].grad)
        return fn == FG_F_GELU_TANH ? fg_f_tanh_tail(x) : fn == FG_F_GELU_SIGMOID ? fg_f_xsig(x, 0)
                                                                                : fg_f_gelu_tail(x);
    const float lim = fg_f_fns[fn].far;
    fg_fv r = fn == FG_F_GELU_GRAD ? fg_f_gelu_grad(x, dy) : fg_f_xsig_grad(x, dy, fn == FG_F_GELU_TANH_GRAD);
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

/* How a chunk of FG_F_LIST vectors (central results stored as they go) finds its tail lanes, chosen by
   what the chunks before queued.  A call's first chunk, where nothing is known yet: LISTED with 8-entry
   tables (AVX2, NEON: randn sigma = 3 queues 13% of the lanes, and the 1,024-element block calls of the
   gated and bias kernels searched that dense first chunk), SUMMED with 32 (AVX-512: 2.8%, where a
   1,024-element call is one chunk and LISTED cost its sigma = 1 calls more: docs/performance.md):
   - none, two chunks running: SUMMED.  Every vector copied and folded into one summary (fg_f_summary, one
     operation); only when that shows a tail lane are the copies searched, with a branch per vector.  Two
     quiet chunks, not one: after one alone the AVX2 tanh form at sigma = 1 (0.2% of lanes queued, one a
     chunk) searched too often.
   - fewer than 1/FG_F_DIRECT of its lanes: LISTED.  Every vector copied, those with tail lanes listed,
     branch-free (at sigma = 3 a third of the AVX-512 vectors list a lane: a branch on it mispredicts, and
     a SUMMED chunk's search is slower), and pushed to the queue after the loop: ~6 operations a vector,
     ~17 per listed one.
   - more: PUSHED.  Each vector's tail lanes pushed as it goes, ~10 operations a vector: wide data (x ~
     U(-8, 8)). */
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
    /* y too, for writing: without it out-of-cache arrays ran below the memory floor (docs/performance.md);
       the exp kernels, slower, did not need it */
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
    /* the gradient's results that are not finite, checked per chunk (a check per vector was a large share
       of the AVX2 gradient's time) */
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

/* a segment's chunk state for the next call (fg_f_central_seg's carry): 0 = none; else 1 + mode, the quiet
   chunks (at most 3), whether the last chunk had tiny lanes */
static inline int fg_f_carry_put(int mode, int quiet, int tiny) {
    return 1 + (mode | (quiet < 3 ? quiet : 3) << 2 | (tiny != 0) << 4);
}
static inline void fg_f_carry_get(int c, int* mode, int* quiet, int* tiny) {
    c -= 1;
    *mode = c & 3;
    *quiet = (c >> 2) & 3;
    *tiny = (c >> 4) & 1;
}

/* forward (dy NULL) or gradient over n <= FG_F_SEG elements; y may be x or dy (a vector is loaded, and
   listed, before its result is stored; a queued result lands below every address read later).  The
   queued lanes are computed a vector at a time after each chunk, whole vectors only, the rest carried to
   the next chunk's (at sigma = 3 a chunk queues ~6 lanes: a partial vector's tail after every chunk would
   be mostly waste).  No branch on how full a queue is inside the loop.  mul (forwards; y apart from x and u):
   y = the result times u; the offsets of the tail lanes whose result lost its accuracy before the product
   (fg_f_lost_mask) go to lost (room for n), their number returned, and *tiny set where there were lanes <=
   TINY (x/2, subnormal for 0 < |x| < 2^-125): no other lane's result is below the normal range.  carry
   (or NULL): what the chunks of the caller's previous call of the same fn over the same array found
   (fg_f_carry_put), so that a caller going in blocks starts each where the last ended (the mode never changes
   a result) */
static inline __attribute__((always_inline)) ptrdiff_t fg_f_central_seg(const float* x, const float* dy, float* y,
                                                                        ptrdiff_t n, const fg_f_fn fn,
                                                                        const float* u, const int mul,
                                                                        ptrdiff_t* lost, int* anytiny,
                                                                        int* carry) {
    const int grad = fg_f_fns[fn].grad;
    if (FG_F_SEG_HOOK(x, dy, y, n, fn))
        return 0;
    fg_f_list L;
    fg_f_tailq q;
    ptrdiff_t i = 0;
    /* a call's first chunk (see fg_f_list), unless carried */
    int mode = FG_F_TAB32 ? FG_F_SUMMED : FG_F_LISTED, quiet = FG_F_TAB32 ? 2 : 1, tiny = 0, nq = 0;
    if (carry && *carry)
        fg_f_carry_get(*carry, &mode, &quiet, &tiny);
    ptrdiff_t nl = 0;
    while (n - i >= FG_F_W) {
        ptrdiff_t end = n - i > FG_F_LIST * FG_F_W ? i + FG_F_LIST * FG_F_W : n;
        int nq0 = nq, seen = tiny;
        tiny = 0;
        if (mode == FG_F_SUMMED)
            nq = fg_f_central_chunk(x, dy, y, i, end, &L, &q, fn, FG_F_SUMMED, 0, nq, &tiny, u, mul);
        else if (mode == FG_F_PUSHED)
            nq = fg_f_central_chunk(x, dy, y, i, end, &L, &q, fn, FG_F_PUSHED, 1, nq, &tiny, u, mul);
        else if (seen)
            nq = fg_f_central_chunk(x, dy, y, i, end, &L, &q, fn, FG_F_LISTED, 1, nq, &tiny, u, mul);
        else
            nq = fg_f_central_chunk(x, dy, y, i, end, &L, &q, fn, FG_F_LISTED, 0, nq, &tiny, u, mul);
        int full = nq & -FG_F_W, added = nq - nq0;
        if (mul && tiny)
            *anytiny = 1;
        if (full) {
            nl += fg_f_tailq_flush(&q, full, y, fn, u, mul, lost + nl);
            FG_F_STORE(q.x, FG_F_LOADU(q.x + full));
            if (grad)
                FG_F_STORE(q.d, FG_F_LOADU(q.d + full));
            FG_F_STORE((float*)q.i, FG_F_LOADU((const float*)(q.i + full)));
            nq -= full;
        }
        quiet = added == 0 && !tiny ? quiet + 1 : 0;
        mode = quiet >= 2 ? FG_F_SUMMED : added * FG_F_DIRECT >= (int)(end - i) ? FG_F_PUSHED : FG_F_LISTED;
        i += (end - i) & -(ptrdiff_t)FG_F_W;
    }
    if (nq)
        nl += fg_f_tailq_flush(&q, nq, y, fn, u, mul, lost + nl);
    if (carry)
        *carry = fg_f_carry_put(mode, quiet, tiny);
    if (i < n) {        /* the last, partial vector: its tail lanes in place, by the same functions */
        fg_fm m;
        FG_F_TAILMASK(k, n - i);
        fg_fv xv = FG_F_MASKLOAD(x + i, k), dv = grad ? FG_F_MASKLOAD(dy + i, k) : xv;
        tiny = 0;
        fg_fv yv = fg_f_central_v(xv, dv, &m, fn, 1, &tiny);
        if (grad)
            m |= fg_f_grad_bad(xv, yv, fn);
        if (m)
            yv = FG_F_SELECT(m, fg_f_tail(xv, dv, m, fn), yv);
        if (mul) {      /* the tail lanes only, as in the chunks (lanes past n read as x = 0, not tail lanes) */
            for (unsigned int lm = (unsigned int)(fg_f_lost_mask(xv, yv) & m); lm; lm &= lm - 1)
                lost[nl++] = i + __builtin_ctz(lm);
            if (tiny)
                *anytiny = 1;
            yv = FG_F_MUL(yv, FG_F_MASKLOAD(u + i, k));
        }
        FG_F_MASKSTORE(y + i, k, yv);
    }
    return nl;
}
/* n in segments: queued offsets are int32 */
#define FG_F_CENTRAL_BLOCK(fn, x, dy, y, n)                                                              \
    for (ptrdiff_t o = 0; o < n; o += FG_F_SEG)                                                            \
        fg_f_central_seg(x + o, dy ? dy + o : NULL, y + o, n - o < FG_F_SEG ? n - o : FG_F_SEG, fn, NULL, 0,    \
                         NULL, NULL, NULL);
/* the forward times u (fg_f_central_seg's mul): the lost lanes' offsets and their number, *tiny; carry */
#define FG_F_CENTRAL_MUL_BLOCK(fn, x, u, y, n, lost, tiny, carry)                                        \
    ptrdiff_t nl_ = 0;                                                                                     \
    *tiny = 0;                                                                                             \
    for (ptrdiff_t o = 0; o < n; o += FG_F_SEG) {                                                          \
        ptrdiff_t k_ = fg_f_central_seg(x + o, NULL, y + o, n - o < FG_F_SEG ? n - o : FG_F_SEG, fn, u + o, 1, \
                                        lost + nl_, tiny, carry);                                          \
        for (ptrdiff_t j_ = nl_; j_ < nl_ + k_; j_++)                                                      \
            lost[j_] += o;                                                                                 \
        nl_ += k_;                                                                                         \
    }                                                                                                      \
    return nl_;
#endif
#endif
