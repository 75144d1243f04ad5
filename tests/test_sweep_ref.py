"""The exhaustive sweep's C reference (tools/sweep_ref.c) judges exactly as fastgelu/_reference.py does.

CI proves the float32 accuracy table of docs/accuracy.md over all 2^32 inputs with that C reference; these tests hold it
to the NumPy+SciPy reference (values, scales and ULP errors of fastgelu's own results) on the dense sample
of every regime, and check that the sweep itself fails a function that exceeds 2 ULP.
"""
import importlib.util
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import fastgelu.ufuncs as U
from fastgelu import _reference as R

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")
pytestmark = pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="needs a C compiler")


@pytest.fixture(scope="module")
def sweep_tool():
    spec = importlib.util.spec_from_file_location("sweep_f32", os.path.join(TOOLS, "sweep_f32.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def cref(sweep_tool, tmp_path_factory):
    return sweep_tool.load_c_reference(sweep_tool.build_c_reference(str(tmp_path_factory.mktemp("ref"))))


@pytest.mark.parametrize("name", R.NAMES)
def test_values_and_scales_match_numpy(cref, name):
    x = R.dense_sample(np.float32).astype(np.float64)
    v, s = np.empty_like(x), np.empty_like(x)
    cref.ref_values(R.NAMES.index(name), x.ctypes.data, len(x), v.ctypes.data, s.ctypes.data)
    rv, rs = R.ref64(name, x)
    # libm's erfc/exp against SciPy's/NumPy's: ~1e-14 of the scale (the magnitude ULPs are counted in), which
    # is 1e-7 of a float32 ULP
    for got, want in ((v, rv), (s, rs)):
        assert np.array_equal(np.isnan(got), np.isnan(want)), name
        assert np.array_equal(np.signbit(got[got == 0]), np.signbit(want[got == 0])), name
        ok = np.isfinite(want)
        assert np.array_equal(got[~ok & ~np.isnan(want)], want[~ok & ~np.isnan(want)]), name
        assert np.all(np.abs(got[ok] - want[ok]) <= 1e-13 * rs[ok]), name


@pytest.mark.parametrize("name", R.NAMES)
def test_ulp_errors_match_numpy(cref, name):
    x = R.dense_sample(np.float32)
    f = getattr(U, name)
    y = f(x, np.ones_like(x)) if name.endswith("_grad") else f(x)
    ref, scale = R.ref64(name, x.astype(np.float64))
    err = R.ulp_error(y, ref, scale, np.float32)
    out = np.empty(4)
    cref.sweep_chunk(R.NAMES.index(name), x.ctypes.data, y.ctypes.data, len(x), out.ctypes.data)
    assert out[0] == pytest.approx(err.max(), abs=1e-6)  # libm vs NumPy: ~1e-16 relative = 1e-9 ULP
    assert (int(out[2]), int(out[3])) == (int((err > 1).sum()), int((err > 2).sum()))


def test_sweep_fails_a_function_beyond_2_ulp(tmp_path):
    # a harness whose gelu is off by 3 ULP for x in [1, 2): the sweep must report it and exit 1
    (tmp_path / "bad_harness.py").write_text(
        "import numpy as np\nimport fastgelu.ufuncs as U\n"
        "def gelu(x):\n"
        "    y = U.gelu(x)\n"
        "    m = (x >= 1) & (x < 2)\n"
        "    y[m] = (y[m].view(np.uint32) + 3).view(np.float32)\n"
        "    return y\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, os.path.join(TOOLS, "sweep_f32.py"), "--module", "bad_harness",
                        "--only", "gelu", "--stride", "4096", "--procs", "1"],
                       capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL" in r.stdout and ">2 ulp: 0" not in r.stdout


@pytest.mark.parametrize("name", ["gelu_mul", "gelu_tanh_mul_grad", "gelu_sigmoid_mul_grad", "gelu_mul_grad"])
def test_gated_ulp_errors_match_numpy(cref, sweep_tool, name):
    """sweep_product (the --gated sweep's judge) against _reference.ref_gated on every gate of the dense
    sample times every (up, dy) pair of the sweep."""
    from fastgelu._reference import ref_gated
    gates = R.dense_sample(np.float32, 20_000)
    factors = sweep_tool.GATED_FACTORS
    k = len(factors)
    x, up, dy = np.repeat(gates, k), np.tile(factors[:, 0], len(gates)), np.tile(factors[:, 1], len(gates))
    f = getattr(U, name)
    base = R.NAMES.index(name.replace("_mul", "").replace("_grad", ""))
    fup, fdy = np.ascontiguousarray(factors[:, 0]), np.ascontiguousarray(factors[:, 1])
    if name.endswith("_grad"):
        dgate, dup = f(x, up, dy)
        (rg, sg), (ru, su) = ref_gated(name, x, up, dy)
        checks = [(base + 3, fdy, fup, dgate, rg, sg), (base, fdy, None, dup, ru, su)]
    else:
        ref, scale = ref_gated(name, x, up)
        checks = [(base, fup, None, f(x, up), ref, scale)]
    for fn, a, b, y, ref, scale in checks:
        with np.errstate(all="ignore"):
            big = np.isinf(ref.astype(np.float32)) & np.isfinite(ref)
            ref = np.where(big, ref.astype(np.float32).astype(np.float64), ref)
        err = R.ulp_error(y, ref, scale, np.float32)
        out = np.empty(4)
        cref.sweep_product(fn, gates.ctypes.data, a.ctypes.data, None if b is None else b.ctypes.data, k,
                           np.ascontiguousarray(y).ctypes.data, len(gates), out.ctypes.data)
        assert out[0] == pytest.approx(err.max(), abs=1e-6), name
        assert (int(out[2]), int(out[3])) == (int((err > 1).sum()), int((err > 2).sum())), name
        assert err.max() <= 3, name
