/* GELU (exact and the tanh form's central part) and GELU' in float32 arithmetic on SIMD vectors, written once
   on the primitives of fg_simd.h (AVX-512, AVX2, NEON).  Included where GX_F32_SIMD; the method is described
   in fastgelu/_gelu_exact.pxi ("float32 kernels") and tools/fit_gelu_f32.py. */
#ifndef FG_GELU_F32_H
#define FG_GELU_F32_H
#include "fg_simd.h"
#if GX_F32_SIMD
#include <math.h>
#include "fg_gelu_f32_tables.h"

#define GX_F_AMAX 14.99f       /* |x| clamp: a*Phi(-a) rounds to 0 from ~14.2 on; inf makes no NaN */
#define GX_F_BIG 12.5f       /* |x| up to this: exp(-a^2/2) * P is normal (AVX2 scales it in one add) */
#define GX_F_TINY 0x1p-30f     /* |x| below: y = x/2 rounded, by integer arithmetic (gx_f_tiny); the main
                                  path sees max(|x|, TINY), so none of its products is subnormal (a
                                  subnormal product costs ~100 cycles: microcode assist) */
#define GX_F_MAGIC 12582912.0f /* 1.5*2^23: v + MAGIC is round(v) + MAGIC, round(v) in the low bits */
#define GX_F_AHEAD 2048        /* bytes read ahead in software: the hardware prefetcher alone left the
                                  kernels at 0.67x their in-cache speed on 64M elements (Xeon, KVM;
                                  AVX-512 1.13 -> 1.56 Gelem/s, AVX2 0.76 -> 1.12; 1,024 and 4,096 no better) */
/* 2^f = 1 + f*Q(f), Q = Q0 + f*Q1(f): Q1 here (Horner: Estrin's shorter chains measured no faster, the
   loops are bound by operations), and q = 2^f - 1 from f = fh + fl with the leading product Q0*f taken
   from fh and fl unrounded */
static inline __attribute__((always_inline)) gx_fv gx_f_Q1(gx_fv f) {
    gx_fv p = GX_F_FMA(GX_F_SET1(GX_F_Q5), f, GX_F_SET1(GX_F_Q4));
    p = GX_F_FMA(p, f, GX_F_SET1(GX_F_Q3));
    p = GX_F_FMA(p, f, GX_F_SET1(GX_F_Q2));
    return GX_F_FMA(p, f, GX_F_SET1(GX_F_Q1));
}
static inline __attribute__((always_inline)) gx_fv gx_f_q_pair(gx_fv fh, gx_fv fl) {
    const gx_fv q0 = GX_F_SET1(GX_F_Q0);
    gx_fv f = GX_F_ADD(fh, fl);
    return GX_F_FMA(fh, q0, GX_F_FMA(GX_F_MUL(f, f), gx_f_Q1(f), GX_F_MUL(fl, q0)));
}

/* exp(-a^2/2) = 2^-z, z = (s + sl)(KH + KL) with a^2 = s + sl exactly; 2^-z = 2^mn * 2^f, mn = round(-s*KH)
   (by MAGIC: bits(b) = bits(MAGIC) + mn), f = fh + fl: fh = -s*KH - mn rounded once (|fh| <= 1/2), fl the
   rest.  Returns q = 2^f - 1.  kl 0 leaves out a^2 KL (AVX-512's exp form: its tables hold D times
   2^(a^2 KL), a smooth factor) */
static inline __attribute__((always_inline)) gx_fv gx_f_exp_red(gx_fv a, gx_fv* b, gx_fv* mn, const int kl) {
    const gx_fv kh = GX_F_SET1(-GX_F_KH), magic = GX_F_SET1(GX_F_MAGIC);
    gx_fv s = GX_F_MUL(a, a);
    gx_fv sl = GX_F_FMS(a, a, s);
    *b = GX_F_FMA(s, kh, magic);
    *mn = GX_F_SUB(*b, magic);
    gx_fv fh = GX_F_FMS(s, kh, *mn);
    return gx_f_q_pair(fh, kl ? GX_F_FMA(sl, kh, GX_F_MUL(s, GX_F_SET1(-GX_F_KL))) : GX_F_MUL(sl, kh));
}
#if !GX_F_HAS_SCALEF
/* 2^(mn + 64) from b: times S (< 4) normal and exact, so a later 2^-64 rounds a subnormal result once */
static inline __attribute__((always_inline)) gx_fv gx_f_scale64(gx_fv b) {
    return GX_F_CASTF(GX_F_SLLI(GX_F_ADDI(GX_F_CASTI(b), GX_F_SET1I(127 + 64 - 0x4B400000)), 23));
}
/* S * 2^mn from b, for a normal result: mn added to S's exponent field */
static inline __attribute__((always_inline)) gx_fv gx_f_scale_normal(gx_fv S, gx_fv b) {
    return GX_F_CASTF(GX_F_ADDI(GX_F_CASTI(S), GX_F_SLLI(GX_F_CASTI(b), 23)));
}
#endif

/* G = exp(-a^2/2) D(a) (the gradient's exp form, table GX_F_D): a = min(|x|, AMAX) (NaN stays), evaluated at
   ac = max(TINY, a) */
