"""tools/bound_f32.py measures the float32 kernels against their bound: the same kernels built with
FG_F_BOUND, which runs the central form on every lane and looks for no tail or tiny lane.  These tests keep
that measurement meaningful: on central inputs the bound build gives the kernels' own bits (it times the
same arithmetic), and on tail inputs it does not (it really skips the tail handling).  Likewise for its
--reach builds (FG_F_REACH): the tail handling moved out to |x| = R, and only there."""
import importlib.util
import os
import shutil

import numpy as np
import pytest

import fastgelu
from fastgelu import _dispatch

REACH = 6.0     # tools/bound_f32.py --reach: the tail threshold moved out to |x| = REACH
TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")
pytestmark = [
    pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="needs a C compiler"),
    pytest.mark.skipif("avx2" not in fastgelu.get_config()["isa_available"], reason="needs an AVX2 CPU"),
]


def kernel_module(mp, isa):
    """tools/gelu_f32_kernel.py, loaded for isa (loading builds its kernels, once per source and flags)"""
    mp.setenv("GX_KERNEL_ISA", isa)
    mp.syspath_prepend(TOOLS)
    spec = importlib.util.spec_from_file_location("gelu_f32_kernel", os.path.join(TOOLS, "gelu_f32_kernel.py"))
    gk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gk)
    return gk


def builds(mp, isa, variants):
    """tools/gelu_f32_kernel.py's builds of the float32 kernels for isa, as bound_f32.py makes them: {tag: lib}
    for (tag, extra compiler flags) in variants"""
    import ctypes
    gk = kernel_module(mp, isa)
    return {k: ctypes.CDLL(gk.build(isa, ["-O3", "-fno-math-errno"] + extra)) for k, extra in variants}


def test_an_edited_copy_of_the_headers_is_built_again(monkeypatch, tmp_path):
    """--cflags "TAG=-iquote DIR" times a copy of the headers: editing it must not reuse the build of the copy
    as it was (the library is named by the headers of DIR too, not by the flags alone)"""
    gk = kernel_module(monkeypatch, "avx2")
    h = tmp_path / "fg_gelu_f32_tables.h"
    h.write_text("/* one */\n")
    one = gk.lib_path("avx2", ["-iquote", str(tmp_path)])[0]
    assert gk.lib_path("avx2", ["-iquote", str(tmp_path)])[0] == one
    h.write_text("/* two */\n")
    two = gk.lib_path("avx2", ["-iquote", str(tmp_path)])[0]
    h.write_text("/* one */\n")
    assert gk.lib_path("avx2", [f"-I{tmp_path}"])[0] not in (one, two)
    assert two != one


@pytest.fixture(scope="module")
def libs(monkeypatch_module):
    return builds(monkeypatch_module, "avx2",
                  (("kernel", []), ("bound", ["-DFG_F_BOUND"]), ("reach", [f"-DFG_F_REACH={REACH!r}f"])))


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def run(lib, name, x, dy):
    import ctypes
    y = np.empty_like(x)
    f = getattr(lib, name + "_all")
    if name == "gelu_grad":
        f.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_long]
        f(x.ctypes.data, dy.ctypes.data, y.ctypes.data, x.size)
    else:
        f.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_long]
        f(x.ctypes.data, y.ctypes.data, x.size)
    return y


# (function, the range of x the AVX2 central tables take: below it the tail does)
CASES = [("gelu", (-3.39, 5.49)), ("gelu_tanh", (-3.29, 5.24)), ("gelu_grad", (-3.89, 5.99))]


@pytest.mark.parametrize("name,central", CASES, ids=[c[0] for c in CASES])
def test_bound_build_times_the_kernels_own_arithmetic(libs, name, central):
    rng = np.random.default_rng(5)
    x = rng.uniform(*central, 100_003).astype(np.float32)
    x[np.abs(x) < 1e-3] = 0.5                           # no tiny lane
    dy = rng.standard_normal(x.size).astype(np.float32)
    k, b = run(libs["kernel"], name, x, dy), run(libs["bound"], name, x, dy)
    assert np.array_equal(k.view(np.int32), b.view(np.int32))
    uf = _dispatch.load("avx2")[1].UFUNCS[name]
    assert np.array_equal(k.view(np.int32), (uf(x, dy) if name == "gelu_grad" else uf(x)).view(np.int32))


@pytest.mark.parametrize("name,central", CASES, ids=[c[0] for c in CASES])
def test_bound_build_skips_the_tail(libs, name, central):
    x = np.linspace(-8, 8, 4099, dtype=np.float32)
    dy = np.ones_like(x)
    k, b = run(libs["kernel"], name, x, dy), run(libs["bound"], name, x, dy)
    tail = x < central[0]
    assert not np.array_equal(k[tail], b[tail])
    assert np.array_equal(k[~tail & (x < central[1])], b[~tail & (x < central[1])])


