"""`fastgelu bench --instructions`: instructions per element of every kernel, counted by Valgrind's callgrind,
compared with a baseline file (benches/instructions.json in a checkout).

Counts do not move with the machine's load, so a 1% change is a real change in the code that runs. Only the
kernel calls are counted: callgrind starts with collection off (--collect-atstart=no), collects only while
NumPy runs a ufunc inner loop (--toggle-collect) and writes one dump as each loop returns (--dump-after);
the measuring process checks that each call made exactly one. Import-time work (the generic module's table
set-up) and Python's own work are not counted, except for the fused-bias lines (through_ufunc). Each line is
called twice and its second call counted (a first call may set things up once).
One thread (set_num_threads(1), OMP_NUM_THREADS=1), fixed seeds, fixed hash seed: two runs give the same counts,
but for a few dozen instructions of Python's work in the fused-bias lines (docs/performance.md).

Valgrind's CPU has no AVX-512, so the AVX2 and the baseline (generic) builds are counted, each forced with
FASTGELU_ISA in its own process; the AVX-512 kernels are guarded by the ratio mode of benches/.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ELEMENTS = 1 << 18
ISAS = ("avx2", "generic")
TOLERANCE = 0.01
BASELINE = os.path.join("benches", "instructions.json")
# NumPy's caller of a legacy ufunc inner loop: entered by a call, left by a return, with an exact name in NumPy's
# wheels. (fastgelu's own loop entries tail-jump into the loop driver, and Cython enters a def function by a
# jump: callgrind sees no return from those, so it can neither toggle nor dump there.)
TOGGLE = "generic_wrapped_legacy_loop"


def workloads():
    """(line name, zero-argument call) of every kernel measured, inputs fixed by seed."""
    import fastgelu
    from fastgelu import _api, _api_gated, ufuncs

    def randn(sigma, dtype, seed):
        x = np.random.default_rng(seed).standard_normal(ELEMENTS, dtype=np.float32) * np.float32(sigma)
        return x.astype(dtype)

    out = []
    f32 = np.float32
    for variant in ("none", "tanh", "sigmoid"):
        fwd, grad = _api.VARIANTS[variant]
        for sigma in (1, 3):
            x, dy, o = randn(sigma, f32, 1), randn(1, f32, 2), np.empty(ELEMENTS, f32)
            out.append((f"float32 {variant} fwd sigma={sigma}", lambda f=fwd, x=x, o=o: f(x, out=o)))
            out.append((f"float32 {variant} grad sigma={sigma}", lambda f=grad, x=x, dy=dy, o=o: f(x, dy, out=o)))
    for variant in ("none", "tanh", "sigmoid"):
        fwd, grad = _api_gated.GATED[variant]
        for sigma in ((1, 3) if variant != "sigmoid" else (1,)):
            g, u, dy = randn(sigma, f32, 1), randn(1, f32, 2), randn(1, f32, 3)
            o1, o2 = np.empty_like(g), np.empty_like(g)
            out.append((f"float32 {variant} gelu_mul sigma={sigma}", lambda f=fwd, g=g, u=u, o=o1: f(g, u, out=o)))
            out.append((f"float32 {variant} gelu_mul_grad sigma={sigma}",
                        lambda f=grad, g=g, u=u, dy=dy, o=(o1, o2): f(g, u, dy, out=o)))
    xb, dyb = randn(1, f32, 1).reshape(-1, 1024), randn(1, f32, 2).reshape(-1, 1024)
    b, ob = randn(1, f32, 4)[:1024].copy(), np.empty_like(xb)
    out.append(("float32 none fwd bias sigma=1", through_ufunc(lambda: fastgelu.gelu(xb, bias=b, out=ob))))
    out.append(("float32 none grad bias sigma=1",
                through_ufunc(lambda: fastgelu.gelu_grad(xb, dyb, bias=b, out=ob))))
    halves = [np.float64, np.float16] + ([ufuncs.BFLOAT16] if ufuncs.BFLOAT16 is not None else [])
    for dtype in halves:
        name = np.dtype(dtype).name
        x, dy, o = randn(1, dtype, 1), randn(1, dtype, 2), np.empty(ELEMENTS, dtype)
        for variant in (("none", "tanh", "sigmoid") if dtype == np.float64 else ("none",)):
            fwd, grad = _api.VARIANTS[variant]
            out.append((f"{name} {variant} fwd sigma=1", lambda f=fwd, x=x, o=o: f(x, out=o)))
            out.append((f"{name} {variant} grad sigma=1", lambda f=grad, x=x, dy=dy, o=o: f(x, dy, out=o)))
    return out


def through_ufunc(call):
    """The fused-bias call is no ufunc: run it from an object ufunc's loop so callgrind sees it inside TOGGLE.
    Its count then also holds fastgelu.gelu's Python argument checks, a fixed cost per call."""
    one = np.empty(1, dtype=object)
    wrap = np.frompyfunc(lambda _: call(), 1, 1)
    return lambda: wrap(one)


def child(out_file, names_file):
    """Runs under callgrind: every workload twice; writes {line name: number of the dump of its second call}."""
    import glob

    import fastgelu
    fastgelu.set_num_threads(1)

    def dumps():  # callgrind numbers its dumps out_file.1, .2, ... and writes each as the call returns
        return len(glob.glob(glob.escape(out_file) + ".*"))
    which = {}
    for name, call in workloads():
        call()
        before = dumps()
        call()
        which[name] = dumps()
        if which[name] != before + 1:
            raise RuntimeError(f"{name}: {which[name] - before} kernel entries counted in one call, expected 1")
    with open(names_file, "w") as f:
        json.dump(which, f)


