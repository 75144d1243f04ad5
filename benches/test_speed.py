"""pytest-benchmark suite: one group per (variant, direction, dtype, size), fastgelu beside the NumPy(+SciPy)
formula, PyTorch and ONNX Runtime (each skipped when not installed), so ratios read off one table.

Each fastgelu case also times a reference kernel in the same rounds (benches/conftest.py, `ratio`) and saves the
per-round speed ratios, which `--ratio-fail` judges against a saved run (docs/performance.md#the-benchmark-suite):

    pytest benches --benchmark-save=base                         # record a baseline
    pytest benches --benchmark-compare --ratio-fail=5            # fail on a fall of the ratio > 5%, beyond noise
    pytest benches --benchmark-group-by=group -k "none-fwd-float32"       # one workload
"""
import numpy as np
import pytest

import fastgelu
from fastgelu.bench import speed

# (variant, direction, dtype, elements, sigma of the randn input)
CASES = [("none", "fwd", np.float32, n, 1) for n in (3072, 262144, 1 << 26)]
CASES += [(v, d, t, 262144, 1) for v in ("none", "tanh", "sigmoid") for d in ("fwd", "grad")
          for t in (np.float32, np.float64) if (v, d, t) != ("none", "fwd", np.float32)]
CASES += [("none", "fwd", np.float16, 262144, 1)]
if fastgelu.ufuncs.BFLOAT16 is not None:
    CASES += [("none", "fwd", fastgelu.ufuncs.BFLOAT16, 262144, 1)]
# wide activations (a third of the inputs beyond |x| = 3): a kernel that is fast only on narrow data is not
CASES += [(v, d, t, n, 3) for (v, d, t, n, _) in CASES
          if (v, d, n) in (("none", "fwd", 262144), ("none", "grad", 262144), ("none", "fwd", 1 << 26),
                           ("tanh", "fwd", 262144)) and np.dtype(t).itemsize <= 4 or
          (v, d, t, n) == ("none", "fwd", np.float64, 262144)]
IMPLS = ("fastgelu", "numpy", "torch", "onnxruntime")


def case_id(case):
    v, d, t, n, sigma = case
    return f"{v}-{d}-{np.dtype(t).name}-{n}" + (f"-sigma{sigma}" if sigma != 1 else "")


def case_inputs(case):
    v, d, t, n, sigma = case
    x, dy = speed.inputs(n, np.float32, sigma=sigma)
    return x.astype(t, copy=False), dy.astype(t, copy=False)


def make(impl, case, arrays=None):
    """A zero-argument callable for one implementation on one workload (on `arrays`, else fresh inputs), or
    None if not available."""
    variant, direction, dtype, n, _ = case
    x, dy = arrays if arrays is not None else case_inputs(case)
    if impl == "fastgelu":
        out = np.empty_like(x)
        fwd, grad = fastgelu._api.VARIANTS[variant]
        return (lambda: fwd(x, out=out)) if direction == "fwd" else (lambda: grad(x, dy, out=out))
    if impl == "numpy":
        formula = speed.numpy_formula(variant, direction)
        if formula is None or n > 1 << 24 or np.dtype(dtype).kind != "f":
            return None
        return lambda: formula(x, dy)
    if impl == "torch":
        torch = speed._torch()
        return None if torch is None else speed.torch_call(torch, variant, direction, x, dy)
    if (variant, direction, dtype) == ("tanh", "fwd", np.float32):
        return speed.ort_fastgelu(x)
    return None


def stream(x, dy):
    """The memory-streaming reference: the case's arrays read and an output written, no math."""
    o = np.empty_like(x)
    if x.dtype.kind != "f":  # bfloat16: ml_dtypes' arithmetic loops are not streaming speed
        return "np.copyto", lambda: np.copyto(o, x)
    if dy is None:
        return "np.multiply(x,1)", lambda: np.multiply(x, 1, out=o)
    return "np.multiply(x,dy)", lambda: np.multiply(x, dy, out=o)


def reference(case, arrays):
    """(name, callable) of the kernel fastgelu's case is timed against in the same rounds, on the same arrays:
    PyTorch's for the same call (ONNX Runtime's FastGelu for the tanh forward without PyTorch), else, and out
    of cache, streaming."""
    variant, direction, dtype, n, _ = case
    if n <= 1 << 24:
        for impl in ("torch", "onnxruntime"):
            fn = make(impl, case, arrays)
            if fn is not None:
                return impl, fn
    return stream(arrays[0], arrays[1] if direction == "grad" else None)


