/* What binds the AVX2 exact forward's central loop: the package's loop (fg_gelu_f32_central.h, its tables
   and coefficients) beside variants that each change one thing, timed in one process (best of 3,000 runs
   over an L2-resident array by default, ns an element).  "package", "two vectors" and "permilps+blend" give
   the package loop's results; the others are timing probes (each prints how many of its results differ).
     package        8 vpermps lookups a vector, the polynomial as the package evaluates it
     two vectors    the same, two vectors' operations interleaved (a shorter chain per iteration)
     estrin         the same lookups, the degree-7 polynomial by Estrin (depth 3 FMAs after u, not 5)
     fixed index    the same permutes with an index that does not depend on x (off the critical path)
     no lookups     the rows loaded as vectors, no permute (the loop without its lookups)
     permilps+blend an 8-entry lookup as two in-lane vpermilps and a vblendvps
     permilps       one in-lane vpermilps a coefficient (a 4-entry table's cost)
   Build and run (x86-64 with AVX2 and FMA):
     gcc -O3 -mavx2 -mfma -mf16c -fno-math-errno -I fastgelu/src tools/lookups_avx2.c -o /tmp/lookups -lm
     /tmp/lookups [elements, default 32768] [runs, default 3000] */
#define FASTGELU_F32_FWD 1
#include "fg_gelu_f32.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PACKAGE, TWO, ESTRIN, FIXED, NOLOOKUP, PERMILPS_BLEND, PERMILPS, NVAR };
static const char* NAMES[NVAR] = {"package", "two vectors", "estrin", "fixed index", "no lookups",
                                  "permilps+blend", "permilps"};
static gx_iv fixed_idx;

static inline __attribute__((always_inline)) gx_fv look(const float* row, gx_iv idx, gx_fv sel, const int var) {
    if (var == NOLOOKUP) {
        gx_fv r = _mm256_load_ps(row);
        __asm__ volatile("" : "+x"(r));
        return r;
    }
    if (var == PERMILPS || var == PERMILPS_BLEND) {
        __m256 lo = _mm256_broadcast_ps((const __m128*)row), hi = _mm256_broadcast_ps((const __m128*)(row + 4));
        __asm__ volatile("" : "+x"(lo), "+x"(hi));
        if (var == PERMILPS)
            return _mm256_permutevar_ps(lo, idx);
        return _mm256_blendv_ps(_mm256_permutevar_ps(lo, idx), _mm256_permutevar_ps(hi, idx), sel);
    }
    return gx_f_tab8(row, var == FIXED ? fixed_idx : idx);
}

/* F = a*Phi(-a) on the central intervals, the lookups and the order by var */
static inline __attribute__((always_inline)) gx_fv central(gx_fv a, const int var) {
    const float (*tab)[8] = GX_F_C;
    gx_fv t = GX_F_MIN(GX_F_FMA(a, GX_F_SET1(GX_F_CK), GX_F_SET1(GX_F_MAGIC)), GX_F_SET1(GX_F_MAGIC + 7.0f));
    gx_iv idx = GX_F_CASTI(t);
    gx_fv sel = _mm256_castsi256_ps(_mm256_slli_epi32(idx, 29));
    gx_fv u = GX_F_FMA(GX_F_SUB(t, GX_F_SET1(GX_F_MAGIC)), GX_F_SET1(-GX_F_CH), a), u2 = GX_F_MUL(u, u);
#define C(k) look(tab[(k) + 1], idx, sel, var)
    if (var == ESTRIN) {
        gx_fv u4 = GX_F_MUL(u2, u2);
        gx_fv e01 = GX_F_FMA(C(1), u, C(0)), e23 = GX_F_FMA(C(3), u, C(2));
        gx_fv e45 = GX_F_FMA(C(5), u, C(4)), e67 = GX_F_FMA(C(7), u, C(6));
        return GX_F_FMA(GX_F_FMA(e67, u2, e45), u4, GX_F_FMA(e23, u2, e01));
    }
    gx_fv p = GX_F_FMA(C(7), u, C(6));
    p = GX_F_FMA(p, u2, GX_F_FMA(C(5), u, C(4)));
    p = GX_F_FMA(p, u2, GX_F_FMA(C(3), u, C(2)));
    p = GX_F_FMA(p, u, C(1));
    return GX_F_FMA(p, u, C(0));
#undef C
}

