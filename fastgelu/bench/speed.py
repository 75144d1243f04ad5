"""Speed comparisons shared by `python -m fastgelu bench` and benches/ (pytest-benchmark).

Every competitor works on the same input array in the same process with the same thread count; results
are medians of several rounds. Competitors that are not installed (SciPy, PyTorch, ONNX Runtime) are left
out of the row rather than failing.
"""
import os
import time

import numpy as np

from .. import _api, _api_config, _api_gated, ufuncs

SQRT1_2 = 0.7071067811865476


_held = None      # hold_threads(n): every library's thread count, fixed
_let_go = 0       # fastgelu's own cap before (0: OpenMP's limit)


def hold_threads(n):
    """Time every library at exactly n threads from now on (fastgelu's count is otherwise the load-aware
    get_num_threads(), which PyTorch and ONNX Runtime would copy when first set up); None: let go, fastgelu's
    cap as it was (PyTorch keeps its count)."""
    global _held, _let_go
    if n is None:
        if _held is not None:
            for m in _api_config._kernel_modules():
                m._set_threads(_let_go)
        _held = None
        return
    if _held is None:
        _let_go = ufuncs._kernels._backoff()["user"]
    _api_config.set_num_threads(n)
    _held = n


# What PyTorch runs on a CPU with only a given ISA: its own kernels follow ATEN_CPU_CAPABILITY, but the exact
# GELU forward and backward are oneDNN's, which follow ONEDNN_MAX_CPU_ISA alone (ATEN_CPU_CAPABILITY=avx2 left
# them on AVX-512 code on an AVX-512 CPU: docs/performance.md#how-the-tables-are-measured)
TORCH_ISA_ENV = {"avx2": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
                 "avx512": {"ATEN_CPU_CAPABILITY": "avx512"}}


def torch_isa_env(isa, env):
    """Sets in env (os.environ, or a child's) what holds PyTorch to the fastgelu build isa ("avx2",
    "avx512"; any other: ATEN_CPU_CAPABILITY=default), when set before torch is imported; values already
    there are kept."""
    for k, v in TORCH_ISA_ENV.get(isa, {"ATEN_CPU_CAPABILITY": "default"}).items():
        env.setdefault(k, v)
    return env


def _threads():
    return _held if _held is not None else max(1, _api_config.get_num_threads())


def _torch():
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(_threads())
    return torch


def numpy_formula(variant, direction):
    """The NumPy(+SciPy) way a user writes it today, or None when SciPy is missing for erfc."""
    if variant == "none":
        try:
            from scipy.special import erfc
        except ImportError:
            return None
        if direction == "fwd":
            return lambda x, dy: 0.5 * x * erfc(-x * SQRT1_2)
        return lambda x, dy: dy * (0.5 * erfc(-x * SQRT1_2) + x * 0.3989422804014327 * np.exp(-0.5 * x * x))
    if variant == "tanh":
        def w(x):
            return 0.7978845608028654 * (x + 0.044715 * x * x * x)
        if direction == "fwd":
            return lambda x, dy: 0.5 * x * (1.0 + np.tanh(w(x)))

        def tanh_grad(x, dy):
            t = np.tanh(w(x))
            return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * 0.7978845608028654 * (1 + 0.134145 * x * x))
        return tanh_grad
    if direction == "fwd":
        return lambda x, dy: x / (1.0 + np.exp(-1.702 * x))

    def sigmoid_grad(x, dy):
        s = 1.0 / (1.0 + np.exp(-1.702 * x))
        return dy * (s + 1.702 * x * s * (1 - s))
    return sigmoid_grad


def torch_call(torch, variant, direction, x, dy):
    """A zero-argument callable running PyTorch's own kernel on (views of) the same data."""
    t, g = as_tensor(torch, x), as_tensor(torch, dy)
    o = torch.empty_like(t)
    if t.dtype == torch.float64:
        # PyTorch 2.13's float64 GELU is slow until the process's first large float64 elementwise op (cause
        # not found; the figures: docs/performance.md, "Measurements behind design choices").  A
        # user's process is long past that, so the comparison is too: one such op right before timing (one
        # at import alone was not always enough)
        torch.neg(t, out=o)
    if variant == "sigmoid":  # PyTorch has no such mode: the composite a user would write
        if direction == "fwd":
            return lambda: torch.mul(t, torch.sigmoid(1.702 * t), out=o)
        return None
    if direction == "fwd":
        return lambda: torch._C._nn.gelu(t, approximate=variant, out=o)
    return lambda: torch.ops.aten.gelu_backward(g, t, approximate=variant)