static inline __attribute__((always_inline)) gx_fv gx_f_expD(gx_fv a, gx_fv ac, const int normal,
                                                             gx_fv dy, gx_fv* Fdy) {
    const float (*tab)[GX_F_N] = GX_F_D;
    /* the index needs no lower clamp (a + 1 = 1 for tiny a) */
    gx_iv idx = GX_F_SRLI(GX_F_CASTI(GX_F_ADD(a, GX_F_SET1(1.0f))), GX_F_SHIFT);
    gx_fv L = GX_F_TAB(GX_F_L);
    gx_fv u = GX_F_SUB(ac, L);                           /* exact (Sterbenz; L = 0 on the first interval) */
    gx_fv b, mn;
    gx_fv q = gx_f_exp_red(ac, &b, &mn, !GX_F_TAB32);    /* the 32-entry D holds 2^(a^2 KL) */
    /* D(a) = H + v, v = C0 + u*(C1 + ...) */
    gx_fv v = GX_F_TAB(tab[GX_F_DEG + 1]);
    for (int k = GX_F_DEG; k >= 1; k--)
        v = GX_F_FMA(v, u, GX_F_TAB(tab[k]));
    gx_fv H = GX_F_TAB(tab[0]);
    /* E*D = 2^mn (1 + q)(H + v) = 2^mn (H + (v + q*D)): the roundings sit in the small part */
    gx_fv S = GX_F_ADD(H, GX_F_FMA(q, GX_F_ADD(H, v), v));
    /* times 2^mn, exact while normal, a subnormal rounded once (a*Phi(-a) is subnormal for a in ~[13.2,
       14.2]).  Fdy (if asked for) = F*dy with dy applied before the scaling: a subnormal F times a large dy
       would carry the subnormal's absolute rounding error into a normal result */
#if GX_F_HAS_SCALEF
    (void)normal;       /* scalef costs one operation whatever the scale */
    (void)b;
    if (Fdy)            /* S dy may overflow for |dy| > ~5e37 where the result does not: GX_F_GRAD_LOOP */
        *Fdy = GX_F_SCALEF(GX_F_MUL(S, dy), mn);
    return GX_F_SCALEF(S, mn);
#else
    (void)mn;
    if (normal) {       /* the caller knows a <= GX_F_BIG */
        gx_fv F = gx_f_scale_normal(S, b);
        if (Fdy)
            *Fdy = GX_F_MUL(F, dy);
        return F;
    }
    gx_fv P = GX_F_MUL(S, gx_f_scale64(b));                  /* normal: exact */
    if (Fdy) {          /* P dy may overflow for |dy| > ~2^61 where the result does not (GX_F_GRAD_LOOP
                           recomputes it in double), so lanes with a <= BIG take the product of the path
                           above: a lane's bits must not depend on its neighbours */
        gx_fv Fn = gx_f_scale_normal(S, b);
        *Fdy = GX_F_SEL(GX_F_LE(a, GX_F_SET1(GX_F_BIG)), GX_F_MUL(Fn, dy),
                        GX_F_MUL(GX_F_MUL(P, dy), GX_F_SET1(0x1p-64f)));
    }
    return GX_F_MUL(P, GX_F_SET1(0x1p-64f));
#endif
}

/* min(|x|, AMAX).  x = NaN: NaN, or AMAX (GX_F_ABSMIN of AVX-512); the forward's max(-0, x) passes the NaN
   on, and the gradient loop finds it (gx_f_suspect) and sets NaN */
static inline __attribute__((always_inline)) gx_fv gx_f_absmin(gx_fv x) {
    return GX_F_ABSMIN(x, GX_F_AMAX);
}

/* GELU(x) for |x| >= R (x NaN: NaN; the tail lanes) without a table: a*Phi(-a) = exp(-a^2/2) (C - r), with
   C = 1/sqrt(2 pi) rounded and r = C - a m(a)/sqrt(2 pi) (m: Mills' ratio) rational in s = a^2.  r/C <= 0.08,
   so C + (q (C - r) - r) keeps the roundings in the small part (exp as gx_f_expD), and x - F (x >= 0) or -F
   is one rounding: AVX2's in the FMA that also takes the subnormal's scaling.  29 vector operations, no
   permute (the exp form's 40 held 10) */
static inline __attribute__((always_inline)) gx_fv gx_f_gelu_tail(gx_fv x) {
    const gx_fv c = GX_F_SET1(GX_F_RC);
    gx_fv a = GX_F_MIN(GX_F_SET1(GX_F_AMAX), GX_F_ABS(x)), b, mn;
    gx_fv q = gx_f_exp_red(a, &b, &mn, 1);
    gx_fv s = GX_F_MUL(a, a);                      /* the same product as inside: one instruction */
    gx_fv num = GX_F_FMA(GX_F_FMA(GX_F_SET1(GX_F_RN2), s, GX_F_SET1(GX_F_RN1)), s, GX_F_SET1(GX_F_RN0));
    gx_fv den = GX_F_FMA(GX_F_FMA(GX_F_FMA(GX_F_SET1(GX_F_RD3), s, GX_F_SET1(GX_F_RD2)), s,
                                  GX_F_SET1(GX_F_RD1)), s, GX_F_SET1(1.0f));
    gx_fv r = GX_F_DIV(num, den);
    gx_fv S = GX_F_ADD(c, GX_F_FMS(q, GX_F_SUB(c, r), r));
    gx_fv xp = GX_F_MAX(GX_F_SET1(-0.0f), x);
#if GX_F_HAS_SCALEF
    (void)b;
    return GX_F_SUB(xp, GX_F_SCALEF(S, mn));
#else
    (void)mn;
    return GX_F_FMA(GX_F_MUL(S, gx_f_scale64(b)), GX_F_SET1(-0x1p-64f), xp);
#endif
}

/* dy * GELU'(x), GELU' = 1 - G for x >= 0 and G for x < 0, G = Phi(-a) - a*phi(a) = exp(-a^2/2) D(a).
   |x| < TINY needs no fix-up: GELU' rounds to 1/2 there, as at TINY. */