/* the package's order for two vectors at once, each step for both */
static inline __attribute__((always_inline)) void central2(gx_fv a0, gx_fv a1, gx_fv* r0, gx_fv* r1) {
    const float (*tab)[8] = GX_F_C;
    gx_fv t0 = GX_F_MIN(GX_F_FMA(a0, GX_F_SET1(GX_F_CK), GX_F_SET1(GX_F_MAGIC)), GX_F_SET1(GX_F_MAGIC + 7.0f));
    gx_fv t1 = GX_F_MIN(GX_F_FMA(a1, GX_F_SET1(GX_F_CK), GX_F_SET1(GX_F_MAGIC)), GX_F_SET1(GX_F_MAGIC + 7.0f));
    gx_iv i0 = GX_F_CASTI(t0), i1 = GX_F_CASTI(t1);
    gx_fv u0 = GX_F_FMA(GX_F_SUB(t0, GX_F_SET1(GX_F_MAGIC)), GX_F_SET1(-GX_F_CH), a0);
    gx_fv u1 = GX_F_FMA(GX_F_SUB(t1, GX_F_SET1(GX_F_MAGIC)), GX_F_SET1(-GX_F_CH), a1);
    gx_fv q0 = GX_F_MUL(u0, u0), q1 = GX_F_MUL(u1, u1);
    gx_fv p0 = GX_F_FMA(gx_f_tab8(tab[8], i0), u0, gx_f_tab8(tab[7], i0));
    gx_fv p1 = GX_F_FMA(gx_f_tab8(tab[8], i1), u1, gx_f_tab8(tab[7], i1));
    for (int k = 6; k >= 4; k -= 2) {
        p0 = GX_F_FMA(p0, q0, GX_F_FMA(gx_f_tab8(tab[k], i0), u0, gx_f_tab8(tab[k - 1], i0)));
        p1 = GX_F_FMA(p1, q1, GX_F_FMA(gx_f_tab8(tab[k], i1), u1, gx_f_tab8(tab[k - 1], i1)));
    }
    p0 = GX_F_FMA(p0, u0, gx_f_tab8(tab[2], i0));
    p1 = GX_F_FMA(p1, u1, gx_f_tab8(tab[2], i1));
    *r0 = GX_F_FMA(p0, u0, gx_f_tab8(tab[1], i0));
    *r1 = GX_F_FMA(p1, u1, gx_f_tab8(tab[1], i1));
}

#define LOOP(var)                                                                                          \
    static __attribute__((noinline)) void loop_##var(const float* x, float* y, long n) {                   \
        for (long i = 0; i < n; i += 8) {                                                                  \
            gx_fv xv = GX_F_LOADU(x + i);                                                                  \
            GX_F_STOREU(y + i, GX_F_SUB(GX_F_MAX(GX_F_SET1(-0.0f), xv), central(gx_f_fwd_a(xv, 0), var))); \
        }                                                                                                  \
    }
LOOP(PACKAGE)
LOOP(ESTRIN)
LOOP(FIXED)
LOOP(NOLOOKUP)
LOOP(PERMILPS_BLEND)
LOOP(PERMILPS)
static __attribute__((noinline)) void loop_TWO(const float* x, float* y, long n) {
    for (long i = 0; i < n; i += 16) {
        gx_fv x0 = GX_F_LOADU(x + i), x1 = GX_F_LOADU(x + i + 8), F0, F1;
        central2(gx_f_fwd_a(x0, 0), gx_f_fwd_a(x1, 0), &F0, &F1);
        GX_F_STOREU(y + i, GX_F_SUB(GX_F_MAX(GX_F_SET1(-0.0f), x0), F0));
        GX_F_STOREU(y + i + 8, GX_F_SUB(GX_F_MAX(GX_F_SET1(-0.0f), x1), F1));
    }
}
static void (*const LOOPS[NVAR])(const float*, float*, long) = {
    loop_PACKAGE, loop_TWO, loop_ESTRIN, loop_FIXED, loop_NOLOOKUP, loop_PERMILPS_BLEND, loop_PERMILPS};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char** argv) {
    long n = argc > 1 ? atol(argv[1]) : 32768;
    int runs = argc > 2 ? atoi(argv[2]) : 3000;
    n = (n + 15) & -16L;
    float* x = aligned_alloc(64, n * 4);
    float* y = aligned_alloc(64, n * 4);
    float* ref = aligned_alloc(64, n * 4);
    fixed_idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    srand(1);
    for (long i = 0; i < n; i++) {     /* randn, inside the central intervals (x >= -R) */
        double u = (rand() + 1.0) / (RAND_MAX + 2.0), v = rand() / (RAND_MAX + 1.0);
        x[i] = fmaxf((float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v)), -GX_F_CR);
    }
    loop_PACKAGE(x, ref, n);
    double best[NVAR];
    for (int v = 0; v < NVAR; v++)
        best[v] = 1e30;
    for (int r = 0; r < runs; r++)
        for (int v = 0; v < NVAR; v++) {
            double t0 = now();
            LOOPS[v](x, y, n);
            double t = now() - t0;
            if (t < best[v])
                best[v] = t;
        }
    /* a clock estimate: four dependent integer adds an iteration */
    long a = 0, m = runs > 100 ? 200000000 : 1000;
    double t0 = now();
    for (long i = 0; i < m; i++)
        __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(a));
    double ghz = 4.0 * m / (now() - t0) / 1e9;
    printf("%ld elements, clock ~%.2f GHz\n", n, ghz);
    for (int v = 0; v < NVAR; v++) {
        long differ = 0;
        LOOPS[v](x, y, n);
        for (long i = 0; i < n; i++)
            differ += memcmp(&y[i], &ref[i], 4) != 0;
        printf("  %-15s %.3f ns an element, %5.1f cycles a vector, %.2fx the package's time; %ld results differ\n",
               NAMES[v], best[v] / n * 1e9, best[v] / n * 8e9 * ghz, best[v] / best[PACKAGE], differ);
    }
    return 0;
}
