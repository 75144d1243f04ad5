#!/usr/bin/env python3
"""The threading policy's targets, each thread count in a fresh process, repeated (issues 38 and 62).

  python tools/threads_runs.py --runs 1            # on a quiet machine: one run per quiet slot
  python tools/threads_runs.py --runs 1 --trace t.jsonl   # and every process's rounds, for a losing run

Per run, the float32 exact forward, out of place, 256K and 4M elements of randn*sigma (sigma 1 and 3), Gelem/s
(median of ROUNDS timed rounds of 4M elements after two warm-up calls) in a fresh process each: 1 thread;
2 threads with the policy; 2 threads with both of the policy's caps off (`_backoff(adaptive=False)`: the
control, what the machine gives a team of two in the same minute); a 16-thread team (OMP_NUM_THREADS=16,
fastgelu's default count then). Then P = 2, 4, 8 spawned processes at once
(fastgelu.bench.contention.aggregate) at 1 thread each, at default threads, and with OMP_NUM_THREADS=8 in each.

Targets (issue 62): the policy >= 0.9x of the caps-off control at 2 threads, in every case; the 16-thread
team >= 0.85x of 2 threads with the policy; P x default and P x 8 >= 0.85x of P x 1 thread. 2 threads over
1 is printed, not judged: these VMs' own 2-thread speed moves in phases (the control shows it).

The processes of one comparison run back to back, in --groups groups (1 thread, the policy and its control
in turn first, 16 threads; then again; 3 groups for the process cases), and a run's figure is the median of
the groups' ratios: a shared VM's speed moves in phases of seconds to minutes, so processes minutes apart
compare two phases, not two thread counts. Each process times ~0.5-1 s and takes the median of its rounds,
so that one of the VM's short slow phases does not decide it. Each run also lists the processes where the
policy acted (timed calls that ran on one thread, late calls, load samples that capped the team) and those
timed while other processes used CPU time (/proc/stat: the machine was not quiet then); --trace keeps each
round's speed and policy state. The measurements behind these choices: docs/threads.md.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

CHILD = r"""
import os, sys, time, json
import numpy as np
import fastgelu

def cpu_seconds():
    # CPU time of the whole machine (all but idle and iowait), and of this process
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK"), time.process_time()
n, sigma, threads, rounds = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[5])
if threads:
    fastgelu.set_num_threads(threads)