static inline __attribute__((always_inline)) gx_fv gx_f_gelu_grad(gx_fv x, gx_fv dy) {
    gx_fv a = gx_f_absmin(x);
    gx_fv Gdy, G, ac = GX_F_MAX(GX_F_SET1(GX_F_TINY), a);
#if GX_F_HAS_SCALEF
    G = gx_f_expD(a, ac, 0, dy, &Gdy);
#else
    if (__builtin_expect(!GX_F_ANY(GX_F_NLE(a, GX_F_SET1(GX_F_BIG))), 1))
        G = gx_f_expD(a, ac, 1, dy, &Gdy);
    else
        G = gx_f_expD(a, ac, 0, dy, &Gdy);
#endif
    gx_fv yp = GX_F_FNMA(G, dy, dy);                          /* dy - G*dy, one rounding */
    return GX_F_SEL_NEG(x, Gdy, yp);                          /* -0.0 gives 1/2 either way */
}

/* Gradients in double, lane by lane, where the float32 kernels cannot be trusted with a large dy:
   - far in the negative tail the kernels clamp (exact: |x| at AMAX; tanh and sigmoid: z at Z_MAX), which is
     right only while dy GELU'(x) underflows, i.e. for |dy| <= 1; a larger dy can lift the product into
     range (1e30 * GELU'(-15) = -4e-22);
   - an intermediate (the scaled G dy, or q dy) can overflow for |dy| > ~2^61 while the result does not,
     and dy = inf makes inf - inf where the result is inf.
   So a vector with x < -lim or a result that is not finite (rare: a cold call) has those lanes recomputed
   here, unless x or dy is NaN (then the result is NaN: the AVX-512 exact kernel computes NaN x as
   x = AMAX).  kind: 0 exact, 1 tanh, 2 sigmoid. */
static double gx_f_grad_double(float xf, float dyf, int kind) {
    double x = xf, w, t, s, sig, oms;
    if (kind == 0) {                /* Phi(x) + x phi(x); at |x| = 40 phi is 0 in double too */
        x = x < -40.0 ? -40.0 : (x > 40.0 ? 40.0 : x);
        return (double)dyf * (0.5 * erfc(-x * 0.7071067811865476) + x * exp(-0.5 * x * x) * 0.3989422804014327);
    }
    /* sigma (1 + x w' (1 - sigma)) with t = exp(-|w|): no overflow, no cancellation in sigma */
    double L = kind == 1 ? 30.0 : 1000.0;   /* as float64: beyond, sigma is 1 or 0 in double too */
    x = x < -L ? -L : (x > L ? L : x);
    double dw = kind == 1 ? 1.5957691216057308 * (1.0 + 3.0 * 0.044715 * x * x) : 1.702;
    w = kind == 1 ? 1.5957691216057308 * x * (1.0 + 0.044715 * x * x) : 1.702 * x;
    t = exp(-fabs(w));
    s = 1.0 / (1.0 + t);
    sig = w >= 0 ? s : t * s;
    oms = w >= 0 ? t * s : s;
    return (double)dyf * (sig * (1.0 + x * dw * oms));
}
/* y: the kernel's results for x[0..], dy[0..] (copies of the inputs: y may have overwritten them) */
static void gx_f_grad_fix(const float* x, const float* dy, float* y, unsigned int m, float lim, int kind) {
    for (; m; m &= m - 1u) {
        int j = __builtin_ctz(m);
        if (isnan(x[j]) || isnan(dy[j])) {
            y[j] = x[j] + dy[j];
            continue;
        }
        if ((x[j] < -lim && fabsf(dy[j]) > 1.0f) || !isfinite(y[j]))
            y[j] = (float)gx_f_grad_double(x[j], dy[j], kind);
    }
}
/* lanes with x < -lim or a result that is inf or NaN (or x NaN), as bits: y*0 - x is -x or NaN, one
   unordered compare (AVX2: 10% of the loop as two compares) */
static inline __attribute__((always_inline)) unsigned int gx_f_suspect(gx_fv x, gx_fv y, float lim) {
    gx_fv u = GX_F_FMS(y, GX_F_SET1(0.0f), x);
    return (unsigned int)GX_F_BITS(GX_F_NLE(u, GX_F_SET1(lim)));
}
/* the gradient loop of all three forms: grad(x, dy, kind) one vector, in chunks of GX_F_GCHUNK vectors.  A
   vector with suspect lanes has its x and dy saved (before y, which may be either, is stored) and is checked
   in double after its chunk, so the loop holds no call (one there cost the AVX2 gradients 6%).  The check
   itself costs 3-10% (4 operations per vector; a pass over dy to skip it where all |dy| <= 1 cost as much) */
#define GX_F_GCHUNK 64
#define GX_F_GRAD_LOOP(grad, kind, lim)                                                                    \
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
            gx_fv yv = grad(GX_F_LOADU(x + i), GX_F_LOADU(dy + i), kind);                                 \
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
            gx_fv yv = grad(xv, dv, kind);                                                                 \
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
            gx_f_grad_fix(sx[s_], sd[s_], y + si[s_], sm[s_], lim, kind);                                  \
    }

/* the forward loop of all three forms: y[i] = fwd(x[i], arg), i < n; y == x allowed (each vector is loaded
   before it is stored) */
#define GX_F_FWD_LOOP(fwd, arg)                                                                            \
    ptrdiff_t i = 0;                                                                                       \
    for (; i + GX_F_W <= n; i += GX_F_W) {                                                                 \
        GX_F_PREFETCH((const char*)(x + i) + GX_F_AHEAD);                                   \
        GX_F_STOREU(y + i, fwd(GX_F_LOADU(x + i), arg));                                                   \
    }                                                                                                      \
    if (i < n) {                                                                                           \
        GX_F_TAILMASK(k, n - i);                                                                           \
        GX_F_MASKSTORE(y + i, k, fwd(GX_F_MASKLOAD(x + i, k), arg));                                      \
    }

