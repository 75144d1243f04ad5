"""Shared-machine measurements: aggregate throughput of several processes calling at once, and a one-line
verdict on whether this machine is busy (for the bench report).

Processes are spawned, never forked: a child forked from a parent that ran an OpenMP region runs
serially (GNU libgomp's pool does not survive fork), which would hide exactly what is measured here.
"""
import multiprocessing as mp
import os
import time

N = 262144  # 256K float32: in cache, compute bound, ~0.3 ms per call on one thread


def _worker(impl, threads, n, seconds, barrier, results):
    import numpy as np
    x = np.random.default_rng(os.getpid()).standard_normal(n, dtype=np.float32)
    out = np.empty_like(x)
    if impl == "torch":
        import torch
        if threads:
            torch.set_num_threads(threads)
        t, o = torch.from_numpy(x), torch.from_numpy(out)

        def call():
            torch._C._nn.gelu(t, out=o)
    else:
        import fastgelu
        if threads:
            fastgelu.set_num_threads(threads)
        gelu = fastgelu.ufuncs.gelu

        def call():
            gelu(x, out=out)
    for _ in range(20):  # warm up: page in, start the team
        call()
    barrier.wait()
    calls, t0 = 0, time.perf_counter()
    end = t0 + seconds
    while True:
        call()
        calls += 1
        if calls & 7 == 0 and time.perf_counter() >= end:
            break
    results.put(calls * n / (time.perf_counter() - t0))


def aggregate(processes, threads=0, impl="fastgelu", n=N, seconds=1.0):
    """Sum of the Gelem/s of `processes` spawned processes each calling GELU on n float32 in a loop at the
    same time; threads=0 leaves each process its default thread count."""
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(impl, threads, n, seconds, barrier, results))
             for _ in range(processes)]
    for p in procs:
        p.start()
    try:
        rates = [results.get(timeout=120 + 4 * seconds) for _ in procs]
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()
    return sum(rates) / 1e9


def table(counts=(1, 2, 4), impls=("fastgelu", "torch"), seconds=1.0):
    """{(impl, processes, threads): Gelem/s} for 1 thread each and the default thread count."""
    res = {}
    for impl in impls:
        for p in counts:
            for t in ((1,) if p == 1 else (1, 0)):
                res[impl, p, t] = aggregate(p, t, impl, seconds=seconds)
    return res


def busy_verdict(t1=None, t2=None):
    """One line saying why speed figures from this machine would mislead, or None when it looks quiet:
    other processes use the CPUs (load average), or 2 threads run slower than 1 (t1, t2: seconds per
    call measured by the caller, 1 thread and 2)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    # the bench itself keeps about one CPU busy; more than that is someone else's
    other = load - 1.0
    why = []
    if other > 0.5:
        why.append(f"load average {load:.1f} on {cpus} CPUs")
    if t1 is not None and t2 is not None and t2 > t1:
        why.append(f"2 threads ran {t2 / t1:.1f}x slower than 1")
    if not why:
        return None
    return ("BUSY machine (" + "; ".join(why) + "): other processes compete for the cores, so these figures "
            "are not fastgelu's speed. Re-run when it is quiet; worker processes sharing cores should call "
            "fastgelu.set_num_threads(1) (or set OMP_NUM_THREADS=1).")
