/* tools/bound_f32.py's build of the float32 kernels (tools/gelu_f32_kernel.py with -DFG_F_BOUND), never the
   package's: each segment of the central form's driver (fastgelu/src/fg_f32_drive.h, FG_F_SEG_HOOK) runs
   the central form alone on every lane, tail and tiny lanes left wrong, so that its time is the bound
   against which the tail handling is measured.  Included before the kernels; expanded inside
   fg_f_central_seg, where x, dy, y, n and fn are its arguments. */
#ifndef BOUND_F32_HOOK_H
#define BOUND_F32_HOOK_H
#define FG_F_SEG_HOOK(x, dy, y, n, fn) ({                                                                  \
    const int grad_ = fg_f_fns[fn].grad;                                                                   \
    fg_fm m_;                                                                                              \
    int seen_ = 0;                                                                                         \
    ptrdiff_t i_ = 0;                                                                                      \
    for (; i_ + FG_F_W <= (n); i_ += FG_F_W) {                                                             \
        FG_F_PREFETCH((const char*)((x) + i_) + FG_F_AHEAD);                                               \
        if (grad_)                                                                                         \
            FG_F_PREFETCH((const char*)((dy) + i_) + FG_F_AHEAD);                                          \
        FG_F_PREFETCHW((const char*)((y) + i_) + FG_F_AHEAD);                                              \
        fg_fv xv_ = FG_F_LOADU((x) + i_);                                                                  \
        FG_F_STOREU((y) + i_, fg_f_central_v(xv_, grad_ ? FG_F_LOADU((dy) + i_) : xv_, &m_, fn, 0, &seen_)); \
    }                                                                                                      \
    if (i_ < (n)) {                                                                                        \
        FG_F_TAILMASK(k_, (n) - i_);                                                                       \
        fg_fv xv_ = FG_F_MASKLOAD((x) + i_, k_);                                                           \
        FG_F_MASKSTORE((y) + i_, k_, fg_f_central_v(xv_, grad_ ? FG_F_MASKLOAD((dy) + i_, k_) : xv_, &m_,  \
                                                    fn, 0, &seen_));                                       \
    }                                                                                                      \
    1; })
#endif