def as_tensor(torch, a):
    """A tensor over the array's memory; bfloat16 (ml_dtypes) goes through its 16-bit pattern."""
    if a.dtype.kind == "V" or a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def ort_fastgelu(x):
    """ONNX Runtime's FastGelu (tanh form, com.microsoft domain) on float32 x, or None if unavailable."""
    try:
        import onnx
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError:
        return None
    node = helper.make_node("FastGelu", ["x"], ["y"], domain="com.microsoft")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = min(model.ir_version, 9)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = _threads()
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    binding = sess.io_binding()
    out = np.empty_like(x)
    binding.bind_cpu_input("x", x)
    binding.bind_output("y", "cpu", 0, np.float32, list(x.shape), out.ctypes.data)
    def run(keep=(x, out)):  # the binding holds raw pointers: the arrays must outlive it
        sess.run_with_iobinding(binding)
    return run


def settle():
    """Call after timing ONNX Runtime, with its session dropped. ORT's intra-op workers spin after each run
    (session.intra_op.allow_spinning): fastgelu calls made then find a core taken, and its back-off
    (docs/threads.md) keeps them on fewer threads for up to a second (docs/performance.md has the figures).
    Waiting out the back-off keeps each library's figure its own. At one thread (hold_threads(1)) ORT has
    no workers to spin."""
    if _held == 1:
        return
    import gc
    gc.collect()
    time.sleep(1.1)


def median_time(fn, min_round=0.02, rounds=7):
    """Median seconds per call over `rounds` rounds, each long enough to be timed reliably."""
    fn()
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_round or reps >= 1 << 20:
            break
        reps *= 2 if dt * 4 > min_round else 8
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - t0) / reps)
    return float(np.median(times))


def shuffled_percentiles(calls, rounds, n, pct=5.0):
    """{key: the pct-th percentile of ns an element} of the zero-argument calls, each called three times a
    round in an order shuffled every round, so that a slow spell of a shared machine falls on all of them
    (tools/bound_f32.py, tools/p5_table.py)."""
    import random
    samples = {k: [] for k in calls}
    keys = list(calls)
    for k in keys:
        calls[k]()
    for _ in range(rounds):
        random.shuffle(keys)
        for k in keys:
            for _ in range(3):
                t0 = time.perf_counter_ns()
                calls[k]()
                samples[k].append((time.perf_counter_ns() - t0) / n)
    return {k: float(np.percentile(v, pct)) for k, v in samples.items()}


def in_place_time(func, x0, rounds=7):
    """Median seconds of func(x, out=x) on fresh data x0 at every call: (restore x, call) minus the restore
    alone. Calling func in place on one buffer over and over would time other data: GELU sinks it to zeros
    and subnormals within ~150 calls (np.tanh only slowly shrinks it)."""
    x = x0.copy()

    def restore_and_call():
        np.copyto(x, x0)
        func(x, out=x)

    t_both = median_time(restore_and_call, rounds=rounds)
    t_restore = median_time(lambda: np.copyto(x, x0), rounds=rounds)
    return max(t_both - t_restore, 0.0)


_BLOCK = 1 << 22


def _randn(rng, n):
    """n float32 randn values; beyond 4M, 4M of them repeated: a branch predictor cannot learn a 4M-element
    pattern, and drawing every value was most of the time of the benchmark suite's 64M cases."""
    if n <= _BLOCK:
        return rng.standard_normal(n, dtype=np.float32)
    return np.resize(rng.standard_normal(_BLOCK, dtype=np.float32), n)


def inputs(n, dtype, seed=0, sigma=1):
    """randn * sigma inputs (sigma = 3: wide activations, a third of them beyond |x| = 3) and randn dy."""
    rng = np.random.default_rng(seed)
    x = (_randn(rng, n) * np.float32(sigma)).astype(dtype)
    dy = _randn(rng, n).astype(dtype)
    return x, dy


