/* What each part of the AVX2 exact forward's central loop costs on this CPU (issue 61; the findings:
   docs/design/avx2-zen3.md): the package's loop (fg_f32_central.h's arithmetic on the exact forward's table)
   beside variants that each change one thing -- fewer lookups (the rows loaded as vectors instead), more
   FMAs or integer operations, the rows kept in registers, in-lane lookups (vpermilps, vpshufb: a 4-entry or
   16-bit table's cost), two coefficients packed in one entry, Estrin, the tail formulas on every lane, an
   8-entry 32-bit lookup from two vpshufb -- timed interleaved, best of RUNS, as ratios to the package's loop.
   Timing probes: most compute wrong results; "SB2" (the vpshufb pair) must equal the package's bits, and
   the program says whether it does.
     gcc -O3 -mavx2 -mfma -mf16c -fno-math-errno -I fastgelu/src tools/lookup_costs_avx2.c -o /tmp/lc -lm
     /tmp/lc [elements, default 16384] [runs, default 3000]
   tools/lookups_avx2.c times the loop's order of operations (interleaving, Estrin, fixed indices). */
#define FG_F32_FWD 1
#include "fg_fp.h"
#include "fg_f32_kernels.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
enum { PKG, PLAIN, L7, L6, L4, L0, FPLUS4, IPLUS4, REG, PMEM, PL, PSB, PCK, ESTR, TAIL, EXPD, SB2, NV };
static const char* NAMES[NV] = {"package (8 vpermps, paired)", "plain Horner (7 FMA)", "7 lookups (C7 const)",
  "6 lookups", "4 lookups", "0 lookups (rows loaded)", "package + 4 FMA", "package + 4 int ops",
  "rows in registers", "vpermps mem operand", "8 vpermilps", "8 vpshufb", "7 vpermps + pack decode", "estrin", "tail formula on every lane", "grad exp form (expD) every lane", "8 x (2 vpshufb + or), full 32-bit"};
static __m128i TLO[9], THI[9];
static void mk_halves(void) { for (int r = 0; r < 9; r++) { unsigned short lo[8], hi[8]; for (int i = 0; i < 8; i++) { unsigned int b; memcpy(&b, &fg_f_gelu_central.c[r][i], 4); lo[i] = b & 0xffff; hi[i] = b >> 16; }
    memcpy(&TLO[r], lo, 16); memcpy(&THI[r], hi, 16); } }
static inline __attribute__((always_inline)) fg_fv lk(const float* row, fg_iv idx, const int var, const int k) {
    if (var == L0 || (var == L7 && k == 7) || (var == L6 && k >= 6) || (var == L4 && k >= 4)) {
        fg_fv r = _mm256_load_ps(row); __asm__ volatile("" : "+x"(r)); return r; }
    if (var == PMEM) { __m256 r; __asm__ volatile("vpermps %1, %2, %0" : "=x"(r) : "m"(*(const __m256*)row), "x"(idx)); return r; }
    if (var == PL) { __m256 lo = _mm256_broadcast_ps((const __m128*)row); __asm__ volatile("" : "+x"(lo));
        return _mm256_permutevar_ps(lo, idx); }
    if (var == PSB) { __m256i lo = _mm256_broadcastsi128_si256(*(const __m128i*)row); __asm__ volatile("" : "+x"(lo));
        return _mm256_castsi256_ps(_mm256_shuffle_epi8(lo, idx)); }
    return fg_f_tab8(row, idx);
}
static inline __attribute__((always_inline)) fg_fv central(fg_fv a, const int var) {
    const float (*tab)[8] = fg_f_gelu_central.c;
    fg_fv t = FG_F_MIN(FG_F_FMA(a, FG_F_SET1(fg_f_gelu_central.K), FG_F_SET1(FG_F_MAGIC)), FG_F_SET1(FG_F_MAGIC + 7.0f));
    fg_iv idx = FG_F_CASTI(t);
    fg_fv u = FG_F_FMA(FG_F_SUB(t, FG_F_SET1(FG_F_MAGIC)), FG_F_SET1(-fg_f_gelu_central.H), a), u2 = FG_F_MUL(u, u);
#define C(k) lk(tab[(k) + 1], idx, var, k)
    if (var == REG) {
        static __m256 R[8]; /* rows kept in registers by the loop below (see loop_REG) */
        (void)R;
    }
    if (var == ESTR) {
        fg_fv u4 = FG_F_MUL(u2, u2);
        fg_fv e01 = FG_F_FMA(C(1), u, C(0)), e23 = FG_F_FMA(C(3), u, C(2));
        fg_fv e45 = FG_F_FMA(C(5), u, C(4)), e67 = FG_F_FMA(C(7), u, C(6));
        return FG_F_FMA(FG_F_FMA(e67, u2, e45), u4, FG_F_FMA(e23, u2, e01));
    }
    if (var == PLAIN) {
        fg_fv p = C(7);
        for (int k = 6; k >= 0; k--) p = FG_F_FMA(p, u, C(k));
        return p;
    }
    if (var == SB2) {
        __m256i i2 = _mm256_add_epi32(_mm256_and_si256(idx, _mm256_set1_epi32(7)), _mm256_and_si256(idx, _mm256_set1_epi32(7)));
        __m256i pair = _mm256_add_epi32(_mm256_add_epi32(i2, _mm256_slli_epi32(i2, 8)), _mm256_set1_epi32(0x100));
        __m256i iL = _mm256_or_si256(pair, _mm256_set1_epi32((int)0x80800000u));
        __m256i iH = _mm256_or_si256(_mm256_slli_epi32(pair, 16), _mm256_set1_epi32(0x8080));
#define Q(k) ({ __m256i lo_ = _mm256_broadcastsi128_si256(TLO[(k)+1]), hi_ = _mm256_broadcastsi128_si256(THI[(k)+1]); \
        __asm__ volatile("" : "+x"(lo_), "+x"(hi_)); _mm256_castsi256_ps(_mm256_or_si256(_mm256_shuffle_epi8(lo_, iL), _mm256_shuffle_epi8(hi_, iH))); })
        fg_fv p = FG_F_FMA(Q(7), u, Q(6));
        p = FG_F_FMA(p, u2, FG_F_FMA(Q(5), u, Q(4)));
        p = FG_F_FMA(p, u2, FG_F_FMA(Q(3), u, Q(2)));
        p = FG_F_FMA(p, u, Q(1));
        return FG_F_FMA(p, u, Q(0));