def ratio_pair(case):
    """(fastgelu's callable, (name, the reference's callable)) on one set of inputs."""
    arrays = case_inputs(case)
    return make("fastgelu", case, arrays), reference(case, arrays)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_gelu_speed(benchmark, ratio, case, impl):
    benchmark.group = case_id(case)
    if impl == "fastgelu":
        fn, (name, ref) = ratio_pair(case)
        ratio(fn, ref, name, case[3], rebuild=lambda: (lambda f, r: (f, r[1]))(*ratio_pair(case)))
        if name == "onnxruntime":
            del ref
            speed.settle()
        return
    fn = make(impl, case)
    if fn is None:
        pytest.skip(f"{impl} not installed or not applicable to {case_id(case)}")
    benchmark.extra_info["elements"] = case[3]
    benchmark(fn)
    if impl == "onnxruntime":
        del fn
        speed.settle()


def _in_place(benchmark, func):
    # fresh data at every call (restored outside the timing): iterated in place on one buffer, GELU would
    # sink it to zeros and subnormals within ~150 calls and time other data than a model's
    x0, _ = speed.inputs(3072, np.float32)
    x = x0.copy()
    benchmark.group = "in-place-3072"
    benchmark.pedantic(func, args=(x,), kwargs={"out": x}, setup=lambda: np.copyto(x, x0), rounds=20000,
                       warmup_rounds=100)


def test_in_place_small_call(benchmark, ratio):
    """3,072 elements in place (one token of BERT-base's MLP): call overhead against np.tanh(x, out=x). The ratio
    mode times (restore, call) pairs of both."""
    x0, _ = speed.inputs(3072, np.float32)
    x = x0.copy()
    benchmark.group = "in-place-3072"

    def in_place(func):
        def call():
            np.copyto(x, x0)
            func(x, out=x)
        return call
    ratio(in_place(fastgelu.ufuncs.gelu), in_place(np.tanh), "np.tanh", 3072)


def test_in_place_small_call_numpy_tanh(benchmark):
    _in_place(benchmark, np.tanh)


@pytest.mark.parametrize("case", [c for c in CASES if c[3] == 1 << 26], ids=case_id)
def test_memory_floor(benchmark, case):
    """np.multiply(x, 1, out=o) on 64M float32: what any elementwise kernel can reach out of cache."""
    x, _ = case_inputs(case)
    o = np.empty_like(x)
    benchmark.group = case_id(case)
    benchmark(np.multiply, x, 1, out=o)


# gated GELU: gelu_mul / gelu_mul_grad against PyTorch eager F.gelu(gate) * up and its autograd backward
GATED_CASES = [(v, d, np.float32, 262144, s) for v in ("none", "tanh") for d in speed.GATED for s in (1, 3)]
GATED_CASES += [("none", "mul", np.float32, 1 << 26, s) for s in (1, 3)]


def gated_torch(case, gate, up, dy):
    torch = speed._torch()
    if torch is None or case[3] > 1 << 24:
        return None
    return speed.gated_torch(torch, case[0], case[1], gate, up, dy)


def gated_reference(case, gate, up, dy):
    ref = gated_torch(case, gate, up, dy)
    return ("torch", ref) if ref is not None else stream(gate, up)


def gated_pair(case):
    """(fastgelu's callable, the reference's) on fresh inputs: the ratio mode's later passes."""
    variant, direction, dtype, n, sigma = case
    gate, up, dy = speed.gated_inputs(n, dtype, sigma)
    return speed.gated_fastgelu(variant, direction, gate, up, dy), gated_reference(case, gate, up, dy)[1]


@pytest.mark.parametrize("impl", ("fastgelu", "torch"))
@pytest.mark.parametrize("case", GATED_CASES, ids=case_id)
def test_gated_speed(benchmark, ratio, case, impl):
    variant, direction, dtype, n, sigma = case
    gate, up, dy = speed.gated_inputs(n, dtype, sigma)
    benchmark.group = case_id(case)
    if impl == "fastgelu":
        fn = speed.gated_fastgelu(variant, direction, gate, up, dy)
        name, ref = gated_reference(case, gate, up, dy)
        ratio(fn, ref, name, n, rebuild=lambda: gated_pair(case))
        return
    fn = gated_torch(case, gate, up, dy)
    if fn is None:
        pytest.skip("torch not installed (or 64M: the memory floor is the reference there)")
    benchmark.extra_info["elements"] = n
    benchmark(fn)


@pytest.mark.parametrize("sigma", (1, 3))
def test_gated_memory_floor(benchmark, sigma):
    """np.multiply(gate, up, out=o) on 64M float32: three streams, what gelu_mul can reach out of cache."""
    gate, up, _ = speed.gated_inputs(1 << 26, np.float32, sigma)
    o = np.empty_like(gate)
    benchmark.group = case_id(("none", "mul", np.float32, 1 << 26, sigma))
    benchmark(np.multiply, gate, up, out=o)