def _totals(path):
    with open(path) as f:
        for line in f:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    return 0


def count(isa, workdir):
    """{line name: instructions of one call of ELEMENTS elements} for one ISA build, from one process under
    callgrind."""
    import fastgelu
    out_file = os.path.join(workdir, f"cg.{isa}")
    names_file = os.path.join(workdir, f"names.{isa}.json")
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(fastgelu.__file__)))
    env = dict(os.environ, FASTGELU_ISA=isa, OMP_NUM_THREADS="1", PYTHONHASHSEED="0",
               PYTHONPATH=os.pathsep.join([pkg_root] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--callgrind-out-file={out_file}"]
    cmd += [f"--toggle-collect={TOGGLE}", f"--dump-after={TOGGLE}"]
    cmd += [sys.executable, "-c",
            f"from fastgelu.bench import instructions; instructions.child({out_file!r}, {names_file!r})"]
    run = subprocess.run(cmd, env=env, cwd=workdir, capture_output=True, text=True)
    if run.returncode != 0 or not os.path.exists(names_file):
        raise RuntimeError(f"callgrind run for the {isa} build failed (exit {run.returncode}):\n{run.stderr[-3000:]}")
    with open(names_file) as f:
        which = json.load(f)
    counts = {}
    for name, dump in which.items():
        ir = _totals(f"{out_file}.{dump}")
        if ir == 0:
            raise RuntimeError(f"callgrind counted nothing for {name} ({isa}): {TOGGLE} was not entered")
        counts[f"{isa} {name}"] = ir
    return counts


def measure(isas):
    """{line: instructions of one call} for the given ISA builds, one callgrind process per build in parallel."""
    from concurrent.futures import ThreadPoolExecutor
    with tempfile.TemporaryDirectory(prefix="fastgelu-callgrind-") as workdir:
        with ThreadPoolExecutor(len(isas)) as pool:
            parts = list(pool.map(lambda isa: count(isa, workdir), isas))
    return {k: v for part in parts for k, v in part.items()}


def compare(baseline, counts, tolerance=TOLERANCE):
    """Lines (name, old, new, change, verdict); verdict "CHANGED" beyond tolerance, "NEW" when the baseline lacks
    the line (both fail), "ok", or "not measured" for a baseline line this machine cannot count."""
    rows = []
    for name in sorted(set(baseline) | set(counts)):
        old, new = baseline.get(name), counts.get(name)
        if new is None:
            rows.append((name, old, None, None, "not measured"))
        elif old is None:
            rows.append((name, None, new, None, "NEW"))
        else:
            change = new / old - 1
            rows.append((name, old, new, change, "CHANGED" if abs(change) > tolerance else "ok"))
    return rows


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


def valgrind_version():
    return subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()


def run(baseline_path=BASELINE, update=False):
    """The command: count, print one line per kernel, compare with (or rewrite) the baseline; exit status."""
    from .. import _dispatch
    if shutil.which("valgrind") is None:
        print("fastgelu bench --instructions needs Valgrind (callgrind), which is not installed: "
              "apt-get install valgrind (Debian/Ubuntu), dnf install valgrind (Fedora)", file=sys.stderr)
        return 2
    isas = [isa for isa in ISAS if isa in _dispatch.available()]
    if not isas:
        print(f"none of the builds counted ({', '.join(ISAS)}) runs on this CPU", file=sys.stderr)
        return 2
    counts = measure(isas)
    print(f"Instructions per element ({ELEMENTS:,} elements, 1 thread, callgrind, {valgrind_version()}), "
          f"builds: {', '.join(isas)}")
    if update:
        with open(baseline_path, "w") as f:
            json.dump({"elements": ELEMENTS, "valgrind": valgrind_version(),
                       "instructions_per_call": dict(sorted(counts.items()))}, f, indent=1)
            f.write("\n")
        for name, v in sorted(counts.items()):
            print(f"  {name:<48} {v / ELEMENTS:9.3f}")
        print(f"baseline written: {baseline_path}")
        return 0
    if not os.path.exists(baseline_path):
        for name, v in sorted(counts.items()):
            print(f"  {name:<48} {v / ELEMENTS:9.3f}")
        print(f"no baseline at {baseline_path} (run from a checkout, or pass --baseline); nothing compared")
        return 0
    with open(baseline_path) as f:
        saved = json.load(f)
    if saved.get("elements") != ELEMENTS:
        print(f"{baseline_path} counted {saved.get('elements')} elements, this version {ELEMENTS}: "
              "rewrite it with --update-baseline", file=sys.stderr)
        return 1
    base = saved["instructions_per_call"]
    rows = compare(base, counts)
    print(f"  {'':<48} {'baseline':>9} {'now':>9} {'change':>8}")
    for name, old, new, change, verdict in rows:
        per = [None if v is None else v / ELEMENTS for v in (old, new)]
        print(f"  {name:<48} {_fmt(per[0], '9.3f'):>9} {_fmt(per[1], '9.3f'):>9} {_fmt(change, '+8.2%'):>8}  "
              f"{verdict}")
    same = sum(base.get(k) == v for k, v in counts.items())
    print(f"{same} of {len(counts)} lines count exactly the baseline's instructions")
    bad = [r for r in rows if r[4] in ("CHANGED", "NEW")]
    if bad:
        print(f"{len(bad)} line(s) differ from {baseline_path} by more than {TOLERANCE:.0%} or are missing from it. "
              "A kernel change updates the baseline in the same commit (`fastgelu bench --instructions "
              "--update-baseline`) and its message says why.")
        return 1
    print(f"all {len(rows)} lines within {TOLERANCE:.0%} of {baseline_path}")
    return 0
