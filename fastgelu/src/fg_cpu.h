#ifndef FG_CPU_H
#define FG_CPU_H
/* what fg_cpu_has asks for: the instruction sets of the builds beyond the baseline (setup.py's ISA list) */
typedef enum { FG_CPU_AVX2 = 1, FG_CPU_AVX512 = 2 } fg_cpu_isa;
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
/* F16C is read from CPUID leaf 1 (ECX bit 29) rather than __builtin_cpu_supports("f16c"): clang < 15
   rejects that feature name. It needs no OS state of its own beyond AVX's, which avx2 checks. */
static int fg_cpu_f16c(void) {
    unsigned int a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
}
static int fg_cpu_has(fg_cpu_isa what) {
    __builtin_cpu_init();
    switch (what) {
    case FG_CPU_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && fg_cpu_f16c();
    case FG_CPU_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
            && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")
            && __builtin_cpu_supports("fma") && fg_cpu_f16c();
    }
    return 0;
}
#else
static int fg_cpu_has(fg_cpu_isa what) { (void)what; return 0; }
#endif

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
static unsigned int fg_get_mxcsr(void) { return __builtin_ia32_stmxcsr(); }
static void fg_set_mxcsr(unsigned int v) { __builtin_ia32_ldmxcsr(v); }
#define FG_HAVE_MXCSR 1
#else
static unsigned int fg_get_mxcsr(void) { return 0; }
static void fg_set_mxcsr(unsigned int v) { (void)v; }
#define FG_HAVE_MXCSR 0
#endif

#if defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#include <stdint.h>
static uint64_t fg_get_fpcr(void) { uint64_t v; __asm__ __volatile__("mrs %0, fpcr" : "=r"(v)); return v; }
static void fg_set_fpcr(uint64_t v) { __asm__ __volatile__("msr fpcr, %0" : : "r"(v) : "memory"); }
#define FG_HAVE_FPCR 1
#else
static unsigned long long fg_get_fpcr(void) { return 0; }
static void fg_set_fpcr(unsigned long long v) { (void)v; }
#define FG_HAVE_FPCR 0
#endif
#endif
