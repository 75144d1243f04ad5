"""tools/avx512_emulated.py stands in for an AVX-512 CPU when a change must leave the AVX-512 kernels' bits
alone: its build must be the AVX-512 code path computing GELU (within the bound, away from the subnormal
results the emulation's scalef flushes), the same bits twice, and other bits when the kernels change."""
import os
import platform
import shutil
import sys

import numpy as np
import pytest

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")
sys.path.insert(0, TOOLS)
import avx512_emulated  # noqa: E402

pytestmark = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64") or not shutil.which("cc")
    or not os.path.exists("/usr/include/simde/x86/avx512.h"),
    reason="needs an x86-64 C compiler and SIMDe (apt-get install libsimde-dev)")

STRIDE = 1 << 16


@pytest.fixture(scope="module")
def lib():
    return avx512_emulated.build()


def test_it_computes_gelu_on_the_avx512_path(lib):
    from fastgelu._reference import ref64, ulp_error
    n, out = avx512_emulated.compute(lib, STRIDE)
    x = np.arange(0, 2**32, STRIDE, dtype=np.uint64).astype(np.uint32).view(np.float32)
    finite = np.isfinite(x)
    for name, fn in (("gelu", "gelu"), ("gelu_tanh", "tanh"), ("gelu_sigmoid", "sig"), ("gelu_grad", "gelu_grad")):
        y = out[fn].view(np.float32)[finite]
        v, scale = ref64(name, x[finite])
        keep = np.abs(v) > 2.0 ** -100
        assert ulp_error(y[keep], v[keep], scale[keep], np.float32).max() <= 2.0, name


def test_the_same_kernels_give_the_same_bits_and_other_bits_fail(lib, tmp_path, capsys):
    saved = tmp_path / "before.npz"
    assert avx512_emulated.main(["--stride", str(STRIDE), "--save", str(saved)]) == 0
    assert avx512_emulated.main(["--stride", str(STRIDE), "--compare", str(saved)]) == 0
    assert "FAIL" not in capsys.readouterr().out
    ref = dict(np.load(saved))
    ref["tanh_grad+dy"] = ref["tanh_grad+dy"].copy()
    ref["tanh_grad+dy"][12345] ^= 1                # one result's last bit
    ref["sig_mul lost"] = ref["sig_mul lost"][1:]  # one lost lane fewer
    np.savez(saved, **ref)
    assert avx512_emulated.main(["--stride", str(STRIDE), "--compare", str(saved)]) == 1
    out = capsys.readouterr().out
    assert "tanh_grad+dy         DIFFERENT (1)" in out and "sig_mul lost" in out and out.count("FAIL") == 2
