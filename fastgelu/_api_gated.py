"""The gated calls: gelu_mul and gelu_mul_grad (GELU(gate) * up and its gradients, in one pass each), geglu
and geglu_grad (the same on the two halves of one array). Variant choice as in _api.py; the argument checks
are _args.py's."""
import numpy as np

from . import _torch_bridge
from ._api import _NDARRAY, _by_variant, _lookup
from ._args import _as_splittable, _check_out, _check_real, _grad_dtype, _halves

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
