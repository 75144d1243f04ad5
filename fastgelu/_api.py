"""The Python surface: variant choice and the calls gelu and gelu_grad (the gated calls are _api_gated.py's,
thread control and the configuration _api_config.py's; the argument checks are _args.py's, tensors go through
_torch_bridge.py). No numerics here: every element is computed by the ufuncs, which also supply out=, where=,
casting, broadcasting and __array_ufunc__ dispatch (dask, xarray)."""
import numpy as np

from . import _lists, _torch_bridge, ufuncs
from ._args import _BIAS_CODES, _check_bias, _check_fallback_out, _check_real, _fused_bias_ok


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
