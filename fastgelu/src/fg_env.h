#ifndef FG_ENV_H
#define FG_ENV_H
#include <fenv.h>
#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#define FG_OPENMP 1
#else
#define FG_OPENMP 0
static inline int omp_get_max_threads(void) { return 1; }
static inline void omp_set_num_threads(int n) { (void)n; }
#endif

/* Every piece of work runs in the IEEE default environment -- round to nearest, no flush-to-zero or
   denormals-are-zero, exceptions masked -- whatever the caller (or an OpenMP worker) had set, so results
   are the same on every thread and path; on leaving, the thread's own state comes back, sticky flags
   included (the kernels raise flags freely in lanes a select discards, and NumPy reports flags). */
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
typedef struct { unsigned int mxcsr; } fg_fpstate;
static inline void fg_fp_enter(fg_fpstate* s) {
    s->mxcsr = __builtin_ia32_stmxcsr();
    __builtin_ia32_ldmxcsr(0x1f80u | (s->mxcsr & 0x3fu));
}
static inline void fg_fp_leave(const fg_fpstate* s) { __builtin_ia32_ldmxcsr(s->mxcsr); }
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
/* FPCR = 0 is the IEEE default: round to nearest, no flush-to-zero (FZ, FZ16, FIZ), IEEE half (AHP), NaN
   propagation (DN), no traps.  feholdexcept would keep the caller's FZ (set by torch.set_flush_denormal,
   for one). */
typedef struct { uint64_t fpcr, fpsr; } fg_fpstate;
static inline void fg_fp_enter(fg_fpstate* s) {
    uint64_t zero = 0;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(s->fpcr) : : "memory");
    __asm__ __volatile__("mrs %0, fpsr" : "=r"(s->fpsr) : : "memory");
    __asm__ __volatile__("msr fpcr, %0" : : "r"(zero) : "memory");
}
static inline void fg_fp_leave(const fg_fpstate* s) {
    __asm__ __volatile__("msr fpsr, %0" : : "r"(s->fpsr) : "memory");
    __asm__ __volatile__("msr fpcr, %0" : : "r"(s->fpcr) : "memory");
}
#else
typedef struct { fenv_t env; } fg_fpstate;
static inline void fg_fp_enter(fg_fpstate* s) { feholdexcept(&s->env); fesetround(FE_TONEAREST); }
static inline void fg_fp_leave(const fg_fpstate* s) { fesetenv(&s->env); }
#endif
#endif
