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
    """GELU(x) elementwise, or GELU(x + bias) in one pass.

    A NumPy ufunc call underneath (`fastgelu.ufuncs.gelu`, `gelu_tanh` or `gelu_sigmoid`): broadcasting,
    ``out=``, ``where=``, ``dtype=`` and ``casting=`` work as for `numpy.exp`, and dask or xarray arrays are
    handled by their ``__array_ufunc__``. Large calls run on OpenMP threads with the GIL released.

    Parameters
    ----------
    x : array_like
        Real numbers: float16, float32, float64, bfloat16 (with ml_dtypes), integers or bool. Integers and
        bool are computed in the float type `numpy.exp` gives them (bool, int8, uint8: float16; int16,
        uint16: float32; wider: float64).
    approximate : {"none", "tanh", "sigmoid"}, optional
        The form: "none" is the exact x * Phi(x) (Phi the standard normal CDF; BERT, ViT), "tanh" is
        0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (GPT-2), "sigmoid" is x * sigmoid(1.702 x) (CLIP's
        QuickGELU). Default "none".
    bias : array_like, optional
        A 1-d array as long as x's last axis: GELU(x + bias) is computed in one pass (a Linear layer's bias,
        then its GELU), with the bits of ``gelu(x + bias)``.
    out : ndarray, optional
        Where to write the result; ``out=x`` works in place without temporary memory.
    **ufunc_kwargs
        Other keywords of a ufunc call (``where=``, ``dtype=``, ``casting=``, ``order=``, ...).

    Returns
    -------
    ndarray or scalar
        GELU(x), of x's float type; `out` itself when given; a NumPy scalar for a scalar x.

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms; `bias` is not 1-d along x's last axis; `out` has the
        wrong shape or is read-only.
    TypeError
        x or `bias` holds no real numbers (complex, strings, objects, a ragged list) or long double, for
        which no kernel exists; `out` is not an array, or the result cannot be cast to its dtype.

    See Also
    --------
    gelu_grad : its gradient.
    GELU : a layer object that keeps the input for the backward pass.
    fastgelu.torch.gelu : the same on PyTorch tensors, differentiable.

    Notes
    -----
    Accuracy: within 2 ULP in float32 and 4 ULP in float64, correctly rounded in float16 and bfloat16
    (the contract and the measured maxima: docs/accuracy.md).

    Examples
    --------
    >>> import numpy as np, fastgelu
    >>> x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    >>> fastgelu.gelu(x).round(4)
    array([-0.0455, -0.1587,  0.    ,  0.8413,  1.9545])
    >>> fastgelu.gelu(x, approximate="tanh").round(4)
    array([-0.0454, -0.1588,  0.    ,  0.8412,  1.9546])

    In place, and with a bias along the last axis:

    >>> x32 = x.astype(np.float32)
    >>> fastgelu.gelu(x32, out=x32) is x32
    True
    >>> fastgelu.gelu(np.array([[0.5, -0.5]]), bias=np.array([0.5, 0.5])).round(4)
    array([[0.8413, 0.    ]])

    Integers give the float type `numpy.exp` gives them:

    >>> fastgelu.gelu(np.arange(3, dtype=np.int8))
    array([0.    , 0.8413, 1.954 ], dtype=float16)
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
    """grad_output * GELU'(x) elementwise: the gradient of `gelu` at x.

    A ufunc call underneath (`fastgelu.ufuncs.gelu_grad`, `gelu_tanh_grad` or `gelu_sigmoid_grad`) with
    NumPy's broadcasting and keywords, as for `gelu`.

    Parameters
    ----------
    x : array_like
        The input GELU was applied to (not its output). Real numbers, as for `gelu`.
    grad_output : array_like, optional
        The gradient flowing back, dy; broadcasts against x. None (the default) gives GELU'(x) itself.
    approximate : {"none", "tanh", "sigmoid"}, optional
        The form GELU was computed in (see `gelu`). Default "none".
    bias : array_like, optional
        A 1-d array as long as x's last axis: the gradient at x + bias, in one pass.
    out : ndarray, optional
        Where to write the result; ``out=x`` or ``out=grad_output`` works in place.
    **ufunc_kwargs
        Other keywords of a ufunc call (``where=``, ``dtype=``, ``casting=``, ...).

    Returns
    -------
    ndarray or scalar
        grad_output * GELU'(x) in the float type of x and grad_output; `out` itself when given.

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms; x, grad_output and `out` do not broadcast together;
        `bias` is not 1-d along x's last axis; `out` is read-only.
    TypeError
        x, grad_output or `bias` holds no real numbers or long double; `out` is not an array, or the result
        cannot be cast to its dtype.

    See Also
    --------
    gelu : the forward.
    gelu_mul_grad : the gradients of the gated form.

    Notes
    -----
    GELU'(x) is within 2 ULP in float32; a grad_output other than 1 adds the product's rounding
    (docs/accuracy.md states the bound and the measured maxima).

    Examples
    --------
    >>> import numpy as np, fastgelu
    >>> x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    >>> fastgelu.gelu_grad(x).round(4)
    array([-0.0852, -0.0833,  0.5   ,  1.0833,  1.0852])
    >>> fastgelu.gelu_grad(x, np.full(5, 2.0)).round(4)
    array([-0.1705, -0.1666,  1.    ,  2.1666,  2.1705])
    """
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


_threads_setting = None     # what set_num_threads set last: an int, or None for the default


class ThreadsSetting:
    """What `set_num_threads` returns: the setting is made already; used in a ``with`` statement, leaving
    the block puts back the setting that was in force before the call."""

    def __init__(self, n, previous):
        self.n, self.previous = n, previous

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _apply_threads(self.previous)

    def __repr__(self):
        return f"<fastgelu threads setting: {self.n} (was {self.previous})>"


def _apply_threads(n):
    global _threads_setting
    _threads_setting = n
    for m in _kernel_modules():
        m._set_threads(0 if n is None else n)


def set_num_threads(n):
    """Use at most `n` threads per call, in every thread of this process; None goes back to the default.

    Parameters
    ----------
    n : int or None
        The thread count (>= 1). It replaces OpenMP's default, so it may exceed ``OMP_NUM_THREADS``; a
        thread's own OpenMP limit set below that default (``threadpoolctl.threadpool_limits``) still caps
        that thread. None: the default again, the smallest of OpenMP's limit (``OMP_NUM_THREADS``,
        threadpoolctl) and the CPUs the process may use (affinity mask, cgroup CPU quota).

    Returns
    -------
    ThreadsSetting
        The setting is made when the call returns. Used as a context manager, the previous setting comes
        back when the ``with`` block ends.

    Raises
    ------
    TypeError
        `n` is neither an integer nor None.
    ValueError
        `n` is below 1.

    See Also
    --------
    get_num_threads : the threads a large call would use now.

    Notes
    -----
    Results do not depend on the thread count. Even with a setting, calls may use fewer threads while
    other processes hold the cores (docs/threads.md).

    Examples
    --------
    >>> import fastgelu
    >>> with fastgelu.set_num_threads(1):
    ...     fastgelu.get_num_threads()
    1
    >>> _ = fastgelu.set_num_threads(1)      # until changed
    >>> _ = fastgelu.set_num_threads(None)   # the default again
    """
    if n is not None:
        try:
            n = operator.index(n)
        except TypeError:
            raise TypeError(f"set_num_threads: n must be an integer or None; got {type(n).__name__}") from None
        if n < 1:
            raise ValueError(f"set_num_threads: n must be >= 1, got {n}")
    previous = _threads_setting
    _apply_threads(n)
    return ThreadsSetting(n, previous)


def get_num_threads():
    """The number of threads a large call from this thread would use now.

    The smallest of OpenMP's limit (``OMP_NUM_THREADS``, threadpoolctl) or `set_num_threads`'s setting, the
    CPUs this process may use (affinity mask, cgroup CPU quota), and, for a while, fewer when other
    processes hold the cores. ``get_config()["threads_from"]`` says which of these decided.

    Returns
    -------
    int
        At least 1 (1 in a build without OpenMP).

    Examples
    --------
    >>> import fastgelu
    >>> fastgelu.get_num_threads() >= 1
    True
    """
    return ufuncs._kernels._max_threads()


def get_config():
    """What this installation runs: version, kernel build, OpenMP and threads.

    Returns
    -------
    dict
        ``version``; ``isa``, the kernel build this CPU runs ("avx512", "avx2" or "generic", chosen at import;
        ``FASTGELU_ISA`` overrides it); ``isa_available``, the builds this CPU can run; ``isa_built``, the
        builds installed; ``float32``, how float32 is computed (SIMD width, or in double); ``openmp`` (bool)
        and ``build`` ("parallel (OpenMP)" or a SERIAL notice); ``num_threads`` and ``threads_from``, what
        `get_num_threads` gives and why; ``numpy``, NumPy's version.

    See Also
    --------
    show_config : the same, printed.

    Examples
    --------
    >>> import fastgelu
    >>> config = fastgelu.get_config()
    >>> config["isa"] in config["isa_available"]
    True
    """
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
    """Print `get_config`, one line a key (what ``fastgelu info`` prints first).

    Examples
    --------
    >>> import fastgelu
    >>> fastgelu.show_config()  # doctest: +ELLIPSIS
           version: ...
               isa: ...
    """
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
    """GELU(gate) * up elementwise in one pass: the gated GELU (GeGLU) of Gemma and T5 v1.1.

    A ufunc call underneath (`fastgelu.ufuncs.gelu_mul`, `gelu_tanh_mul` or `gelu_sigmoid_mul`): gate and
    up broadcast against each other, NumPy's keywords work as for `gelu`.

    Parameters
    ----------
    gate : array_like
        The input of GELU. Real numbers, as for `gelu`.
    up : array_like
        The factor.
    approximate : {"none", "tanh", "sigmoid"}, optional
        The form of GELU (see `gelu`); Gemma uses "tanh". Default "none".
    out : ndarray, optional
        Where to write the result; ``out=gate`` or ``out=up`` works in place without temporary memory.
    **ufunc_kwargs
        Other keywords of a ufunc call (``where=``, ``dtype=``, ``casting=``, ...).

    Returns
    -------
    ndarray or scalar
        GELU(gate) * up; `out` itself when given.

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms; gate, up and `out` do not broadcast together; `out`
        is read-only.
    TypeError
        gate or up holds no real numbers or long double; `out` is not an array, or the result cannot be cast
        to its dtype.

    See Also
    --------
    geglu : the same on the two halves of one array.
    gelu_mul_grad : its gradients.

    Notes
    -----
    float32 results are within 3 ULP of the exact product (docs/accuracy.md), also where GELU(gate) alone
    underflows and up is huge.

    Examples
    --------
    >>> import numpy as np, fastgelu
    >>> fastgelu.gelu_mul(np.array([1.0, -1.0]), np.array([2.0, 3.0])).round(4)
    array([ 1.6827, -0.476 ])
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
    """The gradients of `gelu_mul`, both in one pass: (dgate, dup) = (dy * up * GELU'(gate), dy * GELU(gate)).

    Parameters
    ----------
    gate, up : array_like
        The inputs of the forward call.
    grad_output : array_like
        The gradient flowing back, dy; gate, up and grad_output broadcast together.
    approximate : {"none", "tanh", "sigmoid"}, optional
        The form of GELU. Default "none".
    out : tuple of two ndarrays (or None), optional
        ``(dgate_out, dup_out)``, either of them None; ``out=(gate, up)`` works in place.
    **ufunc_kwargs
        Other keywords of a ufunc call (``where=``, ``dtype=``, ``casting=``, ...).

    Returns
    -------
    dgate, dup : ndarray
        Both in the broadcast shape of the three inputs (summing a broadcast input's gradient back to its
        shape is the caller's step, as `GeGLU.backward` does).

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms; the inputs and outputs do not broadcast together; an
        output is read-only.
    TypeError
        An input holds no real numbers or long double; `out` is not a tuple of two arrays or None, or a
        result cannot be cast to its output's dtype.

    See Also
    --------
    gelu_mul : the forward.
    geglu_grad : the gradient of `geglu`, into one array.

    Examples
    --------
    >>> import numpy as np, fastgelu
    >>> dgate, dup = fastgelu.gelu_mul_grad(np.array([1.0, -1.0]), np.array([2.0, 3.0]), np.ones(2))
    >>> dgate.round(4), dup.round(4)
    (array([ 2.1666, -0.2499]), array([ 0.8413, -0.1587]))
    """
    _, grad = _gated(approximate, "gelu_mul_grad")
    _check_real("gelu_mul_grad", "gate", gate)
    _check_real("gelu_mul_grad", "up", up)
    _check_real("gelu_mul_grad", "grad_output", grad_output)
    out = _check_out("gelu_mul_grad", out, 2)
    return _call_gated(grad, (gate, up, grad_output), out, ufunc_kwargs)


