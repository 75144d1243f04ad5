"""Thread control: OMP/threadpoolctl/set_num_threads, and results independent of the thread count."""
import os
import subprocess
import sys

import numpy as np
import pytest

import fastgelu
from fastgelu._reference import NAMES


@pytest.fixture
def restore_threads():
    before = fastgelu.get_num_threads()
    yield
    fastgelu.set_num_threads(before)


def test_results_do_not_depend_on_thread_count(uf, rng, restore_threads):
    x = (rng.standard_normal(1_000_003) * 4).astype(np.float32)
    dy = rng.standard_normal(x.size).astype(np.float32)
    for name in NAMES:
        args = (x, dy) if name.endswith("_grad") else (x,)
        fastgelu.set_num_threads(1)
        one = uf[name](*args)
        fastgelu.set_num_threads(2)
        two = uf[name](*args)
        assert np.array_equal(one, two), name


def test_set_get_num_threads(restore_threads):
    fastgelu.set_num_threads(1)
    assert fastgelu.get_num_threads() == 1
    assert fastgelu.get_config()["num_threads"] == 1
    with pytest.raises(ValueError, match="n must be >= 1"):
        fastgelu.set_num_threads(0)
    with pytest.raises(TypeError):
        fastgelu.set_num_threads(1.5)


def test_threadpoolctl_sees_and_limits_openmp():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    if not fastgelu.get_config()["openmp"]:
        pytest.skip("built without OpenMP")
    info = threadpoolctl.threadpool_info()
    assert any(p["user_api"] == "openmp" for p in info), info
    with threadpoolctl.threadpool_limits(1):
        assert fastgelu.get_num_threads() == 1
    with threadpoolctl.threadpool_limits(1, user_api="openmp"):
        assert fastgelu.get_num_threads() == 1


