"""pytest-benchmark suite: one group per (variant, direction, dtype, size), fastgelu beside the NumPy(+SciPy)
formula, PyTorch and ONNX Runtime (each skipped when not installed), so ratios read off one table.

    pytest benches --benchmark-save=base                                   # record a baseline
    pytest benches --benchmark-compare --benchmark-compare-fail=mean:10%   # fail on a 10% regression
    pytest benches --benchmark-group-by=group -k "none-fwd-float32"       # one workload
"""
import numpy as np
import pytest

import fastgelu
from fastgelu import _bench

CASES = [("none", "fwd", np.float32, n) for n in (3072, 262144, 1 << 26)]
CASES += [(v, d, t, 262144) for v in ("none", "tanh", "sigmoid") for d in ("fwd", "grad")
          for t in (np.float32, np.float64) if (v, d, t) != ("none", "fwd", np.float32)]
CASES += [("none", "fwd", np.float16, 262144)]
if fastgelu.ufuncs.BFLOAT16 is not None:
    CASES += [("none", "fwd", fastgelu.ufuncs.BFLOAT16, 262144)]
IMPLS = ("fastgelu", "numpy", "torch", "onnxruntime")


def case_id(case):
    v, d, t, n = case
    return f"{v}-{d}-{np.dtype(t).name}-{n}"


def make(impl, case):
    """A zero-argument callable for one implementation on one workload, or None if not available."""
    variant, direction, dtype, n = case
    x, dy = _bench.inputs(n, dtype)
    if impl == "fastgelu":
        out = np.empty_like(x)
        fwd, grad = fastgelu._api.VARIANTS[variant]
        return (lambda: fwd(x, out=out)) if direction == "fwd" else (lambda: grad(x, dy, out=out))
    if impl == "numpy":
        formula = _bench.numpy_formula(variant, direction)
        if formula is None or n > 1 << 24 or np.dtype(dtype).kind != "f":
            return None
        return lambda: formula(x, dy)
    if impl == "torch":
        torch = _bench._torch()
        return None if torch is None else _bench.torch_call(torch, variant, direction, x, dy)
    if (variant, direction, dtype) == ("tanh", "fwd", np.float32):
        return _bench.ort_fastgelu(x)
    return None


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_gelu_speed(benchmark, case, impl):
    fn = make(impl, case)
    if fn is None:
        pytest.skip(f"{impl} not installed or not applicable to {case_id(case)}")
    benchmark.group = case_id(case)
    benchmark.extra_info["elements"] = case[3]
    benchmark(fn)


def test_in_place_small_call(benchmark):
    """3,072 elements in place (one token of BERT-base's MLP): call overhead against np.tanh(x, out=x)."""
    x, _ = _bench.inputs(3072, np.float32)
    benchmark.group = "in-place-3072"
    benchmark(fastgelu.ufuncs.gelu, x, out=x)


def test_in_place_small_call_numpy_tanh(benchmark):
    x, _ = _bench.inputs(3072, np.float32)
    benchmark.group = "in-place-3072"
    benchmark(np.tanh, x, out=x)


def test_memory_floor(benchmark):
    """np.multiply(x, 1, out=o) on 64M float32: what any elementwise kernel can reach out of cache."""
    x, _ = _bench.inputs(1 << 26, np.float32)
    o = np.empty_like(x)
    benchmark.group = case_id(CASES[2])
    benchmark(np.multiply, x, 1, out=o)