k = fastgelu.ufuncs._kernels
k._backoff(adaptive=sys.argv[4] == "1")
x = (sigma * np.random.default_rng(0).standard_normal(n)).astype(np.float32)
out = np.empty_like(x)
g = fastgelu.ufuncs.gelu
reps = max(1, (1 << 22) // n)
for _ in range(2):
    g(x, out=out)
s0 = k._backoff()
rates, log = [], []
c0, w0 = cpu_seconds(), time.perf_counter()
for _ in range(rounds):
    t0 = time.perf_counter()
    for _ in range(reps):
        g(x, out=out)
    rates.append(n * reps / (time.perf_counter() - t0) / 1e9)
    s = k._backoff()
    # per round: Gelem/s; team calls, late calls, load samples that capped (since the warm-up); back-off cap,
    # load cap, and the machine's runnable threads at the last load sample, as the round ended
    log.append((round(rates[-1], 4), s["team_calls"] - s0["team_calls"], s["late_calls"] - s0["late_calls"],
                s["load_capped"] - s0["load_capped"], s["cap"], s["load_cap"], s["runnable"]))
c1 = cpu_seconds()
# CPUs that other processes kept busy meanwhile (the machine's CPU time less this process's, over the wall time)
others = max(0.0, (c1[0] - c0[0]) - (c1[1] - c0[1])) / (time.perf_counter() - w0)
print(json.dumps({"rate": sorted(rates)[len(rates) // 2], "calls": reps * rounds, "others": others, "log": log}))
"""
ROUNDS = 401    # timed rounds of 4M elements per process (--rounds)
ACTED = []      # (case, calls on one thread, late calls, capped samples) of each process where the policy acted
BUSY = []       # (case, CPUs other processes used) of each process during which the machine was not quiet
TRACE = []      # every process's rounds (--trace)
QUIET = 0.1     # CPUs other processes may use while a process is timed, for the machine to count as quiet


def child(n, sigma, threads, rounds, env=None, policy=True, case=""):
    e = dict(os.environ, **(env or {}))
    args = [str(n), str(sigma), str(threads), str(int(policy)), str(rounds)]
    r = subprocess.run([sys.executable, "-c", CHILD] + args, env=e, capture_output=True, text=True, check=True,
                       cwd="/")
    got = json.loads(r.stdout)
    team, late, capped = got["log"][-1][1:4]
    serial = got["calls"] - team if threads != 1 else 0
    if policy and (serial or late or capped):
        ACTED.append((case, serial, late, capped))
    if got["others"] >= QUIET:
        BUSY.append((case, round(got["others"], 2)))
    TRACE.append({"case": case, "rate": got["rate"], "others": got["others"], "log": got["log"]})
    return got["rate"]


def median(values):
    return float(np.median(values))


def aggregate(p, threads, env=None):
    """fastgelu.bench.contention.aggregate with `env` in its spawned processes' environment."""
    from fastgelu.bench import contention
    saved = {key: os.environ.get(key) for key in (env or {})}
    os.environ.update(env or {})
    try:
        return contention.aggregate(p, threads, seconds=1.0)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def one_run(groups, process_groups, rounds):
    """{case: figures} and whether every target was met."""
    res, ok = {}, True
    for n in (1 << 18, 1 << 22):
        for sigma in (1.0, 3.0):
            case, rows = f"{n >> 10}K s{sigma:g}", []
            for g in range(groups):
                one = child(n, sigma, 1, rounds, case=f"{case} 1")
                # the policy and its control next to each other, in turn first, so that a drift of the
                # machine within a group does not favour either
                for policy in ((True, False) if g % 2 == 0 else (False, True)):
                    if policy:
                        two = child(n, sigma, 2, rounds, case=f"{case} 2")
                    else:
                        off = child(n, sigma, 2, rounds, policy=False, case=f"{case} 2 caps off")
                team = child(n, sigma, 0, rounds, {"OMP_NUM_THREADS": "16"}, case=f"{case} 16")
                rows.append((one, two, off, team, two / one, off / one, two / off, team / two))
            one, two, off, team, r2, roff, rpol, r16 = (median(c) for c in zip(*rows))
            ok &= rpol >= 0.9 and r16 >= 0.85
            res[case] = dict(one=one, two=two, off=off, team=team, r2=r2, roff=roff, rpol=rpol, r16=r16,
                             rpol_groups=[r[6] for r in rows])
    for p in (2, 4, 8):
        rows = []
        for _ in range(process_groups):
            a1 = aggregate(p, 1)
            ad = aggregate(p, 0)
            a8 = aggregate(p, 0, {"OMP_NUM_THREADS": "8"})
            rows.append((a1, ad, a8, ad / a1, a8 / a1))
        a1, ad, a8, rd, r8 = (median(c) for c in zip(*rows))
        ok &= rd >= 0.85 and r8 >= 0.85
        res[f"P={p}"] = dict(one=a1, default=ad, eight=a8, rd=rd, r8=r8)
    return res, ok


def report(res):
    lines = []
    for key, v in res.items():
        if key.startswith("P="):
            lines.append(f"  {key} processes: x1 {v['one']:.3f} Gelem/s, x default {v['default']:.3f}, x 8 threads "
                         f"{v['eight']:.3f}; default/x1 {v['rd']:.2f}x, 8/x1 {v['r8']:.2f}x")
        else:
            groups = " ".join(f"{r:.2f}" for r in v["rpol_groups"])
            lines.append(f"  {key}: 1 thread {v['one']:.3f}, 2 {v['two']:.3f}, caps off {v['off']:.3f}, team of 16 "
                         f"{v['team']:.3f} Gelem/s; policy/caps off {v['rpol']:.2f}x (groups {groups}), "
                         f"2/1 {v['r2']:.2f}x, caps off 2/1 {v['roff']:.2f}x, 16/2 {v['r16']:.2f}x")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--groups", type=int, default=5, help="back-to-back process groups per thread comparison")
    ap.add_argument("--process-groups", type=int, default=3, help="groups per comparison of P processes")
    ap.add_argument("--rounds", type=int, default=ROUNDS, help="timed rounds of 4M elements per process")
    ap.add_argument("--trace", help="append every process's rounds to this file (JSON lines, one per run)")
    a = ap.parse_args()
    print("loadavg", open("/proc/loadavg").read().strip())
    passed = 0
    for k in range(a.runs):
        ACTED.clear()
        BUSY.clear()
        TRACE.clear()
        res, ok = one_run(a.groups, a.process_groups, a.rounds)
        passed += ok
        print(f"run {k + 1}: {'PASS' if ok else 'FAIL'}")
        print("\n".join(report(res)))
        print("  processes where the policy acted (case, timed calls on one thread of "
              f"{a.rounds * 16} at 256K / {a.rounds} at 4M, late calls, load samples that "
              f"capped): {ACTED or 'none'}")
        print(f"  processes timed while other processes used >= {QUIET} CPUs (case, CPUs): {BUSY or 'none'}")
        if a.trace:
            with open(a.trace, "a") as f:
                f.write(json.dumps({"run": k + 1, "results": res, "processes": TRACE}) + "\n")
        sys.stdout.flush()
    print(f"{passed} of {a.runs} runs met every target; loadavg", open("/proc/loadavg").read().strip())
    return 0 if passed == a.runs else 1


if __name__ == "__main__":
    sys.exit(main())
