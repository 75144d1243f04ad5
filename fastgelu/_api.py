"""The Python surface: variant choice, argument checks, and thread control. No numerics here: every
element is computed by the ufuncs, which also supply out=, where=, casting, broadcasting and
__array_ufunc__ dispatch (dask, xarray)."""
import operator
import sys

import numpy as np

from . import ufuncs

# approximate= -> (forward ufunc, gradient ufunc); the one place a variant is chosen
VARIANTS = {
    "none": (ufuncs.gelu, ufuncs.gelu_grad),
    "tanh": (ufuncs.gelu_tanh, ufuncs.gelu_tanh_grad),
    "sigmoid": (ufuncs.gelu_sigmoid, ufuncs.gelu_sigmoid_grad),
}


def _variant(approximate):
    try:
        return VARIANTS[approximate]
    except (KeyError, TypeError):
        raise ValueError(f"approximate must be one of 'none', 'tanh', 'sigmoid'; got {approximate!r}") from None


def _check_real(func, name, value):
    """TypeError naming the argument unless `value` holds real numbers (integer, bool or floating)."""
    dtype = getattr(value, "dtype", None)
    if dtype is None and not hasattr(value, "__array_ufunc__"):
        try:
            dtype = np.asarray(value).dtype
        except Exception as e:  # ragged lists and the like
            raise TypeError(f"{func}: {name} must be an array of real numbers; got {type(value).__name__}") from e
    if dtype is not None and np.dtype(dtype).kind not in "biuf":
        raise TypeError(f"{func}: {name} must hold real numbers (bool, integer or floating), got dtype {dtype}"
                        f" ({type(value).__name__})")


def gelu(x, approximate="none", *, out=None, **ufunc_kwargs):
    """GELU(x) elementwise.

    approximate: "none" (exact, x*Phi(x)), "tanh" (0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)))) or
    "sigmoid" (x*sigmoid(1.702x)). out=x works in place without temporary memory. Other keywords go to
    the ufunc (where=, dtype=, casting=, ...). Scalars give scalars; integers give float64 like np.exp.
    """
    fwd, _ = _variant(approximate)
    _check_real("gelu", "x", x)
    return fwd(x, out=out, **ufunc_kwargs)


def gelu_grad(x, grad_output=None, approximate="none", *, out=None, **ufunc_kwargs):
    """grad_output * GELU'(x) elementwise (GELU'(x) itself when grad_output is None)."""
    _, grad = _variant(approximate)
    _check_real("gelu_grad", "x", x)
    if grad_output is None:
        grad_output = 1.0  # a Python scalar: the result dtype follows x (NEP 50)
    else:
        _check_real("gelu_grad", "grad_output", grad_output)
    return grad(x, grad_output, out=out, **ufunc_kwargs)


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
    """Threads a large call from this thread would use now."""
    return ufuncs._kernels._max_threads()


def get_config():
    from . import __version__, _dispatch
    return {
        "version": __version__,
        "isa": ufuncs.ISA,
        "isa_available": _dispatch.available(),
        "isa_built": _dispatch.built(),
        "openmp": ufuncs._kernels.OPENMP,
        "num_threads": get_num_threads(),
        "numpy": np.__version__,
    }


def show_config():
    for key, value in get_config().items():
        if isinstance(value, list):
            value = ", ".join(value)
        print(f"{key:>14}: {value}")
