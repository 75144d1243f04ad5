"""Reference math for the accuracy tools (float64 references of the six functions, mpmath references,
the ULP error measure, the IEEE special cases).

The definitions live in the package, fastgelu/_reference.py, so tests, `python -m fastgelu check` and these
tools judge by the same code. This module loads that file by path, so the tools work without building or
importing the compiled package (e.g. on a kernel harness via --module).
"""
import importlib.util
import os

_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fastgelu", "_reference.py")
_spec = importlib.util.spec_from_file_location("_fastgelu_reference", _path)
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)

ref64 = _mod.ref64
ref_mp = _mod.ref_mp
ulp_error = _mod.ulp_error
dense_sample = _mod.dense_sample
NAMES = _mod.NAMES

# expected special values with dy = 1: (input, output); signed zeros are told apart
FWD_SPECIALS = [(float("inf"), float("inf")), (float("-inf"), -0.0), (0.0, 0.0), (-0.0, -0.0)]
GRAD_SPECIALS = [(float("inf"), 1.0), (float("-inf"), 0.0), (0.0, 0.5), (-0.0, 0.5)]


def special_failures_one(name, func, dtype):
    """IEEE special cases for one function (`func(x)` or `func(x, dy)` for gradients); list of failures."""
    import numpy as np

    bad = []
    grad = name.endswith("_grad")
    call = (lambda x, dy=1.0: func(x, np.full(x.shape, dy, dtype))) if grad else (lambda x: func(x))
    for x, want in (GRAD_SPECIALS if grad else FWD_SPECIALS):
        got = call(np.array([x], dtype))[0]
        if not (got == want and (grad or np.signbit(got) == np.signbit(want))):
            bad.append(f"{name}({x!r}) = {got!r}, want {want!r}")
    if grad:
        got = call(np.array([np.inf], dtype), 3.0)[0]
        if got != 3.0:
            bad.append(f"{name}(inf, dy=3) = {got!r}, want 3.0")
    if not np.isnan(call(np.array([np.nan], dtype))[0]):
        bad.append(f"{name}(nan) is not NaN")
    return bad