/* The central form (see the header): F, G and the tanh form's F from the GX_F_C, GX_F_G and GX_F_TC
   tables, no exp; the lanes beyond through a queue (gx_f_tailq) to the tails.  randn sigma = 3 puts 2.8% of
   the lanes there on AVX-512 (exact forward: x < -5.75), 13% on AVX2 (x < -3.4; gradient |x| > 4.0: 18%); x ~ U(-8, 8) 14% and 29% */
#define GX_F_CN (GX_F_TAB32 ? 32 : 8)   /* intervals per central table */

static inline __attribute__((always_inline)) gx_fv gx_f_central(gx_fv a, const float (*tab)[GX_F_CN], float K,
                                                                float K2, const int deg) {
    /* round(a*(K2*a + K)) lands in the low bits (MAGIC): the permute reads the low five (AVX2: three) */
    gx_fv k = K2 != 0.0f ? GX_F_FMA(a, GX_F_SET1(K2), GX_F_SET1(K)) : GX_F_SET1(K);
    /* a table with a positive slot: a beyond the central intervals (only x > 0 reaches them: a is
       clamped at RP there, at R for x < 0) takes the last slot */
    const int pos = tab == GX_F_C ? GX_F_CPOS : tab == GX_F_G ? GX_F_GPOS : GX_F_TCPOS;
    gx_fv t = GX_F_FMA(a, k, GX_F_SET1(GX_F_MAGIC));
    if (pos)
        t = GX_F_MIN(t, GX_F_SET1(GX_F_MAGIC + (float)(GX_F_CN - 1)));
    gx_iv idx = GX_F_CASTI(t);
    /* the forward's L_i = i*H: u = a - i*H by one FMA from the index, exact (i*H has few bits; Sterbenz),
       where a permute of L cost a cycle of the permutes' pipe */
    const float H = tab == GX_F_C ? GX_F_CH : tab == GX_F_TC ? GX_F_TCH : GX_F_GH;
    /* else u = a - L: exact (Sterbenz; L = 0 on the first interval) */
    gx_fv u = H != 0.0f ? GX_F_FMA(GX_F_SUB(t, GX_F_SET1(GX_F_MAGIC)), GX_F_SET1(-H), a)
                        : GX_F_SUB(a, GX_F_TAB(tab[0]));
    gx_fv p;
    if (!GX_F_TAB32 && deg >= 7 && deg % 2) {
        /* 8-entry tables (AVX2), whose loops wait on this chain more than on their ports: C2 + C3 u + ... in pairs on u^2
           (row k + 1 holds C_k), then C0 + u (C1 + u h) as Horner, where the rounding matters (Zen 4,
           degree 7: forward and gradient +2-7%, 8 FMAs for 7; degree 6, the tanh form's, lost 2-3%) */
        gx_fv u2 = GX_F_MUL(u, u);
        p = GX_F_FMA(GX_F_TAB(tab[deg + 1]), u, GX_F_TAB(tab[deg]));
        for (int k = deg - 1; k >= 4; k -= 2)
            p = GX_F_FMA(p, u2, GX_F_FMA(GX_F_TAB(tab[k]), u, GX_F_TAB(tab[k - 1])));
        p = GX_F_FMA(p, u, GX_F_TAB(tab[2]));
        return GX_F_FMA(p, u, GX_F_TAB(tab[1]));
    }
    p = GX_F_TAB(tab[deg + 1]);
    for (int k = deg; k >= 1; k--)
        p = GX_F_FMA(p, u, GX_F_TAB(tab[k]));
    return p;
}

static inline __attribute__((always_inline)) gx_fv gx_f_fwd_F(gx_fv x, gx_fv a, const int th) {
    gx_fv F = th ? gx_f_central(a, GX_F_TC, GX_F_TCK, GX_F_TCK2, GX_F_TCDEG)
           : gx_f_central(a, GX_F_C, GX_F_CK, GX_F_CK2, GX_F_CDEG);
    return GX_F_SUB(GX_F_MAX(GX_F_SET1(-0.0f), x), F);
}

/* a = min(|x|, RP) (NaN: RP or NaN, as GX_F_ABSMIN); x < -R is a tail lane, its result here is replaced */
static inline __attribute__((always_inline)) gx_fv gx_f_fwd_a(gx_fv x, const int th) {
    return GX_F_ABSMIN(x, th ? GX_F_TCRP : GX_F_CRP);
}
/* the lanes of a with |x| <= TINY */
static inline __attribute__((always_inline)) gx_fm gx_f_tiny_mask(gx_fv a) {
    return GX_F_BITS(GX_F_LE(a, GX_F_SET1(GX_F_TINY)));
}

/* GELU (th 0: exact, table GX_F_C; 1: the tanh form, GX_F_TC) for x >= -R, NaN and +inf (a = RP for +inf;
   NaN: a = RP or NaN, and max(-0, x) gives the NaN).  chk 0: no test for tiny lanes, whose
   results the caller redoes (gx_f_central_chunk); else *seen set when there are some */
static inline __attribute__((always_inline)) gx_fv gx_f_fwd_c(gx_fv x, const int th, const int chk, int* seen) {
    gx_fv a = gx_f_fwd_a(x, th);
    if (!chk)
        return gx_f_fwd_F(x, a, th);
    gx_fm tiny = gx_f_tiny_mask(a);
    /* one test on the common path; a vector of tiny lanes alone (zeros, subnormals) skips the tables */
    if (__builtin_expect(tiny != 0, 0)) {
        *seen = 1;
        if (tiny == (gx_fm)((1u << GX_F_W) - 1u))
            return gx_f_tiny(x);
        return GX_F_SELECT(tiny, gx_f_tiny(x), gx_f_fwd_F(x, a, th));
    }
    return gx_f_fwd_F(x, a, th);
}
/* the tanh form's tail (fg_xsig_f32.h) */
static inline gx_fv gs_f_tanh_tail(gx_fv x);

