# The threading policy's Python side (_threads_policy.pxi decides; these set its inputs and read its state):
# the thread and budget caps fastgelu._threads sets, the load source, the host library's pool, the state and
# test hooks of _backoff, and what the module forgets after its own import-time calls and after fork.
# Included after _threads_policy.pxi, whose module state they read and write.


def _set_threads(int n):
    """Thread cap for every thread's calls into this kernel module (0 = follow OpenMP); see
    fastgelu.set_num_threads. Other threads' OpenMP limits are left alone (threads_wanted); the calling
    thread's own, if someone lowered it (torch.set_num_threads, threadpoolctl), goes back to the default:
    for that thread the later choice wins, as omp_set_num_threads would have it."""
    global _user_threads
    _user_threads = n
    if n > 0 and omp_get_max_threads() != _omp_default:
        omp_set_num_threads(_omp_default)


def _set_budget(int n):
    """The process's CPU budget (0 = none); fastgelu._threads works it out at import."""
    global _budget_threads
    _budget_threads = n if n > 0 else 0


def _parallel_min(n=None):
    """Tuning hook: the element count from which calls use threads (set it when n is given)."""
    global PARALLEL_MIN
    if n is not None:
        PARALLEL_MIN = max(2, int(n))
    return PARALLEL_MIN


def _max_threads():
    """Threads a large call would use now, from the calling thread."""
    return threads_allowed(PARALLEL_MIN * 1024)


def _load_source(path="/proc/loadavg"):
    """Where load samples come from: a loadavg-format file (tests pass a fake one), or None for no samples.
    Returns whether it could be opened."""
    if path is None:
        return bool(fg_load_source(NULL))
    cdef bytes p = _os.fsencode(path)
    return bool(fg_load_source(p))


def _host_pool(int nt):
    """A call from a host library whose own pool of nt threads (the caller's included) may be spinning now:
    its nt - 1 workers are not other load for the next SPIN_NS (fastgelu.torch passes PyTorch's intra-op
    thread count before each kernel call)."""
    global _host_nt, _host_until
    _host_nt = nt - 1 if nt > 1 else 0
    _host_until = fg_now_ns() + SPIN_NS


def _backoff(adaptive=None, late=None, load=None, cpus=None, reset=False):
    """State of the policy, and test hooks that drive it as the loops do. adaptive: switch both caps on/off;
    late=(t0, starts, ends, nt): report a parallel call's clock (fg_now_ns values; 0 = an empty piece);
    load=(runnable, used, want): report a load sample taken while `used` threads of a call that wanted
    `want` were runnable; cpus=(usable, online): the CPU counts the samples are judged against ((0, 0): ask
    the system); reset: forget both caps and the counters. The state's "trace" holds the last 32 load
    samples (runnable, used, usable, load cap after), its "calls" the last 32 team calls (lateness beyond
    the noise, mean piece, the account after, in us; back-off cap after; 1 if judged), "loss_us" the
    account."""
    global _adaptive, _backoff_cap, _backoff_until, _backoff_ns, _late_calls, _team_calls, _loss, _last_late
    global _late_run, _reported, _load_cap, _cpus_usable, _cpus_online, _next_sample, _samples, _load_capped
    global _last_runnable, _last_usable, _last_online, _busy, _calm, _pool_nt, _pool_until
    global _host_nt, _host_until
    cdef fg_team t
    if adaptive is not None:
        _adaptive = bool(adaptive)
        if not _adaptive:
            _load_cap = _backoff_cap = 0
    if cpus is not None:
        _cpus_usable, _cpus_online = int(cpus[0]), int(cpus[1])
    if reset:
        _backoff_cap = _late_run = _load_cap = 0
        _backoff_until = _backoff_ns = _late_calls = _team_calls = _last_late = _next_sample = _loss = _reported = 0
        _samples = _load_capped = _last_usable = _last_online = _busy = _calm = 0
        _pool_nt = _pool_until = _host_nt = _host_until = 0
        _last_runnable = -1
    if load is not None:
        load_report(int(load[0]), int(load[1]), int(load[2]))
    if late is not None:
        t0, starts, ends, nt = late
        t.sample = 0
        t.want = nt
        fg_team_begin(&t, nt)
        t.t0 = t0
        for i in range(min(t.nt, len(ends))):
            t.start[i] = starts[i]
            t.end[i] = ends[i]
        team_report(&t)
    now = fg_now_ns()
    return {"adaptive": bool(_adaptive), "cap": _backoff_cap if now < _backoff_until else 0,
            "remaining_s": max(0, _backoff_until - now) / 1e9 if _backoff_cap else 0.0,
            "late_calls": _late_calls, "team_calls": _team_calls, "now_ns": now, "loss_us": _loss / 1e3,
            "calls": [tuple(_calls[i % 32][j] for j in range(5)) for i in range(max(0, _reported - 32), _reported)],
            "load_cap": _load_cap, "samples": _samples, "load_capped": _load_capped,
            "runnable": _last_runnable, "usable": _last_usable, "online": _last_online,
            "sampling": bool(fg_loadavg_fd_open()),
            "trace": [tuple(_trace[i % 32][j] for j in range(4)) for i in range(max(0, _samples - 32), _samples)],
            "user": _user_threads, "budget": _budget_threads, "openmp": omp_get_max_threads(),
            "openmp_default": _omp_default,
            "forked": bool(_forked_child), "host": _host_nt if now < _host_until else 0}


def _after_import_calls():
    """The module's own calls at import (the 16-bit tables: a few calls with Python work between them, each
    waking workers that fell asleep, while numpy's import may leave threads spinning) taught the policy
    nothing about the caller's calls: forget them, and let the caller's first team call wake the team."""
    global _judged_nt
    _backoff(reset=True)
    _judged_nt = 0


def _after_fork_in_child():
    global _forked_child
    _forked_child = True


import os as _os
_os.register_at_fork(after_in_child=_after_fork_in_child)
_omp_default = omp_get_max_threads()
OPENMP = bool(FG_OPENMP)

from fastgelu import _threads as _threads_mod
_set_budget(_threads_mod.default_budget()[0])
_load_source()
