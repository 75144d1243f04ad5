"""The Python surface: variant choice, the calls, and thread control (the argument checks are _args.py's,
tensors go through _torch_bridge.py). No numerics here: every element is computed by the ufuncs, which also
supply out=, where=, casting, broadcasting and __array_ufunc__ dispatch (dask, xarray)."""
import operator
import sys

import numpy as np

from . import _lists, _torch_bridge, ufuncs
from ._args import (_BIAS_CODES, _as_splittable, _check_bias, _check_fallback_out, _check_out,
                    _check_real, _fused_bias_ok, _grad_dtype, _halves)



def _by_variant(*suffixes):
    """approximate= -> the variant's ufuncs named gelu[_variant]<suffix>, for each suffix."""
    return {v: tuple(getattr(ufuncs, _lists.ufunc_name(v, s)) for s in suffixes) for v in _lists.VARIANTS}


# approximate= -> (forward ufunc, gradient ufunc); the one place a variant is chosen
VARIANTS = _by_variant("", "_grad")
# approximate= -> the variant's code in the kernels (its index in their list)
_INDEX = {v: i for i, v in enumerate(_lists.VARIANTS)}


def _lookup(table, approximate, who):
    """table[approximate]; ValueError naming the valid values otherwise."""
    try:
        return table[approximate]
    except (KeyError, TypeError):
        raise ValueError(f"{who}: approximate must be one of {', '.join(map(repr, table))}; "
                         f"got {approximate!r}") from None


def _variant(approximate, who="gelu"):
    """(forward, gradient) ufuncs for `approximate`; ValueError naming the valid values otherwise."""
    return _lookup(VARIANTS, approximate, who)


def _call(func, ufunc, index, x, dy, bias, out, kwargs):
    if _torch_bridge.any_tensor(x, dy, bias, out):
        return _torch_bridge.call(lambda x, dy, bias, out: _call(func, ufunc, index, x, dy, bias, out, kwargs),
                                  (x, dy, bias), out)
    if bias is None:
        args = (x,) if dy is None else (x, dy)
        return ufunc(*args, out=out, **kwargs)
    _check_bias(func, x, bias)
    if _fused_bias_ok(x, bias, dy, out, kwargs):
        if out is None:
            out = np.empty_like(x)
        elif not out.flags.writeable:
            raise ValueError(f"{func}: out is read-only")
        return _kernels()._bias_call(index, dy is not None, _BIAS_CODES[x.dtype], x, bias, dy, out)
    _check_fallback_out(func, x, dy, out)
    with np.errstate(over="ignore", invalid="ignore"):  # inf/NaN in x + bias, silent as in the fused kernel
        shifted = np.add(x, bias)
    args = (shifted,) if dy is None else (shifted, dy)
    return ufunc(*args, out=out, **kwargs)


def _kernels():
    return ufuncs._kernels


def gelu(x, approximate="none", *, bias=None, out=None, **ufunc_kwargs):
    """GELU(x) elementwise, or GELU(x + bias) in one pass with `bias` running along the last axis.

    approximate: "none" (exact, x*Phi(x)), "tanh" (0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)))) or
    "sigmoid" (x*sigmoid(1.702x)). out=x works in place without temporary memory. Other keywords go to
    the ufunc (where=, dtype=, casting=, ...). Scalars give scalars; integers give float64 like np.exp.
    """
    if type(x) is _NDARRAY and bias is None and not ufunc_kwargs and type(approximate) is str:
        # the common call, straight to the ufunc: any dtype it has no loop for raises TypeError and takes the
        # checks below, which name it; out positional parses faster
        f = _FORWARD.get(approximate)
        if f is not None:
            try:
                if out is None:
                    return f(x)
                if type(out) is _NDARRAY:
                    return f(x, out)
            except TypeError:
                pass
    fwd, _ = _variant(approximate)
    _check_real("gelu", "x", x)
    return _call("gelu", fwd, _INDEX[approximate], x, None, bias, out, ufunc_kwargs)


