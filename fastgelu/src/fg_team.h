#ifndef FG_TEAM_H
#define FG_TEAM_H
#include <time.h>
#ifdef __linux__
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#endif
static inline long long fg_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Runnable threads on the machine now, from an open /proc/loadavg ("0.52 0.58 0.59 3/1018 4242": the
   3); -1 where there is none. pread at offset 0 makes the kernel write the line afresh. */
static int fg_loadavg_fd = -1;
static inline int fg_loadavg_fd_open(void) { return fg_loadavg_fd >= 0; }
static int fg_runnable(void) {
#ifdef __linux__
    char buf[128];
    int fd = fg_loadavg_fd, field = 0, v = -1;
    if (fd < 0) return -1;
    ssize_t len = pread(fd, buf, sizeof buf - 1, 0);
    if (len <= 0) return -1;
    for (ssize_t i = 0; i < len; i++) {
        if (buf[i] == ' ') { field++; continue; }
        if (field == 3) {
            if (buf[i] < '0' || buf[i] > '9') break;
            v = (v < 0 ? 0 : v * 10) + (buf[i] - '0');
        } else if (field > 3) break;
    }
    return v;
#else
    return -1;
#endif
}
/* Point the sampler at a file (a test's fake loadavg), or at nothing (path NULL); 1 when open. */
static int fg_load_source(const char* path) {
#ifdef __linux__
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1, old = fg_loadavg_fd;
    fg_loadavg_fd = fd;
    if (old >= 0) close(old);
    return fd >= 0;
#else
    (void)path; return 0;
#endif
}
/* CPUs in the calling thread's affinity mask, and online in the machine (0 where unknown). */
static int fg_cpus_usable(void) {
#if defined(__linux__) && defined(CPU_COUNT)
    cpu_set_t s;
    if (sched_getaffinity(0, sizeof s, &s) == 0) return CPU_COUNT(&s);
#endif
    return 0;
}
static int fg_cpus_online(void) {
#ifdef _SC_NPROCESSORS_ONLN
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 0;
#else
    return 0;
#endif
}

/* One parallel call's clock: the start, when each of the first FG_TEAM_MAX pieces started and ended,
   and (when `sample` was set) the machine's runnable threads read at the start of piece 0, while the
   whole team is runnable. Each thread writes only its own slots; the calling thread reads them after
   the closing barrier. */
#define FG_TEAM_MAX 256
typedef struct {
    long long t0; int nt; int want; int sample; int runnable;
    long long start[FG_TEAM_MAX]; long long end[FG_TEAM_MAX];
} fg_team;
static inline void fg_team_begin(fg_team* t, int nt) {   /* keeps `sample` and `want` */
    t->nt = nt < FG_TEAM_MAX ? nt : FG_TEAM_MAX;
    for (int i = 0; i < t->nt; i++) t->start[i] = t->end[i] = 0;
    t->runnable = -1;
    t->t0 = fg_now_ns();
}
static inline void fg_team_start(fg_team* t, long long k) {
    if (k < FG_TEAM_MAX) t->start[k] = fg_now_ns();
    if (k == 0 && t->sample) t->runnable = fg_runnable();
}
static inline void fg_team_done(fg_team* t, long long k) {
    if (k < FG_TEAM_MAX) t->end[k] = fg_now_ns();
}
#endif