def geglu(x, approximate="none", *, axis=-1, out=None, **ufunc_kwargs):
    """GELU(gate) * up with gate and up the first and second halves of x along `axis`, in one pass.

    The order of vLLM's and sglang's ``gelu_and_mul``: gate first. One matrix product can then give both
    halves (``x @ [W_gate | W_up]``).

    Parameters
    ----------
    x : array_like
        Real numbers with an even length along `axis`.
    approximate : {"none", "tanh", "sigmoid"}, optional
        The form of GELU. Default "none".
    axis : int, optional
        The axis split in two. Default -1.
    out : ndarray, optional
        Where to write the result (half x's length along `axis`).
    **ufunc_kwargs
        Other keywords of a ufunc call.

    Returns
    -------
    ndarray
        GELU(gate) * up, x's shape with half its length along `axis`.

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms; x is 0-d or has an odd length along `axis`; `out` has
        the wrong shape or is read-only.
    numpy.exceptions.AxisError
        `axis` is out of range (a subclass of ValueError and IndexError).
    TypeError
        `axis` is not an integer; x holds no real numbers or long double; `out` is not an array.

    See Also
    --------
    gelu_mul : gate and up as two arrays.
    geglu_grad : its gradient.

    Examples
    --------
    >>> import numpy as np, fastgelu
    >>> fastgelu.geglu(np.array([[1.0, -1.0, 2.0, 3.0]])).round(4)
    array([[ 1.6827, -0.476 ]])
    """
    _gated(approximate, "geglu")
    x = _as_splittable("geglu", x)
    _check_real("geglu", "x", x)
    g, u, _ = _halves("geglu", x, axis)
    return gelu_mul(x[g], x[u], approximate, out=out, **ufunc_kwargs)