def gelu_grad(x, grad_output=None, approximate="none", *, bias=None, out=None, **ufunc_kwargs):
    """grad_output * GELU'(x) elementwise (GELU'(x) itself when grad_output is None); with `bias`, the
    gradient at x + bias."""
    if bias is None and not ufunc_kwargs and type(x) is np.ndarray and x.dtype in _FLOATS and (
            grad_output is None or (type(grad_output) is np.ndarray and grad_output.dtype in _FLOATS)):
        pair = VARIANTS.get(approximate) if type(approximate) is str else None
        if pair is not None and (out is None or type(out) is np.ndarray):
            dy = _FLOATS[x.dtype] if grad_output is None else grad_output
            return pair[1](x, dy) if out is None else pair[1](x, dy, out)
    fwd, grad = _variant(approximate, "gelu_grad")
    dtype = _check_real("gelu_grad", "x", x)
    if grad_output is None:
        # a 0-d one of x's own float type keeps the result dtype (and bfloat16 has no weak-scalar rules);
        # integers and bool one of the float type gelu gives them (int8: float16, as np.exp), objects that
        # handle ufuncs themselves a Python 1.0
        if dtype is not None and dtype.kind in "biu":
            dtype = fwd.resolve_dtypes((dtype, None))[1]
        grad_output = np.ones((), dtype) if dtype is not None and dtype in _BIAS_CODES else 1.0
    else:
        _check_real("gelu_grad", "grad_output", grad_output)
    return _call("gelu_grad", grad, _INDEX[approximate], x, grad_output, bias, out, ufunc_kwargs)


_FORWARD = {k: v[0] for k, v in VARIANTS.items()}
_NDARRAY = np.ndarray

# dtypes of the fast path in gelu/gelu_grad, each with the 0-d one that stands for a missing grad_output
_FLOATS = {np.dtype(t): np.ones((), t) for t in (np.float16, np.float32, np.float64)}
for _a in _FLOATS.values():
    _a.flags.writeable = False


def _kernel_modules():
    return [m for name, m in sys.modules.items() if name.startswith("fastgelu._kernels_") and m is not None]


def set_num_threads(n):
    """Use at most n threads per call in every thread of this process (default: OpenMP's own limit,
    OMP_NUM_THREADS or threadpoolctl)."""
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"set_num_threads: n must be >= 1, got {n}")
    for m in _kernel_modules():
        m._set_threads(n)


def get_num_threads():
    """Threads a large call from this thread would use now: OpenMP's limit (OMP_NUM_THREADS,
    threadpoolctl), set_num_threads, the CPUs this process may use (affinity mask, cgroup CPU quota), and
    fewer for a while when other processes hold the cores (parallel calls ran late)."""
    return ufuncs._kernels._max_threads()


def get_config():
    from . import __version__, _dispatch, _threads
    return {
        "version": __version__,
        "isa": ufuncs.ISA,
        "isa_available": _dispatch.available(),
        "isa_built": _dispatch.built(),
        "float32": (f"float32 arithmetic, {ufuncs._kernels.F32_SIMD}" if ufuncs._kernels.F32_SIMD else
                    "computed in double, rounded once"),
        "openmp": ufuncs._kernels.OPENMP,
        "build": "parallel (OpenMP)" if ufuncs._kernels.OPENMP else
                 "SERIAL: built without OpenMP, every call runs on one thread (rebuild with an OpenMP compiler)",
        "num_threads": get_num_threads(),
        "threads_from": _threads.explain(ufuncs._kernels._backoff()),
        "numpy": np.__version__,
    }


def show_config():
    for key, value in get_config().items():
        if isinstance(value, list):
            value = ", ".join(value)
        print(f"{key:>14}: {value}")


# ---- gated GELU: GELU(gate) * up ------------------------------------------------------------------------

# approximate= -> (gated forward ufunc, gated gradient ufunc)
GATED = _by_variant("_mul", "_mul_grad")


def _gated(approximate, who):
    return _lookup(GATED, approximate, who)


