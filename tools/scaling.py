#!/usr/bin/env python3
"""Threads and processes on this machine: the figures behind docs/threads.md.

  python tools/scaling.py                                   # 4M float32, sigma 1 and 3, 1..all threads
  python tools/scaling.py --sizes 262144,4194304,67108864 --fixed --torch --json out.json
  python tools/scaling.py --sizes 0 --processes 4,8,16      # only P processes x default vs x 1 thread

Quiet scaling: float32 exact forward, Gelem/s per thread count, fastgelu beside PyTorch (--torch) and beside
itself with the policy's caps switched off (--fixed: the cost of the policy), interleaved rounds, medians.
Processes: P spawned processes calling GELU on 256K float32 in a loop at once, aggregate Gelem/s with the
default thread count over the same P processes at one thread each (fastgelu.bench.contention.aggregate).
Run it on a quiet machine; `uptime` first.
"""
import argparse
import json
import os
import platform
import sys
import time


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="4194304", help="comma-separated element counts (0: none)")
    p.add_argument("--sigmas", default="1,3")
    p.add_argument("--counts", default="", help="thread counts (default 1, 2, 4, ... up to the CPUs)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--torch", action="store_true", help="PyTorch beside fastgelu (same threads)")
    p.add_argument("--fixed", action="store_true", help="fastgelu with the policy's caps off beside it")
    p.add_argument("--processes", default="", help="process counts for the aggregate test, e.g. 4,8,16")
    p.add_argument("--seconds", type=float, default=2.0, help="per aggregate figure")
    p.add_argument("--json", help="write all figures here")
    a = p.parse_args()

    import fastgelu
    from fastgelu.bench import contention, scaling, speed
    torch = None
    if a.torch:
        import torch
    cfg = fastgelu.get_config()
    out = {"cpu": speed.cpu_name(), "cpus": os.cpu_count(), "affinity": contention.affinity(),
           "isa": cfg["isa"], "python": platform.python_version(), "torch": getattr(torch, "__version__", None),
           "loadavg": open("/proc/loadavg").read().strip() if os.path.exists("/proc/loadavg") else None,
           "date": time.strftime("%Y-%m-%d"), "scaling": [], "processes": []}
    print(f"fastgelu {fastgelu.__version__} ({cfg['isa']}) on {out['cpu']}, {out['affinity']} CPUs; "
          f"loadavg {out['loadavg']}", flush=True)
    counts = [int(c) for c in a.counts.split(",") if c] or None
    for n in [int(s) for s in a.sizes.split(",") if int(s)]:
        for sigma in [float(s) for s in a.sigmas.split(",")]:
            k = fastgelu.ufuncs._kernels
            k._backoff(reset=True)
            rates = scaling.measure(n, sigma, counts, torch=torch, rounds=a.rounds,
                                     adaptive=None if a.fixed else True)
            state = k._backoff()
            print(f"\n{n:,} float32, randn*{sigma:g}:")
            print("\n".join(scaling.table(rates)))
            print(f"policy: {state['late_calls']} late of {state['team_calls']} team calls, "
                  f"{state.get('load_capped', '-')} of {state.get('samples', '-')} load samples capped; "
                  + scaling.reading(rates, state), flush=True)
            out["scaling"].append({"n": n, "sigma": sigma, "rates": {i: {str(t): v for t, v in r.items()}
                                                                     for i, r in rates.items()},
                                   "late_calls": state["late_calls"], "team_calls": state["team_calls"],
                                   "samples": state.get("samples"), "load_capped": state.get("load_capped")})
    for procs in [int(s) for s in a.processes.split(",") if s]:
        one = contention.aggregate(procs, 1, seconds=a.seconds)
        many = contention.aggregate(procs, 0, seconds=a.seconds)
        threads = sorted(contention.last_threads)
        print(f"\n{procs} processes, 256K float32: x 1 thread {one:.2f} Gelem/s, x default {many:.2f}: "
              f"{many / one:.2f}x (threads a call would use at the end, per process: {threads})", flush=True)
        out["processes"].append({"processes": procs, "one": one, "default": many, "threads": threads})
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
