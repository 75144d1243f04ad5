"""The Python surface: variant choice, argument checks, and thread control. No numerics here: every
element is computed by the ufuncs, which also supply out=, where=, casting, broadcasting and
__array_ufunc__ dispatch (dask, xarray)."""
import operator
import sys

import numpy as np

from . import _lists, ufuncs

_K = ufuncs._kernels        # the dtype codes are the kernel module's (rendered from _lists.py)


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


def _dtype_of(func, name, value):
    """The dtype `value` would have as an array (None for objects that handle ufuncs themselves)."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        try:
            return np.dtype(dtype)
        except TypeError:  # a foreign .dtype (a torch tensor's, say): judge by the array NumPy would make
            dtype = None
    if hasattr(value, "__array_ufunc__") and not isinstance(value, np.ndarray):
        return None
    try:
        return np.asarray(value).dtype
    except Exception as e:  # ragged lists, failing __array__, ...
        raise TypeError(f"{func}: {name} must be an array of real numbers; got {type(value).__name__}") from e


def _check_real(func, name, value):
    """TypeError naming the argument unless `value` holds numbers fastgelu computes on: bool, integers,
    float16/32/64 and bfloat16."""
    dtype = _dtype_of(func, name, value)
    if dtype is None or dtype == ufuncs.BFLOAT16:
        return dtype
    if dtype.kind not in "biuf" or dtype.itemsize > 8:  # long double: no loop, and no safe cast
        raise TypeError(f"{func}: {name} must hold real numbers of at most double precision (bool, integer, "
                        f"float16/32/64 or bfloat16), got dtype {dtype} ({type(value).__name__})")
    return dtype


# dtypes the fused-bias kernel takes, by the code it expects
_BIAS_CODES = {(ufuncs.BFLOAT16 if name == "bfloat16" else np.dtype(name)): code
               for name, code in _K.DTYPE_CODES.items() if name != "bfloat16" or ufuncs.BFLOAT16 is not None}


def _check_bias(func, x, bias):
    _check_real(func, "bias", bias)
    xshape, bshape = np.shape(x), np.shape(bias)
    if len(xshape) == 0 or bshape != xshape[-1:]:
        want = f"({xshape[-1]},)" if xshape else "1-D, along a last axis (x is 0-d)"
        raise ValueError(f"{func}: bias must have shape {want} to run along the last axis of x; "
                         f"x has shape {tuple(xshape)}, bias has shape {tuple(bshape)}")


def _fused_bias_ok(x, bias, dy, out, kwargs):
    """Can the one-pass kernel take this call? Else NumPy does x + bias first (same values, one more pass)."""
    if kwargs or type(x) is not np.ndarray or type(bias) is not np.ndarray:
        return False
    code = _BIAS_CODES.get(x.dtype)
    if code is None or bias.dtype != x.dtype or not (x.flags.c_contiguous and bias.flags.c_contiguous):
        return False
    if dy is not None and not (type(dy) is np.ndarray and dy.dtype == x.dtype
                               and (dy.ndim == 0 or (dy.shape == x.shape and dy.flags.c_contiguous))):
        return False
    if out is not None:
        if type(out) is not np.ndarray or out.dtype != x.dtype or out.shape != x.shape \
                or not out.flags.c_contiguous:
            return False
        if np.shares_memory(out, bias):  # a bias row would be overwritten before later rows read it
            return False
        # in place over x or dy is fine (element i is read before it is written); a shifted overlap is not
        for a in (x, dy):
            if a is not None and a.ndim and np.shares_memory(out, a) and \
                    out.__array_interface__["data"][0] != a.__array_interface__["data"][0]:
                return False
    return True


def _check_fallback_out(func, x, dy, out):
    """The errors the ufunc would give about dy's and out's shapes, given before x + bias is allocated (a
    broadcast x of 2^31 elements would otherwise cost 8 GiB, then fail on out)."""
    shape = np.shape(x)
    if dy is not None:
        try:
            shape = np.broadcast_shapes(shape, np.shape(dy))
        except ValueError:
            raise ValueError(f"{func}: grad_output of shape {np.shape(dy)} does not broadcast against x of "
                             f"shape {np.shape(x)}") from None
    if out is None or not isinstance(out, np.ndarray):
        return
    try:
        fits = np.broadcast_shapes(shape, out.shape) == out.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{func}: out has shape {out.shape}; the result has shape {shape}")
    if not out.flags.writeable:
        raise ValueError(f"{func}: out is read-only")


def _is_tensor(a):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(a, torch.Tensor)


def _call_tensors(func, ufunc, index, x, dy, bias, out, kwargs):
    """PyTorch tensors: the ufunc runs on arrays over their memory and a tensor comes back, as torch's own
    __array_wrap__ would give (that hook predates NumPy 2's signature and NumPy warns when it is called)."""
    import torch
    arr = [np.asarray(a) if _is_tensor(a) else a for a in (x, dy, bias, out)]
    res = _call(func, ufunc, index, *arr, kwargs)
    if out is not None:
        return out
    return torch.from_numpy(np.asarray(res)) if _is_tensor(x) else res


def _call(func, ufunc, index, x, dy, bias, out, kwargs):
    if "torch" in sys.modules and any(_is_tensor(a) for a in (x, dy, bias, out)):
        return _call_tensors(func, ufunc, index, x, dy, bias, out, kwargs)
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


def _check_out(func, out, nout):
    """out as the ufunc takes it: None, an array (nout = 1), or a tuple of nout arrays/None."""
    if out is None:
        return None
    if nout == 1:
        if isinstance(out, tuple) and len(out) == 1:
            out = out[0]
        if out is not None and not hasattr(out, "__array_ufunc__"):
            raise TypeError(f"{func}: out must be an array (or None); got {type(out).__name__}")
        return out
    if not isinstance(out, (tuple, list)) or len(out) != nout:
        raise TypeError(f"{func}: out must be a tuple of {nout} arrays (or None); got {type(out).__name__}"
                        + (f" of length {len(out)}" if isinstance(out, (tuple, list)) else ""))
    for k, o in enumerate(out):
        if o is not None and not hasattr(o, "__array_ufunc__"):
            raise TypeError(f"{func}: out[{k}] must be an array (or None); got {type(o).__name__}")
    return tuple(out)


def _call_gated(ufunc, args, out, kwargs):
    outs = out if isinstance(out, tuple) else (out,)
    if "torch" in sys.modules and any(_is_tensor(a) for a in (*args, *outs)):
        import torch
        arrs = [np.asarray(a) if _is_tensor(a) else a for a in args]
        outs = tuple(np.asarray(o) if _is_tensor(o) else o for o in out) if isinstance(out, tuple) else \
            (np.asarray(out) if _is_tensor(out) else out)
        res = ufunc(*arrs, **kwargs) if outs is None else ufunc(*arrs, out=outs, **kwargs)
        if out is not None:
            return out
        wrap = (lambda r: torch.from_numpy(np.asarray(r))) if _is_tensor(args[0]) else (lambda r: r)
        return tuple(wrap(r) for r in res) if isinstance(res, tuple) else wrap(res)
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


def _halves(func, x, axis):
    """(index of the gate half, index of the up half, axis) of x split in two along `axis`."""
    shape = np.shape(x)
    try:
        ax = operator.index(axis)
    except TypeError:
        raise TypeError(f"{func}: axis must be an integer; got {type(axis).__name__}") from None
    if not shape:
        raise ValueError(f"{func}: x must have at least one dimension to split into gate and up; got a 0-d "
                         f"{type(x).__name__}")
    if not -len(shape) <= ax < len(shape):
        raise np.exceptions.AxisError(ax, len(shape), f"{func}: axis")
    ax %= len(shape)
    n = shape[ax]
    if n % 2:
        raise ValueError(f"{func}: x has odd length {n} along axis {axis}; the gate and up halves need an "
                         f"even length")
    lead = (slice(None),) * ax
    return lead + (slice(0, n // 2),), lead + (slice(n // 2, n),), ax


def _as_splittable(func, x):
    if hasattr(x, "shape") and hasattr(x, "__getitem__") and hasattr(x, "dtype"):
        return x
    _check_real(func, "x", x)
    return np.asarray(x)


def geglu(x, approximate="none", *, axis=-1, out=None, **ufunc_kwargs):
    """GELU(gate) * up with gate and up the first and second halves of x along `axis` (vLLM/sglang's
    `gelu_and_mul` order); the result has half x's length along that axis. An odd length is a ValueError."""
    _gated(approximate, "geglu")
    x = _as_splittable("geglu", x)
    _check_real("geglu", "x", x)
    g, u, _ = _halves("geglu", x, axis)
    return gelu_mul(x[g], x[u], approximate, out=out, **ufunc_kwargs)


def _grad_dtype(grad, x, grad_output):
    """The dtype the gated gradient ufunc gives for halves of x and grad_output (integers and bool: a float,
    as for geglu); a 0-d or scalar grad_output keeps x's float type."""
    dy = x.dtype if np.ndim(grad_output) == 0 else np.asarray(grad_output).dtype
    try:
        return grad.resolve_dtypes((x.dtype, x.dtype, dy, None, None))[3]
    except TypeError:   # no loop for this mix: the ufunc call names the problem
        return np.result_type(x, grad_output)


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