/* dy GELU'(x) for x >= -GR (x NaN: a suspect lane) */
static inline __attribute__((always_inline)) gx_fv gx_f_gelu_grad_c(gx_fv x, gx_fv dy) {
    gx_fv G = gx_f_central(GX_F_ABSMIN(x, GX_F_GRP), GX_F_G, GX_F_GK, GX_F_GK2, GX_F_GDEG);
    return GX_F_SEL_NEG(x, GX_F_MUL(G, dy), GX_F_FNMA(G, dy, dy));       /* -0.0 the same either way */
}

#define GX_F_LIST 64                /* vectors per chunk */
#define GX_F_DIRECT 16              /* a chunk with at least 1/16 of its lanes queued has the next one push
                                       each vector's tail lanes as it goes (gx_f_list: PUSHED) */
#define GX_F_SEG ((ptrdiff_t)1 << 30)  /* elements per segment */
/* a chunk's tail lanes and fewer than a vector's carried from the chunks before, x (gradient: and dy) and
   offsets, compressed */
typedef struct {
    float x[GX_F_LIST * GX_F_W + 2 * GX_F_W] __attribute__((aligned(64)));
    float d[GX_F_LIST * GX_F_W + 2 * GX_F_W] __attribute__((aligned(64)));
    int i[GX_F_LIST * GX_F_W + 2 * GX_F_W] __attribute__((aligned(64)));
} gx_f_tailq;

/* appends the lanes m of a vector at offset base (bv: base in every lane) after the first n (full-width
   stores); returns the new n */
static inline __attribute__((always_inline)) int gx_f_tailq_pushv(gx_f_tailq* q, int n, gx_fm m, gx_fv x,
                                                                  gx_fv d, gx_iv bv, const int grad) {
    gx_fc c = GX_F_COMPRESS_PREP(m);
    GX_F_STOREU(q->x + n, GX_F_COMPRESS(c, m, x));
    if (grad)
        GX_F_STOREU(q->d + n, GX_F_COMPRESS(c, m, d));
    GX_F_STOREUI(q->i + n, GX_F_COMPRESS_IDX(c, m, bv));
    return n + __builtin_popcount(m);
}

/* kinds of the central loop: exact forward, exact gradient, tanh form's forward */
enum { GX_F_EXACT = 0, GX_F_EXACT_GRAD = 1, GX_F_TANH = 2 };

/* the exp form for the tail lanes m of a vector: the forward, or the gradient with its double fix-ups */
static inline __attribute__((always_inline)) gx_fv gx_f_tail(gx_fv x, gx_fv dy, gx_fm m, const int kind) {
    if (kind != GX_F_EXACT_GRAD)
        return kind == GX_F_TANH ? gs_f_tanh_tail(x) : gx_f_gelu_tail(x);
    gx_fv r = gx_f_gelu_grad(x, dy);
    unsigned int s = gx_f_suspect(x, r, GX_F_AMAX) & m;
    if (s) {
        float sxl[GX_F_W] __attribute__((aligned(64))), sdl[GX_F_W] __attribute__((aligned(64)));
        float rr[GX_F_W] __attribute__((aligned(64)));
        GX_F_STORE(sxl, x);
        GX_F_STORE(sdl, dy);
        GX_F_STORE(rr, r);
        gx_f_grad_fix(sxl, sdl, rr, s, GX_F_AMAX, 0);
        r = GX_F_LOADU(rr);
    }
    return r;
}

/* k <= GX_F_W queued lanes from j on through the exp form, to y */
static inline __attribute__((always_inline)) void gx_f_tailq_run(const gx_f_tailq* q, int j, int k, float* y,
                                                                 const int kind) {
    const int grad = kind == GX_F_EXACT_GRAD;
    gx_fm m = (gx_fm)((1u << k) - 1u);
#if GX_F_HAS_SCATTER
    gx_fv xv = GX_F_MASKLOAD(q->x + j, m);
    gx_fv r = gx_f_tail(xv, grad ? GX_F_MASKLOAD(q->d + j, m) : xv, m, kind);
    GX_F_SCATTER(y, m, q->i + j, r);
#else
    GX_F_TAILMASK(km, k);                   /* lanes past k zero: no floating-point exceptions */
    gx_fv xv = k == GX_F_W ? GX_F_LOADU(q->x + j) : GX_F_MASKLOAD(q->x + j, km);
    float r[GX_F_W] __attribute__((aligned(32)));
    GX_F_STORE(r, gx_f_tail(xv, grad ? GX_F_MASKLOAD(q->d + j, km) : xv, m, kind));
    for (int l = 0; l < k; l++)
        y[q->i[j + l]] = r[l];
#endif
}

/* all nq queued lanes.  Not inlined: in the central loop, its registers went to the exp form and the
   tables to memory (AVX-512 gradient 6-8% slower) */
static __attribute__((noinline)) void gx_f_tailq_flush(const gx_f_tailq* q, int nq, float* y, const int kind) {
    for (int j = 0; j < nq; j += GX_F_W)
        gx_f_tailq_run(q, j, nq - j < GX_F_W ? nq - j : GX_F_W, y, kind);
}

/* Which lanes of a vector the tail takes, from x alone: only x < -R where x > R is exact from the central
   form (the 32-entry tables reach far enough that the clamp at R is exact; a table with a positive slot),
   else |x| > R; the gradient's also x NaN where GX_F_ABSMIN gives it a number (or, without a positive
   slot, where it is NaN: NLE) */
