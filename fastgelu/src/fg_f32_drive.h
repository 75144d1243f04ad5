/* The driver of the float32 kernels over an array, for every function (fg_f32_fns.h): the central form
   (fg_f32_central.h) on every lane, and the lanes it cannot take (x < -R, -inf; with a table neither reaching
   nor holding a positive slot x > R too; the AVX-512 gradients' NaN x; gradient results that are not finite)
   redone through the function's tail (fg_f32_route.h).  Per chunk of FG_F_LIST vectors (fg_f32_chunk.h),
   central results stored as they go:
   - the tail lanes are compressed into a queue (fg_f32_queue.h) that the tail computes a vector at a time
     after the chunk, the results stored to place.  How a chunk finds those lanes follows the chunks before
     it (fg_f_list): after quiet ones, one summary of the chunk and a search only if it shows a lane; sparse,
     a branch-free list of the vectors with such lanes; dense, every vector compressed as it goes;
   - gradient results that are not finite, found per chunk, are redone from the chunk's copies; the tail's
     suspect lanes get the double fix-up (fg_f32_gradfix.h);
   - forward inputs with |x| <= TINY (zeros, subnormals): x/2 correctly rounded (fg_f_tiny), found per chunk
     by the least |x| and redone, or, after a chunk that had some, per vector, where a vector of them alone
     skips the tables; the gradient evaluates them at TINY (1/2).  A subnormal operand takes a microcode
     assist: the main paths have none, but for forward inputs 0 < |x| < ~1e-19 beside normal ones in a
     vector.
   A lane's result depends on its x (and dy) alone, whatever path it takes.  Arrays go in segments of
   FG_F_SEG elements (queued offsets are int32); a gated forward (mul) stores each result times u. */
#ifndef FG_F32_DRIVE_H
#define FG_F32_DRIVE_H
#include "fg_f32_chunk.h"
#if FG_F32_SIMD

/* A build may take a segment over: FG_F_SEG_HOOK(x, dy, y, n, fn) nonzero when it has written y[0, n)
   (tools/bound_f32_hook.h: the central form alone, for tools/bound_f32.py).  The package's: none */
#ifndef FG_F_SEG_HOOK
#define FG_F_SEG_HOOK(x, dy, y, n, fn) 0
#endif

#define FG_F_SEG ((ptrdiff_t)1 << 30)  /* elements per segment */

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
   the next chunk's (a chunk of typical data queues fewer lanes than a vector holds: a partial vector after
   every chunk would be mostly waste).  No branch on how full a queue is inside the loop.  mul (forwards; y apart from x and u):
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