#undef Q
    }
    if (var == PCK) { /* C7 and C6 from one lookup, decoded by integer operations */
        __m256i w = _mm256_castps_si256(fg_f_tab8(tab[7], idx));
        fg_fv c6 = _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32(0xffffe000)));
        fg_fv c7 = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_slli_epi32(w, 19), _mm256_set1_epi32(0x30000000)));
        fg_fv p = FG_F_FMA(c7, u, c6);
        p = FG_F_FMA(p, u2, FG_F_FMA(C(5), u, C(4)));
        p = FG_F_FMA(p, u2, FG_F_FMA(C(3), u, C(2)));
        p = FG_F_FMA(p, u, C(1));
        return FG_F_FMA(p, u, C(0));
    }
    fg_fv p = FG_F_FMA(C(7), u, C(6));
    p = FG_F_FMA(p, u2, FG_F_FMA(C(5), u, C(4)));
    p = FG_F_FMA(p, u2, FG_F_FMA(C(3), u, C(2)));
    p = FG_F_FMA(p, u, C(1));
    p = FG_F_FMA(p, u, C(0));
    if (var == FPLUS4) { fg_fv z = FG_F_FMA(u, u2, a); z = FG_F_FMA(z, u, a); fg_fv w = FG_F_FMA(u2, a, u); w = FG_F_FMA(w, a, u);
        __asm__ volatile("" :: "x"(z), "x"(w)); }
    if (var == IPLUS4) { __m256i z = _mm256_add_epi32(idx, _mm256_slli_epi32(idx, 3)); z = _mm256_xor_si256(z, _mm256_srli_epi32(z, 2));
        __asm__ volatile("" :: "x"(z)); }
    return p;
#undef C
}
#define LOOP(var) static __attribute__((noinline)) void loop_##var(const float* x, float* y, long n) { \
    for (long i = 0; i < n; i += 8) { fg_fv xv = FG_F_LOADU(x + i); \
        FG_F_STOREU(y + i, FG_F_SUB(FG_F_MAX(FG_F_SET1(-0.0f), xv), central(fg_f_fwd_a(xv, FG_F_GELU), var))); } }