def _call_gated(ufunc, args, out, kwargs):
    if _torch_bridge.any_tensor(*args, out):
        return _torch_bridge.call(lambda *a, out: _call_gated(ufunc, a, out, kwargs), args, out)
    return ufunc(*args, **kwargs) if out is None else ufunc(*args, out=out, **kwargs)


def gelu_mul(gate, up, approximate="none", *, out=None, **ufunc_kwargs):
    """GELU(gate) * up elementwise in one pass (gated GELU, "GeGLU"), broadcasting like a ufunc.

    approximate: "none", "tanh" or "sigmoid" as for `gelu`. out=gate or out=up works in place without
    temporary memory. Other keywords go to the ufunc (where=, dtype=, casting=, ...).
    """
    if type(gate) is _NDARRAY and type(up) is _NDARRAY and not ufunc_kwargs and type(approximate) is str:
        pair = GATED.get(approximate)
        if pair is not None and (out is None or type(out) is _NDARRAY):
            try:
                return pair[0](gate, up) if out is None else pair[0](gate, up, out)
            except TypeError:  # no loop for these dtypes: the checks below name the argument
                pass
    fwd, _ = _gated(approximate, "gelu_mul")
    _check_real("gelu_mul", "gate", gate)
    _check_real("gelu_mul", "up", up)
    out = _check_out("gelu_mul", out, 1)
    return _call_gated(fwd, (gate, up), out, ufunc_kwargs)


def gelu_mul_grad(gate, up, grad_output, approximate="none", *, out=None, **ufunc_kwargs):
    """The gradients of gelu_mul in one pass: (dgate, dup) = (dy * up * GELU'(gate), dy * GELU(gate)) with
    dy = grad_output. out: None or a tuple (dgate_out, dup_out), either of them None."""
    _, grad = _gated(approximate, "gelu_mul_grad")
    _check_real("gelu_mul_grad", "gate", gate)
    _check_real("gelu_mul_grad", "up", up)
    _check_real("gelu_mul_grad", "grad_output", grad_output)
    out = _check_out("gelu_mul_grad", out, 2)
    return _call_gated(grad, (gate, up, grad_output), out, ufunc_kwargs)


def geglu(x, approximate="none", *, axis=-1, out=None, **ufunc_kwargs):
    """GELU(gate) * up with gate and up the first and second halves of x along `axis` (vLLM/sglang's
    `gelu_and_mul` order); the result has half x's length along that axis. An odd length is a ValueError."""
    _gated(approximate, "geglu")
    x = _as_splittable("geglu", x)
    _check_real("geglu", "x", x)
    g, u, _ = _halves("geglu", x, axis)
    return gelu_mul(x[g], x[u], approximate, out=out, **ufunc_kwargs)


def geglu_grad(x, grad_output, approximate="none", *, axis=-1, out=None):
    """The gradient of geglu for x: (dgate, dup) written into the two halves of one array shaped like x
    (`out`, or a new one), in one pass."""
    grad = _gated(approximate, "geglu_grad")[1]
    x = _as_splittable("geglu_grad", x)
    _check_real("geglu_grad", "x", x)
    _check_real("geglu_grad", "grad_output", grad_output)
    g, u, _ = _halves("geglu_grad", x, axis)
    if out is None:
        if type(x) is not np.ndarray:
            raise TypeError("geglu_grad: x must be a NumPy array (or give out=)")
        out = np.empty(x.shape, _grad_dtype(grad, x, grad_output))
    elif not isinstance(out, np.ndarray):
        raise TypeError(f"geglu_grad: out must be a NumPy array shaped like x; got {type(out).__name__}")
    if out.shape != np.shape(x):
        raise ValueError(f"geglu_grad: out must have x's shape {np.shape(x)}; got {out.shape}")
    if np.shares_memory(out, x):
        raise ValueError("geglu_grad: out must not share memory with x (each half is read by both outputs)")
    gelu_mul_grad(x[g], x[u], grad_output, approximate, out=(out[g], out[u]))
    return out