static inline __attribute__((always_inline)) int gx_f_onesided(const int kind) {
    const int pos = kind == GX_F_EXACT_GRAD ? GX_F_GPOS : kind == GX_F_TANH ? GX_F_TCPOS : GX_F_CPOS;
    return GX_F_TAB32 || pos;
}
static inline __attribute__((always_inline)) gx_fm gx_f_tail_mask(gx_fv x, const int kind) {
    const float R = kind == GX_F_EXACT_GRAD ? GX_F_GR : kind == GX_F_TANH ? GX_F_TCR : GX_F_CR;
    if (gx_f_onesided(kind))    /* x > R takes the clamp or the positive slot (else the NaN x: gx_f_grad_bad) */
        return kind == GX_F_EXACT_GRAD && GX_F_ABSMIN_NAN_IS_C ? GX_F_BITS(GX_F_NGE(x, GX_F_SET1(-R)))
                                                                : GX_F_BITS(GX_F_LT(x, GX_F_SET1(-R)));
    if (kind == GX_F_EXACT_GRAD)
        return GX_F_BITS(GX_F_NLE(GX_F_ABS(x), GX_F_SET1(R)));
    return GX_F_BITS(GX_F_GT(GX_F_ABS(x), GX_F_SET1(R)));
}

/* a chunk's summary for the list mode, one operation a vector: acc holds a tail lane (gx_f_tail_mask) if
   any vector had one: one-sided, the least x (GX_F_MIN returns its second operand, acc, for x NaN, not a
   tail lane there), or, for a gradient whose NaN is a tail lane, the tail lanes' x themselves; two-sided,
   the largest |x| (the gradient's as an integer: NaN above inf) */
static inline __attribute__((always_inline)) gx_fv gx_f_summary(gx_fv acc, gx_fv x, const int kind) {
    if (gx_f_onesided(kind))
        return kind == GX_F_EXACT_GRAD && GX_F_ABSMIN_NAN_IS_C ? GX_F_SELECT(gx_f_tail_mask(x, kind), x, acc)
                                                                : GX_F_MIN(x, acc);
    gx_fv ax = GX_F_ABS(x);
    return kind == GX_F_EXACT_GRAD ? GX_F_CASTF(GX_F_MAXI(GX_F_CASTI(acc), GX_F_CASTI(ax))) : GX_F_MAX(ax, acc);
}

/* the central form of one vector (dy: gradient only), *m its tail lanes (gx_f_tail_mask); the gradient's
   results that are not finite are the chunk's to find (gx_f_grad_bad) */
static inline __attribute__((always_inline)) gx_fv gx_f_central_v(gx_fv x, gx_fv dy, gx_fm* m,
                                                                  const int kind, const int chk, int* seen) {
    *m = gx_f_tail_mask(x, kind);
    return kind == GX_F_EXACT_GRAD ? gx_f_gelu_grad_c(x, dy) : gx_f_fwd_c(x, kind == GX_F_TANH, chk, seen);
}

static inline __attribute__((always_inline)) int gx_f_anynan(gx_fv v) {
    return GX_F_BITS(GX_F_UNORD(v, v)) != 0;
}

/* the gradient's central results y that are not finite (a huge or infinite dy; with an 8-entry table's
   positive slot: also x NaN) outside the tail lanes: redone through the tail (gx_f_grad_fix's double check) */
static inline __attribute__((always_inline)) gx_fm gx_f_grad_bad(gx_fv x, gx_fv y) {
    gx_fm mf = GX_F_TAB32 ? (gx_fm)gx_f_suspect(x, y, GX_F_GR)
             : GX_F_GPOS ? GX_F_BITS(GX_F_NEQ(GX_F_MUL(y, GX_F_SET1(0.0f)), GX_F_SET1(0.0f)))
                         : GX_F_BITS(GX_F_NLE(GX_F_FMA(y, GX_F_SET1(0.0f), GX_F_ABS(x)), GX_F_SET1(GX_F_GR)));
    return mf & (gx_fm)~gx_f_tail_mask(x, GX_F_EXACT_GRAD);
}

/* How a chunk of GX_F_LIST vectors (central results stored as they go) finds its tail lanes, chosen by
   what the chunks before queued:
   - none, two chunks running: SUMMED.  Every vector copied and folded into one summary (gx_f_summary, one
     operation); only when that shows a tail lane are the copies searched, with a branch per vector.
     randn sigma = 1: AVX-512 forwards 8-11% faster than LISTED, AVX2 exact 4%.  After one quiet chunk
     alone the AVX2 tanh form at sigma = 1 (0.2% of lanes queued, one a chunk) searched too often: 2-3%
     slower.
   - fewer than 1/GX_F_DIRECT of its lanes: LISTED.  Every vector copied, those with tail lanes listed,
     branch-free (at sigma = 3 a third of the AVX-512 vectors list a lane: a branch on it mispredicts, and
     a SUMMED chunk's search ran at 0.64x), and pushed to the queue after the loop: ~6 operations a vector,
     ~17 per listed one.
   - more: PUSHED.  Each vector's tail lanes pushed as it goes, ~10 operations a vector: wide data (x ~
     U(-8, 8): 12-19% faster than LISTED). */
typedef struct {
    float x[GX_F_LIST][GX_F_W] __attribute__((aligned(64)));    /* every vector's x and dy (PUSHED forwards:
                                                                    none) */
    float d[GX_F_LIST][GX_F_W] __attribute__((aligned(64)));
    int k[GX_F_LIST];                                            /* LISTED: the vectors with tail lanes */
    gx_fm m[GX_F_LIST];
} gx_f_list;
enum { GX_F_LISTED = 0, GX_F_PUSHED = 1, GX_F_SUMMED = 2 };

