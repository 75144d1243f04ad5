"""Argument checks of the NumPy API (fastgelu._api): each error names the function and the argument, and
comes before anything is written or allocated."""
import operator

import numpy as np

from . import ufuncs


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
               for name, code in ufuncs._kernels.DTYPE_CODES.items()
               if name != "bfloat16" or ufuncs.BFLOAT16 is not None}


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


def _grad_dtype(grad, x, grad_output):
    """The dtype the gated gradient ufunc gives for halves of x and grad_output (integers and bool: a float,
    as for geglu); a 0-d or scalar grad_output keeps x's float type."""
    dy = x.dtype if np.ndim(grad_output) == 0 else np.asarray(grad_output).dtype
    try:
        return grad.resolve_dtypes((x.dtype, x.dtype, dy, None, None))[3]
    except TypeError:   # no loop for this mix: the ufunc call names the problem
        return np.result_type(x, grad_output)