def test_omp_num_threads_is_followed():
    if not fastgelu.get_config()["openmp"]:
        pytest.skip("built without OpenMP")
    code = "import fastgelu; print(fastgelu.get_num_threads())"
    out = subprocess.run([sys.executable, "-c", code], env={"OMP_NUM_THREADS": "1", "PATH": ""},
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "1"


def test_config_keys():
    cfg = fastgelu.get_config()
    assert {"isa", "isa_available", "openmp", "num_threads", "version"} <= set(cfg)
    assert cfg["isa"] in cfg["isa_available"]
    assert cfg["version"] == fastgelu.__version__


# ---- back-off under oversubscription (the policy in _loops.pxi) -------------------------------------------

@pytest.fixture
def kernels():
    k = fastgelu.ufuncs._kernels
    if not fastgelu.get_config()["openmp"]:
        pytest.skip("built without OpenMP")
    before = fastgelu.get_num_threads()
    k._backoff(adaptive=True, reset=True)
    fastgelu.set_num_threads(2)  # a team of 2 even on a 1-CPU machine
    on_time(k)                   # its first call (not judged: see test_first_call_of_a_team_size...)
    yield k
    k._backoff(adaptive=True, reset=True)
    fastgelu.set_num_threads(before)


def late(k, nt=2, piece_us=300, lag_us=5000):
    """Report a parallel call whose last piece ended lag_us after the first."""
    t0 = k._backoff()["now_ns"] - (piece_us + lag_us) * 1000
    ends = [t0 + piece_us * 1000] * (nt - 1) + [t0 + (piece_us + lag_us) * 1000]
    return k._backoff(late=(t0, ends, nt))


def on_time(k, nt=2, piece_us=300):
    t0 = k._backoff()["now_ns"] - piece_us * 1000
    return k._backoff(late=(t0, [t0 + piece_us * 1000 + 1000 * i for i in range(nt)], nt))


def test_two_late_calls_back_off_to_one_thread(kernels):
    assert late(kernels)["cap"] == 0          # one late call on a quiet machine is noise
    assert on_time(kernels)["cap"] == 0       # and an on-time call in between forgets it
    assert late(kernels)["cap"] == 0
    state = late(kernels)
    assert state["cap"] == 1 and 0.05 < state["remaining_s"] <= 0.1
    assert fastgelu.get_num_threads() == 1
    assert fastgelu.get_config()["threads_from"].startswith("1: backing off")
    kernels._backoff(reset=True)
    assert fastgelu.get_num_threads() == 2


def test_backoff_expires_then_doubles_while_late(kernels):
    late(kernels)
    late(kernels)
    assert fastgelu.get_num_threads() == 1
    import time
    time.sleep(0.12)                           # the first back-off lasts 100 ms
    assert fastgelu.get_num_threads() == 2     # the next call is a probe with the whole team
    state = late(kernels)                      # the probe ran late: back off at once, twice as long
    assert state["cap"] == 1 and 0.1 < state["remaining_s"] <= 0.2
    time.sleep(0.21)
    assert on_time(kernels)["cap"] == 0        # the probe ran on time: the whole team again
    assert fastgelu.get_num_threads() == 2


def test_first_call_of_a_team_size_is_not_judged(kernels):
    late(kernels, nt=3)                        # a new team size: its threads were just started
    assert late(kernels, nt=3)["cap"] == 0     # so this is the first strike, not the second
    assert late(kernels, nt=3)["cap"] == 1


def test_backoff_memory_fades_after_calls_on_time(kernels):
    late(kernels)
    late(kernels)                              # backed off: a lone late call now backs off again at once
    import time
    time.sleep(0.12)
    for _ in range(31):
        on_time(kernels)
    assert late(kernels)["cap"] == 1           # 31 calls on time since: still a recently busy machine
    time.sleep(0.21)
    for _ in range(32):
        on_time(kernels)                       # 32 on time: the machine is quiet again
    assert late(kernels)["cap"] == 0           # a lone late call is noise once more
    assert late(kernels)["cap"] == 1


def test_backoff_halves_a_larger_team(kernels):
    on_time(kernels, nt=4)                     # the first call of a team of 4 (not judged)
    late(kernels, nt=4)
    assert late(kernels, nt=4)["cap"] == 2
    late(kernels, nt=2)                        # the team of 2 it now runs: first call not judged
    assert late(kernels, nt=2)["cap"] == 1


def test_small_lag_is_not_late(kernels):
    for _ in range(5):  # 40 us behind a 300 us piece, or 100 us behind a 400 us one: a team still pays
        assert late(kernels, piece_us=300, lag_us=40)["cap"] == 0
        assert late(kernels, piece_us=400, lag_us=100)["cap"] == 0
    assert kernels._backoff()["late_calls"] == 0


def test_adaptive_off_never_backs_off(kernels):
    kernels._backoff(adaptive=False)
    for _ in range(5):
        assert late(kernels)["cap"] == 0
    assert fastgelu.get_num_threads() == 2


def test_parallel_calls_report_their_timing(kernels):
    kernels._backoff(adaptive=False)  # every call with the whole team, even on a busy machine
    x = np.linspace(-5, 5, 1 << 20, dtype=np.float32)
    before = kernels._backoff()["team_calls"]
    fastgelu.gelu(x)
    fastgelu.gelu_grad(x, x)
    fastgelu.gelu(x.reshape(1024, 1024), bias=np.ones(1024, np.float32))
    assert kernels._backoff()["team_calls"] == before + 3


BACKOFF_ON_ONE_CPU = """
import os, numpy as np
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
import fastgelu
k = fastgelu.ufuncs._kernels
fastgelu.set_num_threads(2)          # two threads on one CPU: every team call waits for the scheduler
x = np.random.default_rng(0).standard_normal(1 << 20, dtype=np.float32)
ref = fastgelu.gelu(x[:1000].copy())
for _ in range(40):
    y = fastgelu.gelu(x)
s = k._backoff()
print(s["late_calls"], s["team_calls"], fastgelu.get_num_threads(), np.array_equal(y[:1000], ref))
"""


def test_oversubscribed_process_backs_off():
    """A real oversubscription: a team of 2 pinned to one CPU runs late and backs off to 1 thread."""
    if not fastgelu.get_config()["openmp"]:
        pytest.skip("built without OpenMP")
    out = subprocess.run([sys.executable, "-c", BACKOFF_ON_ONE_CPU], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    late_calls, team_calls, nt, same = int(out[0]), int(out[1]), int(out[2]), out[3]
    assert late_calls >= 2 and nt == 1, out
    assert team_calls < 20, out   # the rest of the 40 calls ran on one thread
    assert same == "True"


def test_forked_child_runs_serially():
    import multiprocessing as mp
    if not hasattr(os, "fork") or not fastgelu.get_config()["openmp"]:
        pytest.skip("no fork or no OpenMP")
    fastgelu.gelu(np.ones(1 << 20, np.float32))  # the parent has run a parallel region
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_threads, args=(q,))
    p.start()
    got = q.get(timeout=60)
    p.join(timeout=60)
    assert got[0] == 1 and got[1].startswith("1: forked child")


def _child_threads(q):
    fastgelu.gelu(np.ones(1 << 20, np.float32))
    q.put((fastgelu.get_num_threads(), fastgelu.get_config()["threads_from"]))


# ---- two OpenMP runtimes in one process ----------------------------------------------------------------

def _maps_with(word):
    with open("/proc/self/maps") as f:
        return sorted({line.split()[-1] for line in f if word in line})


def _fastgelu_openmp():
    """The OpenMP runtime files fastgelu alone loads (a subprocess: this one may hold others)."""
    code = ("import fastgelu, numpy as np; fastgelu.gelu(np.ones(1 << 20, np.float32))\n"
            "print(*sorted({l.split()[-1] for l in open('/proc/self/maps') if 'gomp' in l or 'libomp' in l}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    return out.stdout.split()


@pytest.mark.parametrize("order", ["import torch, fastgelu", "import fastgelu, torch"])
def test_torch_openmp_runtimes(order):
    """A gcc source build links the system's libgomp.so.1, the soname PyTorch's CPU wheel bundles too:
    whichever is imported first loads it and the other binds to it (one runtime, one pool per thread). A
    wheel carries its own libgomp under a hashed soname (auditwheel), and a clang build LLVM's libomp, so
    PyTorch's loads beside it: two runtimes, which must leave the values unchanged while the two alternate
    (their speed: docs/threads.md)."""
    pytest.importorskip("torch")
    if not sys.platform.startswith("linux") or not fastgelu.get_config()["openmp"]:
        pytest.skip("Linux + OpenMP only")
    code = (f"{order}\nimport numpy as np\n"
            "x = np.random.default_rng(0).standard_normal(1 << 20, dtype=np.float32)\n"
            "fastgelu.set_num_threads(1); ref = fastgelu.gelu(x); fastgelu.set_num_threads(2)\n"
            "same = True\n"
            "for _ in range(20):\n"
            "    torch.nn.functional.gelu(torch.ones(1 << 20))\n"
            "    same &= bool(np.array_equal(fastgelu.gelu(x), ref))\n"
            "print(len({l.split()[-1] for l in open('/proc/self/maps') if 'gomp' in l or 'libomp' in l}), same)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    own = _fastgelu_openmp()
    assert len(own) == 1
    shared = os.path.basename(own[0]).startswith("libgomp.so.1")  # the system file is libgomp.so.1.0.0
    assert out.stdout.split() == ["1" if shared else "2", "True"], own


OTHER_RUNTIME_C = """
void other_work(float* a, long n) {
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) a[i] = a[i] * 0.5f + 1.0f;
}
"""

MIXED = """
import ctypes, sys, numpy as np, fastgelu
lib = ctypes.CDLL(sys.argv[1])
maps = {l.split()[-1].rsplit('/', 1)[-1] for l in open('/proc/self/maps') if 'omp' in l}
a = np.ones(1 << 16, np.float32)
x = np.random.default_rng(0).standard_normal(1 << 20, dtype=np.float32)
fastgelu.set_num_threads(1); ref = fastgelu.gelu(x); fastgelu.set_num_threads(2)
for _ in range(200):       # the LLVM runtime's workers spin after each region while fastgelu's team runs
    lib.other_work(a.ctypes.data_as(ctypes.c_void_p), ctypes.c_long(a.size))
    y = fastgelu.gelu(x)
print(any(m.startswith('libgomp') for m in maps), any(m.startswith('libomp') for m in maps),
      np.array_equal(y, ref), fastgelu.get_num_threads() <= 2)
"""


def test_llvm_openmp_beside_gnu(tmp_path):
    """A library parallelized with LLVM's libomp next to fastgelu (GNU libgomp): both runtimes load, both
    run their teams, results are unchanged (the speed figures are in benches/test_processes.py)."""
    import glob
    import shutil
    libomp = sorted(glob.glob("/usr/lib/llvm-*/lib/libomp.so.5"))
    cc = shutil.which("gcc")
    if not libomp or cc is None or not fastgelu.get_config()["openmp"]:
        pytest.skip("needs gcc and LLVM's libomp (apt-get install libomp-dev)")
    src = tmp_path / "other.c"
    src.write_text(OTHER_RUNTIME_C)
    so = tmp_path / "libother.so"
    libdir = os.path.dirname(libomp[-1])
    # gcc's OpenMP code calls the GOMP_* entry points, which LLVM's libomp also provides
    subprocess.run([cc, "-O2", "-fopenmp", "-fPIC", "-shared", str(src), "-o", str(so),
                    "-Wl,--no-as-needed", libomp[-1], "-Wl,--as-needed", f"-Wl,-rpath,{libdir}"], check=True)
    out = subprocess.run([sys.executable, "-c", MIXED, str(so)], capture_output=True, text=True, check=True,
                         timeout=120).stdout.split()
    assert out == ["True", "True", "True", "True"], out