/* one chunk [i, end) of whole vectors, after nq lanes queued before it; returns the number of queued lanes
   (in q), and in *tiny whether a forward chunk had lanes <= TINY */
static inline __attribute__((always_inline)) int gx_f_central_chunk(const float* x, const float* dy, float* y,
                                                                   ptrdiff_t i, ptrdiff_t end, gx_f_list* L,
                                                                   gx_f_tailq* q, const int kind,
                                                                   const int mode, const int per_vector,
                                                                   int nq, int* tiny) {
    const int grad = kind == GX_F_EXACT_GRAD;
    /* Forwards test for tiny lanes per chunk (the least a, one operation a vector, where the test per
       vector took two and a branch: AVX-512 forwards 7-11% faster at sigma = 1, 7% at 3) and redo them
       from the copies; PUSHED chunks keep none, and the chunks after one with tiny lanes test per vector,
       so that a vector of them alone skips the tables (gx_f_fwd_c: all-subnormal data took ~100-cycle
       microcode assists in them, 40x slower) */
    const int chk = grad || per_vector || mode == GX_F_PUSHED;
    const ptrdiff_t i0 = i;
    int nv = 0, ns = 0;
    gx_fv acc = GX_F_SET1(0.0f), accy = GX_F_SET1(0.0f), acca = GX_F_SET1(1.0f);
#if GX_F_BV_IN_REG
    gx_iv bv = GX_F_SET1I((int)i);
#endif
    for (; i + GX_F_W <= end; i += GX_F_W, nv++) {
        gx_fm m;
        GX_F_PREFETCH((const char*)(x + i) + GX_F_AHEAD);
        if (grad)
            GX_F_PREFETCH((const char*)(dy + i) + GX_F_AHEAD);
        /* y too, for writing: without it 64M inputs ran at 0.65-0.95x the memory floor (1.25 Gelem/s at
           sigma = 3, Xeon), with it 1.1-1.25x; the exp kernels, slower, did not need it */
        GX_F_PREFETCHW((const char*)(y + i) + GX_F_AHEAD);
        gx_fv xv = GX_F_LOADU(x + i), dv = grad ? GX_F_LOADU(dy + i) : xv;
        gx_fv yv = gx_f_central_v(xv, dv, &m, kind, chk, tiny);
        if (!chk)   /* vminps returns acca for a NaN */
            acca = GX_F_MIN(gx_f_fwd_a(xv, kind == GX_F_TANH), acca);
        if (grad || mode != GX_F_PUSHED) {
            GX_F_STORE(L->x[nv], xv);
            if (grad)
                GX_F_STORE(L->d[nv], dv);
        }
        if (grad)   /* NaN from the first result not finite on (y*0 + acc): one operation a vector */
            accy = GX_F_FMA(yv, GX_F_SET1(0.0f), accy);
        if (mode == GX_F_PUSHED) {
#if GX_F_BV_IN_REG
            nq = gx_f_tailq_pushv(q, nq, m, xv, dv, bv, grad);
            bv = GX_F_ADDI(bv, GX_F_SET1I(GX_F_W));
#else
            nq = gx_f_tailq_pushv(q, nq, m, xv, dv, GX_F_SET1I((int)i), grad);
#endif
        } else if (mode == GX_F_LISTED) {
            L->k[ns] = nv;
            L->m[ns] = m;
            ns += m != 0;
        } else {
            acc = gx_f_summary(acc, xv, kind);
        }
        GX_F_STOREU(y + i, yv);
    }
    /* the gradient's results that are not finite, checked per chunk: per vector, the check cost the AVX2
       gradient 20-33% (sigma = 1) */
    if (grad && __builtin_expect(gx_f_anynan(accy), 0)) {
        for (int k = 0; k < nv; k++) {
            gx_fv xv = GX_F_LOADU(L->x[k]), yv = GX_F_LOADU(y + i0 + k * GX_F_W);
            gx_fm bad = gx_f_grad_bad(xv, yv);
            if (bad)
                GX_F_STOREU(y + i0 + k * GX_F_W, GX_F_SELECT(bad, gx_f_tail(xv, GX_F_LOADU(L->d[k]), bad, kind), yv));
        }
    }
    if (!chk && __builtin_expect(gx_f_tiny_mask(acca) != 0, 0)) {
        *tiny = 1;
        for (int k = 0; k < nv; k++) {
            gx_fv xv = GX_F_LOADU(L->x[k]);
            gx_fm t = gx_f_tiny_mask(gx_f_fwd_a(xv, kind == GX_F_TANH));
            if (t)
                GX_F_STOREU(y + i0 + k * GX_F_W, GX_F_SELECT(t, gx_f_tiny(xv), GX_F_LOADU(y + i0 + k * GX_F_W)));
        }
    }
    for (int j = 0; j < ns; j++) {
        int k = L->k[j];
        nq = gx_f_tailq_pushv(q, nq, L->m[j], GX_F_LOADU(L->x[k]), GX_F_LOADU(grad ? L->d[k] : L->x[k]),
                              GX_F_SET1I((int)(i0 + k * GX_F_W)), grad);
    }
    if (mode == GX_F_SUMMED && __builtin_expect(gx_f_tail_mask(acc, kind) != 0, 0)) {
        for (int k = 0; k < nv; k++) {
            gx_fv xv = GX_F_LOADU(L->x[k]);
            gx_fm m = gx_f_tail_mask(xv, kind);
            if (m)
                nq = gx_f_tailq_pushv(q, nq, m, xv, GX_F_LOADU(grad ? L->d[k] : L->x[k]),
                                      GX_F_SET1I((int)(i0 + k * GX_F_W)), grad);
        }
    }
    return nq;
}

