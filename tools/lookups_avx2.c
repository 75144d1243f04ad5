/* What binds the AVX2 exact forward's central loop: the package's loop (fg_f32_central.h, its tables
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
#define FG_F32_FWD 1
#include "fg_fp.h"
#include "fg_f32_kernels.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PACKAGE, TWO, ESTRIN, FIXED, NOLOOKUP, PERMILPS_BLEND, PERMILPS, NVAR };
static const char* NAMES[NVAR] = {"package", "two vectors", "estrin", "fixed index", "no lookups",
                                  "permilps+blend", "permilps"};
static fg_iv fixed_idx;

static inline __attribute__((always_inline)) fg_fv look(const float* row, fg_iv idx, fg_fv sel, const int var) {
    if (var == NOLOOKUP) {
        fg_fv r = _mm256_load_ps(row);
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
    return fg_f_tab8(row, var == FIXED ? fixed_idx : idx);
}

/* F = a*Phi(-a) on the central intervals, the lookups and the order by var */
static inline __attribute__((always_inline)) fg_fv central(fg_fv a, const int var) {
    const float (*tab)[8] = fg_f_gelu_central.c;
    fg_fv t = FG_F_MIN(FG_F_FMA(a, FG_F_SET1(fg_f_gelu_central.K), FG_F_SET1(FG_F_MAGIC)), FG_F_SET1(FG_F_MAGIC + 7.0f));
    fg_iv idx = FG_F_CASTI(t);
    fg_fv sel = _mm256_castsi256_ps(_mm256_slli_epi32(idx, 29));
    fg_fv u = FG_F_FMA(FG_F_SUB(t, FG_F_SET1(FG_F_MAGIC)), FG_F_SET1(-fg_f_gelu_central.H), a), u2 = FG_F_MUL(u, u);
#define C(k) look(tab[(k) + 1], idx, sel, var)
    if (var == ESTRIN) {
        fg_fv u4 = FG_F_MUL(u2, u2);
        fg_fv e01 = FG_F_FMA(C(1), u, C(0)), e23 = FG_F_FMA(C(3), u, C(2));
        fg_fv e45 = FG_F_FMA(C(5), u, C(4)), e67 = FG_F_FMA(C(7), u, C(6));
        return FG_F_FMA(FG_F_FMA(e67, u2, e45), u4, FG_F_FMA(e23, u2, e01));
    }
    fg_fv p = FG_F_FMA(C(7), u, C(6));
    p = FG_F_FMA(p, u2, FG_F_FMA(C(5), u, C(4)));
    p = FG_F_FMA(p, u2, FG_F_FMA(C(3), u, C(2)));
    p = FG_F_FMA(p, u, C(1));
    return FG_F_FMA(p, u, C(0));
#undef C
}

/* the package's order for two vectors at once, each step for both */
static inline __attribute__((always_inline)) void central2(fg_fv a0, fg_fv a1, fg_fv* r0, fg_fv* r1) {
    const float (*tab)[8] = fg_f_gelu_central.c;
    fg_fv t0 = FG_F_MIN(FG_F_FMA(a0, FG_F_SET1(fg_f_gelu_central.K), FG_F_SET1(FG_F_MAGIC)), FG_F_SET1(FG_F_MAGIC + 7.0f));
    fg_fv t1 = FG_F_MIN(FG_F_FMA(a1, FG_F_SET1(fg_f_gelu_central.K), FG_F_SET1(FG_F_MAGIC)), FG_F_SET1(FG_F_MAGIC + 7.0f));
    fg_iv i0 = FG_F_CASTI(t0), i1 = FG_F_CASTI(t1);
    fg_fv u0 = FG_F_FMA(FG_F_SUB(t0, FG_F_SET1(FG_F_MAGIC)), FG_F_SET1(-fg_f_gelu_central.H), a0);
    fg_fv u1 = FG_F_FMA(FG_F_SUB(t1, FG_F_SET1(FG_F_MAGIC)), FG_F_SET1(-fg_f_gelu_central.H), a1);
    fg_fv q0 = FG_F_MUL(u0, u0), q1 = FG_F_MUL(u1, u1);
    fg_fv p0 = FG_F_FMA(fg_f_tab8(tab[8], i0), u0, fg_f_tab8(tab[7], i0));
    fg_fv p1 = FG_F_FMA(fg_f_tab8(tab[8], i1), u1, fg_f_tab8(tab[7], i1));
    for (int k = 6; k >= 4; k -= 2) {
        p0 = FG_F_FMA(p0, q0, FG_F_FMA(fg_f_tab8(tab[k], i0), u0, fg_f_tab8(tab[k - 1], i0)));
        p1 = FG_F_FMA(p1, q1, FG_F_FMA(fg_f_tab8(tab[k], i1), u1, fg_f_tab8(tab[k - 1], i1)));
    }
    p0 = FG_F_FMA(p0, u0, fg_f_tab8(tab[2], i0));
    p1 = FG_F_FMA(p1, u1, fg_f_tab8(tab[2], i1));
    *r0 = FG_F_FMA(p0, u0, fg_f_tab8(tab[1], i0));
    *r1 = FG_F_FMA(p1, u1, fg_f_tab8(tab[1], i1));
}

#define LOOP(var)                                                                                          \
    static __attribute__((noinline)) void loop_##var(const float* x, float* y, long n) {                   \
        for (long i = 0; i < n; i += 8) {                                                                  \
            fg_fv xv = FG_F_LOADU(x + i);                                                                  \
            FG_F_STOREU(y + i, FG_F_SUB(FG_F_MAX(FG_F_SET1(-0.0f), xv), central(fg_f_fwd_a(xv, FG_F_GELU), var))); \
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
        fg_fv x0 = FG_F_LOADU(x + i), x1 = FG_F_LOADU(x + i + 8), F0, F1;
        central2(fg_f_fwd_a(x0, 0), fg_f_fwd_a(x1, 0), &F0, &F1);
        FG_F_STOREU(y + i, FG_F_SUB(FG_F_MAX(FG_F_SET1(-0.0f), x0), F0));
        FG_F_STOREU(y + i + 8, FG_F_SUB(FG_F_MAX(FG_F_SET1(-0.0f), x1), F1));
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
        x[i] = fmaxf((float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v)), -fg_f_gelu_central.R);
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