def geglu_grad(x, grad_output, approximate="none", *, axis=-1, out=None):
    """The gradient of `geglu` for x: dgate and dup written into the two halves of one array shaped like x.

    Parameters
    ----------
    x : array_like
        The input of the forward call.
    grad_output : array_like
        The gradient flowing back, shaped like `geglu`'s result (or broadcasting to it).
    approximate : {"none", "tanh", "sigmoid"}, optional
        The form of GELU. Default "none".
    axis : int, optional
        The axis x was split along. Default -1.
    out : ndarray, optional
        An array shaped like x, sharing no memory with it (each half of x is read for both halves of the
        result).

    Returns
    -------
    ndarray
        Shaped like x: dgate in the first half along `axis`, dup in the second; `out` itself when given.

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms; x is 0-d or has an odd length along `axis`; `out` has
        another shape than x, or shares memory with it; grad_output does not broadcast.
    numpy.exceptions.AxisError
        `axis` is out of range.
    TypeError
        `axis` is not an integer; x or grad_output holds no real numbers or long double; `out` is not a NumPy
        array, or none is given for an x that is not one.

    Examples
    --------
    >>> import numpy as np, fastgelu
    >>> fastgelu.geglu_grad(np.array([[1.0, -1.0, 2.0, 3.0]]), np.ones((1, 2))).round(4)
    array([[ 2.1666, -0.2499,  0.8413, -0.1587]])
    """
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