LOOP(PKG) LOOP(PLAIN) LOOP(L7) LOOP(L6) LOOP(L4) LOOP(L0) LOOP(FPLUS4) LOOP(IPLUS4) LOOP(PMEM) LOOP(PL) LOOP(PSB) LOOP(PCK) LOOP(ESTR) LOOP(SB2)
/* rows in registers: the eight rows loaded once before the loop */
static __attribute__((noinline)) void loop_REG(const float* x, float* y, long n) {
    const float (*tab)[8] = fg_f_gelu_central.c;
    __m256 r1 = _mm256_load_ps(tab[1]), r2 = _mm256_load_ps(tab[2]), r3 = _mm256_load_ps(tab[3]), r4 = _mm256_load_ps(tab[4]);
    __m256 r5 = _mm256_load_ps(tab[5]), r6 = _mm256_load_ps(tab[6]), r7 = _mm256_load_ps(tab[7]), r8 = _mm256_load_ps(tab[8]);
    for (long i = 0; i < n; i += 8) {
        fg_fv xv = FG_F_LOADU(x + i), a = fg_f_fwd_a(xv, FG_F_GELU);
        fg_fv t = FG_F_MIN(FG_F_FMA(a, FG_F_SET1(fg_f_gelu_central.K), FG_F_SET1(FG_F_MAGIC)), FG_F_SET1(FG_F_MAGIC + 7.0f));
        fg_iv idx = FG_F_CASTI(t);
        fg_fv u = FG_F_FMA(FG_F_SUB(t, FG_F_SET1(FG_F_MAGIC)), FG_F_SET1(-fg_f_gelu_central.H), a), u2 = FG_F_MUL(u, u);
#define P(r) _mm256_permutevar8x32_ps(r, idx)
        fg_fv p = FG_F_FMA(P(r8), u, P(r7));
        p = FG_F_FMA(p, u2, FG_F_FMA(P(r6), u, P(r5)));
        p = FG_F_FMA(p, u2, FG_F_FMA(P(r4), u, P(r3)));
        p = FG_F_FMA(p, u, P(r2));
        p = FG_F_FMA(p, u, P(r1));
#undef P
        FG_F_STOREU(y + i, FG_F_SUB(FG_F_MAX(FG_F_SET1(-0.0f), xv), p));
    }
}
static __attribute__((noinline)) void loop_TAIL(const float* x, float* y, long n) {
    for (long i = 0; i < n; i += 8) { fg_fv xv = FG_F_LOADU(x + i); FG_F_STOREU(y + i, fg_f_gelu_tail(xv)); } }
static __attribute__((noinline)) void loop_EXPD(const float* x, float* y, long n) {
    for (long i = 0; i < n; i += 8) { fg_fv xv = FG_F_LOADU(x + i); fg_fv a = FG_F_MIN(FG_F_SET1(12.0f), FG_F_ABS(xv));
        fg_fv ac = FG_F_MAX(FG_F_SET1(FG_F_TINY), a); FG_F_STOREU(y + i, fg_f_expD(a, ac, 1, xv, NULL)); } }
static void (*const LOOPS[NV])(const float*, float*, long) = {loop_PKG, loop_PLAIN, loop_L7, loop_L6, loop_L4, loop_L0,
  loop_FPLUS4, loop_IPLUS4, loop_REG, loop_PMEM, loop_PL, loop_PSB, loop_PCK, loop_ESTR, loop_TAIL, loop_EXPD, loop_SB2};
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char** argv) {
    long n = argc > 1 ? atol(argv[1]) : 16384; int runs = argc > 2 ? atoi(argv[2]) : 3000;
    float* x = aligned_alloc(64, n * 4); float* y = aligned_alloc(64, n * 4);
    srand(1);
    for (long i = 0; i < n; i++) { double u = (rand() + 1.0) / (RAND_MAX + 2.0), v = rand() / (RAND_MAX + 1.0);
        x[i] = fmaxf((float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v)), -fg_f_gelu_central.R); }
    mk_halves();
    double best[NV]; for (int v = 0; v < NV; v++) best[v] = 1e30;
    for (int r = 0; r < runs; r++) for (int v = 0; v < NV; v++) { double t0 = now(); LOOPS[v](x, y, n); double t = now() - t0; if (t < best[v]) best[v] = t; }
    long a = 0, m = 100000000; double t0 = now();
    for (long i = 0; i < m; i++) __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(a));
    double ghz = 4.0 * m / (now() - t0) / 1e9;
    { float* y2 = aligned_alloc(64, n*4); loop_PKG(x, y, n); loop_SB2(x, y2, n); long d = 0; for (long i = 0; i < n; i++) d += memcmp(&y[i], &y2[i], 4) != 0; printf("SB2 differs from package in %ld of %ld\n", d, n); }
    printf("%ld elements, clock ~%.2f GHz (at the end)\n", n, ghz);
    for (int v = 0; v < NV; v++) printf("  %-30s %.3f ns/elem %5.1f cyc/vec  %.3fx package\n", NAMES[v], best[v]/n*1e9, best[v]/n*8e9*ghz, best[v]/best[PKG]);
}