/* forward (dy NULL) or gradient over n <= GX_F_SEG elements; y may be x or dy (a vector is loaded, and
   listed, before its result is stored; a queued result lands below every address read later).  The
   queued lanes are computed a vector at a time after each chunk, whole vectors only, the rest carried to
   the next chunk's (a partial vector's exp form after every chunk cost the AVX-512 gradient 6% at sigma = 3,
   where a chunk queues ~6 lanes; the forwards 2-3%).  No branch on how full a queue is inside the loop
   (AVX2 with one: sigma = 3 at 0.8 Gelem/s) */
static inline __attribute__((always_inline)) void gx_f_central_seg(const float* x, const float* dy, float* y,
                                                                   ptrdiff_t n, const int kind) {
    const int grad = kind == GX_F_EXACT_GRAD;
#ifdef GX_F_BOUND
    /* Never in the package: tools/bound_f32.py builds the kernels with it to time the central form alone on
       every lane (tail and tiny lanes left wrong), the bound against which the tail handling is measured */
    {
        gx_fm m;
        int seen = 0;
        ptrdiff_t i = 0;
        for (; i + GX_F_W <= n; i += GX_F_W) {
            GX_F_PREFETCH((const char*)(x + i) + GX_F_AHEAD);
            if (grad)
                GX_F_PREFETCH((const char*)(dy + i) + GX_F_AHEAD);
            GX_F_PREFETCHW((const char*)(y + i) + GX_F_AHEAD);
            gx_fv xv = GX_F_LOADU(x + i);
            GX_F_STOREU(y + i, gx_f_central_v(xv, grad ? GX_F_LOADU(dy + i) : xv, &m, kind, 0, &seen));
        }
        if (i < n) {
            GX_F_TAILMASK(k, n - i);
            gx_fv xv = GX_F_MASKLOAD(x + i, k);
            GX_F_MASKSTORE(y + i, k, gx_f_central_v(xv, grad ? GX_F_MASKLOAD(dy + i, k) : xv, &m, kind, 0, &seen));
        }
        return;
    }
#endif
    gx_f_list L;
    gx_f_tailq q;
    ptrdiff_t i = 0;
    int mode = GX_F_SUMMED, quiet = 2, tiny = 0, nq = 0;
    while (n - i >= GX_F_W) {
        ptrdiff_t end = n - i > GX_F_LIST * GX_F_W ? i + GX_F_LIST * GX_F_W : n;
        int nq0 = nq, seen = tiny;
        tiny = 0;
        if (mode == GX_F_SUMMED)
            nq = gx_f_central_chunk(x, dy, y, i, end, &L, &q, kind, GX_F_SUMMED, 0, nq, &tiny);
        else if (mode == GX_F_PUSHED)
            nq = gx_f_central_chunk(x, dy, y, i, end, &L, &q, kind, GX_F_PUSHED, 1, nq, &tiny);
        else if (seen)
            nq = gx_f_central_chunk(x, dy, y, i, end, &L, &q, kind, GX_F_LISTED, 1, nq, &tiny);
        else
            nq = gx_f_central_chunk(x, dy, y, i, end, &L, &q, kind, GX_F_LISTED, 0, nq, &tiny);
        int full = nq & -GX_F_W, added = nq - nq0;
        if (full) {
            gx_f_tailq_flush(&q, full, y, kind);
            GX_F_STORE(q.x, GX_F_LOADU(q.x + full));
            if (grad)
                GX_F_STORE(q.d, GX_F_LOADU(q.d + full));
            GX_F_STORE((float*)q.i, GX_F_LOADU((const float*)(q.i + full)));
            nq -= full;
        }
        quiet = added == 0 && !tiny ? quiet + 1 : 0;
        mode = quiet >= 2 ? GX_F_SUMMED : added * GX_F_DIRECT >= (int)(end - i) ? GX_F_PUSHED : GX_F_LISTED;
        i += (end - i) & -(ptrdiff_t)GX_F_W;
    }
    if (nq)
        gx_f_tailq_flush(&q, nq, y, kind);
    if (i < n) {        /* the last, partial vector: its tail lanes in place, by the same functions */
        gx_fm m;
        GX_F_TAILMASK(k, n - i);
        gx_fv xv = GX_F_MASKLOAD(x + i, k), dv = grad ? GX_F_MASKLOAD(dy + i, k) : xv;
        gx_fv yv = gx_f_central_v(xv, dv, &m, kind, 1, &tiny);
        if (grad)
            m |= gx_f_grad_bad(xv, yv);
        if (m)
            yv = GX_F_SELECT(m, gx_f_tail(xv, dv, m, kind), yv);
        GX_F_MASKSTORE(y + i, k, yv);
    }
}
/* n in segments: queued offsets are int32 */
#define GX_F_CENTRAL_BLOCK(kind, x, dy, y, n)                                                              \
    for (ptrdiff_t o = 0; o < n; o += GX_F_SEG)                                                            \
        gx_f_central_seg(x + o, dy ? dy + o : NULL, y + o, n - o < GX_F_SEG ? n - o : GX_F_SEG, kind);
static void gx_f_gelu_block(const float* x, float* y, ptrdiff_t n) {
    const float* dy = NULL;
    GX_F_CENTRAL_BLOCK(GX_F_EXACT, x, dy, y, n)
}
static void gx_f_gelu_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {
    GX_F_CENTRAL_BLOCK(GX_F_EXACT_GRAD, x, dy, y, n)
}
#else
static void gx_f_gelu_block(const float* x, float* y, ptrdiff_t n) { (void)x; (void)y; (void)n; }
static void gx_f_gelu_grad_block(const float* x, const float* dy, float* y, ptrdiff_t n) {
    (void)x; (void)dy; (void)y; (void)n; }
#endif
#endif