def row(variant, direction, dtype, n, sigma=1, torch=None, rounds=7):
    """Gelem/s of fastgelu and of each installed competitor for one workload (inputs randn * sigma)."""
    if direction in GATED:
        return gated_row(variant, direction, dtype, n, sigma, torch, rounds)
    x, dy = inputs(n, dtype, sigma=sigma)
    out = np.empty_like(x)
    fwd, grad = _api.VARIANTS[variant]
    fg = (lambda: fwd(x, out=out)) if direction == "fwd" else (lambda: grad(x, dy, out=out))
    res = {"fastgelu": n / median_time(fg, rounds=rounds) / 1e9}
    formula = numpy_formula(variant, direction)
    if formula is not None and n <= 1 << 24 and x.dtype.kind == "f":  # 64M: temporaries take minutes
        res["numpy"] = n / median_time(lambda: formula(x, dy), rounds=min(rounds, 3)) / 1e9
    if torch is not None:
        tc = torch_call(torch, variant, direction, x, dy)
        if tc is not None:
            res["torch"] = n / median_time(tc, rounds=rounds) / 1e9
    if variant == "tanh" and direction == "fwd" and dtype == np.float32:
        oc = ort_fastgelu(x)
        if oc is not None:
            res["onnxruntime"] = n / median_time(oc, rounds=rounds) / 1e9
            del oc
            settle()
    return res


# ---- gated GELU: gelu_mul(gate, up) ("mul") and gelu_mul_grad(gate, up, dy) ("mulgrad") -------------------

GATED = ("mul", "mulgrad")


def gated_inputs(n, dtype, sigma=1, seed=0):
    """gate = randn * sigma, up and dy = randn."""
    rng = np.random.default_rng(seed)
    gate = (_randn(rng, n) * np.float32(sigma)).astype(dtype)
    up = _randn(rng, n).astype(dtype)
    dy = _randn(rng, n).astype(dtype)
    return gate, up, dy


def gated_fastgelu(variant, direction, gate, up, dy):
    fwd, grad = _api_gated.GATED[variant]
    if direction == "mul":
        out = np.empty_like(gate)
        return lambda: fwd(gate, up, out=out)
    o1, o2 = np.empty_like(gate), np.empty_like(gate)
    return lambda: grad(gate, up, dy, out=(o1, o2))


def gated_torch(torch, variant, direction, gate, up, dy):
    """PyTorch eager as a user writes it: F.gelu(gate) * up (sigmoid form: gate * sigmoid(1.702 gate) * up);
    for "mulgrad" the autograd backward of that expression (graph built once, retained)."""
    F = torch.nn.functional

    def expr(g, u):
        if variant == "sigmoid":
            return g * torch.sigmoid(1.702 * g) * u
        return F.gelu(g, approximate=variant) * u
    g, u, d = as_tensor(torch, gate), as_tensor(torch, up), as_tensor(torch, dy)
    if direction == "mul":
        return lambda: expr(g, u)
    g, u = g.clone().requires_grad_(), u.clone().requires_grad_()
    y = expr(g, u)
    return lambda: torch.autograd.grad(y, (g, u), d, retain_graph=True)


def gated_row(variant, direction, dtype, n, sigma=1, torch=None, rounds=7):
    """Gelem/s of the gated call and of PyTorch eager for one workload (gate = randn * sigma)."""
    gate, up, dy = gated_inputs(n, dtype, sigma)
    res = {"fastgelu": n / median_time(gated_fastgelu(variant, direction, gate, up, dy), rounds=rounds) / 1e9}
    if torch is not None and n <= 1 << 24:
        res["torch"] = n / median_time(gated_torch(torch, variant, direction, gate, up, dy), rounds=rounds) / 1e9
    return res


def gated_memory_floor(n, dtype=np.float32, rounds=7):
    """Gelem/s of np.multiply(gate, up, out=o): the three streams of a gated forward, no GELU."""
    gate, up, _ = gated_inputs(n, dtype)
    o = np.empty_like(gate)
    return n / median_time(lambda: np.multiply(gate, up, out=o), rounds=rounds) / 1e9


def memory_floor(n, dtype=np.float32, rounds=7):
    """Gelem/s of np.multiply(x, 1, out=o): one read and one write of every element, no math."""
    x, _ = inputs(n, dtype)
    o = np.empty_like(x)
    return n / median_time(lambda: np.multiply(x, 1, out=o), rounds=rounds) / 1e9


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def machine():
    return f"{cpu_name()}, {os.cpu_count()} logical CPUs, {_api_config.get_num_threads()} threads, ISA {ufuncs.ISA}"