def test_torch_is_held_to_the_builds_isa_oneDNN_included():
    """PyTorch's exact GELU is oneDNN's, which ATEN_CPU_CAPABILITY does not hold to AVX2: the speed tools set
    ONEDNN_MAX_CPU_ISA too, and keep what the caller already set."""
    from fastgelu.bench import speed
    assert speed.torch_isa_env("avx2", {}) == {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
    assert speed.torch_isa_env("avx2", {"ONEDNN_MAX_CPU_ISA": "SSE41"})["ONEDNN_MAX_CPU_ISA"] == "SSE41"
    assert speed.torch_isa_env("avx512", {}) == {"ATEN_CPU_CAPABILITY": "avx512"}
    assert speed.torch_isa_env("neon", {}) == {"ATEN_CPU_CAPABILITY": "default"}


@pytest.mark.parametrize("name,central", CASES, ids=[c[0] for c in CASES])
def test_reach_build_moves_the_tail_out_and_no_further(libs, name, central):
    x = np.linspace(-8, 8, 4099, dtype=np.float32)
    dy = np.ones_like(x)
    k, r = run(libs["kernel"], name, x, dy), run(libs["reach"], name, x, dy)
    moved = (x < central[0]) & (x >= -REACH)            # tail lanes the reach build leaves to the tables
    assert not np.array_equal(k[moved], r[moved])
    assert np.array_equal(k[~moved].view(np.int32), r[~moved].view(np.int32))


def test_lookup_probe_times_the_package_arithmetic(tmp_path):
    """tools/lookups_avx2.c times the AVX2 central loop (the package's tables and evaluation) beside probes
    that change one thing each: the two-vector interleaving and the 8-entry lookup by vpermilps and a blend
    must give that loop's bits, and the probes that drop or fix the lookups must not (they time other
    arithmetic, and say so)."""
    import re
    import subprocess
    exe = str(tmp_path / "lookups")
    src = os.path.join(TOOLS, "lookups_avx2.c")
    inc = os.path.join(os.path.dirname(TOOLS), "fastgelu", "src")
    subprocess.run([os.environ.get("CC", "cc"), "-O3", "-mavx2", "-mfma", "-mf16c", "-fno-math-errno", "-I", inc,
                    src, "-o", exe, "-lm"], check=True, capture_output=True)
    out = subprocess.run([exe, "4096", "3"], check=True, capture_output=True, text=True).stdout
    differ = {name.strip(): int(k) for name, k in re.findall(r"^  (.+?)\s+[\d.]+ ns.*; (\d+) results differ$", out, re.M)}
    assert len(differ) == 7, out
    assert differ["package"] == 0 and differ["two vectors"] == 0 and differ["permilps+blend"] == 0, out
    assert differ["no lookups"] > 0 and differ["fixed index"] > 0 and differ["permilps"] > 0, out



def test_lookup_costs_probe_builds_from_the_package_and_keeps_its_one_exact_probe(tmp_path):
    """tools/lookup_costs_avx2.c (issue 61's probes) compiles against the package's headers, times its 17
    variants of the central loop as ratios to the package's, and its one probe that claims the package's bits
    (an 8-entry lookup from two vpshufb) has them."""
    import re
    import subprocess
    exe = str(tmp_path / "lookup_costs")
    inc = os.path.join(os.path.dirname(TOOLS), "fastgelu", "src")
    subprocess.run([os.environ.get("CC", "cc"), "-O3", "-mavx2", "-mfma", "-mf16c", "-fno-math-errno", "-I", inc,
                    os.path.join(TOOLS, "lookup_costs_avx2.c"), "-o", exe, "-lm"], check=True, capture_output=True)
    out = subprocess.run([exe, "4096", "3"], check=True, capture_output=True, text=True).stdout
    assert "SB2 differs from package in 0 of 4096" in out, out
    ratios = re.findall(r"^  .+? [\d.]+ ns/elem .* ([\d.]+)x package$", out, re.M)
    assert len(ratios) == 17 and float(ratios[0]) == 1.0, out

@pytest.mark.skipif("avx512" not in fastgelu.get_config()["isa_available"], reason="needs an AVX-512 CPU")
@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "gelu_grad"])
def test_avx512_queue_written_back_lane_by_lane_gives_the_same_bits(monkeypatch, name):
    """tools/bound_f32.py --cflags noscatter=-DFG_F_HAS_SCATTER=0 times the AVX-512 kernels with the tail
    queue written back lane by lane instead of by vscatterdps: an A/B of the write-back alone, same results."""
    lib = builds(monkeypatch, "avx512", (("scatter", []), ("lanes", ["-DFG_F_HAS_SCATTER=0"])))
    a, b = lib["scatter"], lib["lanes"]
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-16, 8, 20011), 3 * rng.standard_normal(5003),
                        [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-40, -1e-40]]).astype(np.float32)
    dy = rng.standard_normal(x.size).astype(np.float32) * np.float32(1e30) ** rng.integers(0, 2, x.size)
    ya, yb = run(a, name, x, dy), run(b, name, x, dy)
    assert np.array_equal(ya.view(np.uint32), yb.view(np.uint32))
    assert np.count_nonzero(x < -7.5) > 1000            # the queue was exercised: those lanes are tail lanes
