"""GELU as a layer object, the shape of torch.nn.GELU / lucid.nn.GELU, for NumPy code that does its own
backpropagation: ``y = layer(x)`` (or ``layer.forward(x)``) and later ``dx = layer.backward(dy)``.

All numerics are fastgelu.gelu / fastgelu.gelu_grad (GeGLU: gelu_mul, geglu and their gradients); this module only keeps the state a backward pass needs.
"""
import operator

import numpy as np

from ._api import _variant, gelu, gelu_grad
from ._api_gated import _gated, geglu, geglu_grad, gelu_mul, gelu_mul_grad


def _is_floating(dtype):
    """float16/32/64 (and longdouble) or ml_dtypes.bfloat16: the dtypes a result can be written back into."""
    return np.issubdtype(dtype, np.floating) or dtype.name == "bfloat16"


def _sum_to(grad, shape):
    """A gradient in the broadcast shape summed back to the shape of the input it belongs to (a gate or up
    that broadcast in forward: each of its elements was used once per copy), as autograd does."""
    if np.shape(grad) == tuple(shape):
        return grad
    lead = np.ndim(grad) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and grad.shape[lead + i] != 1)
    dtype = np.dtype(grad.dtype)
    acc = np.float32 if dtype.itemsize == 2 else dtype   # float16/bfloat16 sums accumulate in float32
    return np.sum(grad, axis=axes, dtype=acc).astype(dtype, copy=False).reshape(shape)


class _Layer:
    """What the layers share: the inputs forward saved for backward, clear() and the repr."""

    _saved = None
    _forward_form = "forward"     # how backward's error message names the forward call

    def __call__(self, *args):
        return self.forward(*args)

    def _inputs(self):
        """The inputs of the last forward; RuntimeError when there was none."""
        if self._saved is None:
            raise RuntimeError(f"{type(self).__name__}.backward called before forward: no input is saved. Call "
                               f"the layer (or {self._forward_form}) first; backward(grad_output) then returns "
                               f"{self._gradient}.")
        return self._saved

    def clear(self):
        """Drop the inputs saved for backward (frees them when nothing else holds them)."""
        self._saved = None

    def __repr__(self):
        return f"{type(self).__name__}({self.extra_repr()})"


class GELU(_Layer):
    """Gaussian Error Linear Unit layer, ``GELU(x) = x * Phi(x)``, for NumPy code doing its own backpropagation.

    Shaped like ``torch.nn.GELU``: ``y = layer(x)`` (or ``layer.forward(x)``), then
    ``dx = layer.backward(dy)``.

    Parameters
    ----------
    approximate : {"none", "tanh", "sigmoid"}, optional
        "none" is the exact x*Phi(x); "tanh" is 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))) (GPT-2);
        "sigmoid" is x*sigmoid(1.702x). Default "none".
    inplace : bool, optional
        Write the result into the input array and return that array (it must be a writable NumPy array
        of a floating dtype: float16, float32, float64 or bfloat16). Default False.

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms.

    See Also
    --------
    fastgelu.gelu, fastgelu.gelu_grad : the functions the layer calls.
    fastgelu.torch.GELU : the PyTorch module.

    Notes
    -----
    ``forward`` remembers its input so that ``backward(grad_output)`` can return
    ``grad_output * GELU'(x)``; only the last forward's input is kept.

    * Out of place (the default) keeps a *reference* to the input, with no copy. The caller must not
      modify that array between forward and backward (nothing checks it: unlike PyTorch there is no
      version counter), or backward computes the gradient at the modified values.
    * In place overwrites the input, and GELU cannot be undone (it is not monotonic), so forward first
      saves a *copy* of the input. ``inplace=True`` therefore reuses the caller's buffer for the result but
      allocates one input-sized copy per call: it saves no memory when a backward pass follows, and it
      costs an extra copy when none does. Use it when the caller needs the result in that very buffer.

    The saved input is held until the next forward; ``clear()`` drops it.

    Examples
    --------
    >>> import numpy as np, fastgelu
    >>> m = fastgelu.GELU()
    >>> m(np.array([-2.0, -1.0, 0.0, 1.0, 2.0])).round(4)
    array([-0.0455, -0.1587,  0.    ,  0.8413,  1.9545])
    >>> m.backward(np.ones(5)).round(4)
    array([-0.0852, -0.0833,  0.5   ,  1.0833,  1.0852])
    >>> fastgelu.GELU("tanh", inplace=True)
    GELU(approximate='tanh', inplace=True)
    """

    _forward_form = "forward(x)"
    _gradient = "grad_output * GELU'(x)"

    def __init__(self, approximate="none", inplace=False):
        _variant(approximate, "GELU")
        self.approximate = approximate
        self.inplace = bool(inplace)

    def forward(self, x):
        """GELU(x); with inplace=True the result is written into x and x is returned.

        Raises
        ------
        TypeError
            x holds no real numbers (as for `fastgelu.gelu`); with inplace=True, x is not a NumPy array of
            a floating dtype.
        ValueError
            With inplace=True, x is read-only.
        """
        if not self.inplace:
            y = gelu(x, self.approximate)  # checks x before anything is remembered
            self._saved = x
            return y
        if not isinstance(x, np.ndarray):
            raise TypeError(f"GELU(inplace=True): x must be a NumPy array to write into; got "
                            f"{type(x).__name__}")
        if not _is_floating(x.dtype):
            raise TypeError(f"GELU(inplace=True): x must have a floating dtype (float16, float32, float64 or "
                            f"bfloat16) to hold the result; got {x.dtype}")
        if not x.flags.writeable:
            raise ValueError("GELU(inplace=True): x is read-only")
        saved = x.copy()  # the input is about to be overwritten; backward needs it
        gelu(x, self.approximate, out=x)
        self._saved = saved
        return x

    def backward(self, grad_output):
        """grad_output * GELU'(x), x being the input of the last forward, shaped like x (a grad_output that
        broadcast x to a larger shape gives the sum over the broadcast axes, as autograd does).

        Raises
        ------
        RuntimeError
            No forward has run since the layer was made or cleared.
        ValueError
            grad_output does not broadcast against x.
        TypeError
            grad_output holds no real numbers.
        """
        x = self._inputs()
        return _sum_to(gelu_grad(x, grad_output, self.approximate), np.shape(x))

    def extra_repr(self):
        """The arguments shown by repr()."""
        s = f"approximate={self.approximate!r}"
        return s + ", inplace=True" if self.inplace else s


class GeGLU(_Layer):
    """Gated GELU layer: ``GELU(gate) * up``, the activation of Gemma's and T5 v1.1's MLPs.

    ``y = layer(x)`` splits x into gate and up halves along `axis` (gate first); ``y = layer(gate, up)``
    takes them separately. ``backward(grad_output)`` then returns the gradient for what forward took: dx
    (shaped like x, both halves written in one pass) or the pair (dgate, dup), each shaped like its input (a
    gate or up that broadcast in forward gets its gradient summed over the broadcast axes, as in autograd).

    Parameters
    ----------
    approximate : {"none", "tanh", "sigmoid"}, optional
        As for GELU; Gemma uses "tanh". Default "none".
    axis : int, optional
        The axis x is split along in the one-argument form. Default -1.

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms.
    TypeError
        `axis` is not an integer.

    See Also
    --------
    fastgelu.geglu, fastgelu.gelu_mul : the functions the layer calls.
    fastgelu.torch.GeGLU : the PyTorch module.

    Notes
    -----
    Forward keeps references (no copies) to its inputs for backward: do not modify them in between.

    Examples
    --------
    >>> import numpy as np, fastgelu
    >>> m = fastgelu.GeGLU()
    >>> m(np.array([[1.0, -1.0, 2.0, 3.0]]))
    array([[ 1.68268949, -0.47596576]])
    >>> m.backward(np.ones((1, 2)))
    array([[ 2.16663094, -0.24994641,  0.84134475, -0.15865525]])
    """

    _gradient = "its gradient"

    def __init__(self, approximate="none", axis=-1):
        _gated(approximate, "GeGLU")
        self.approximate = approximate
        try:
            self.axis = operator.index(axis)
        except TypeError:
            raise TypeError(f"GeGLU: axis must be an integer; got {type(axis).__name__}") from None

    def forward(self, x, up=None):
        """GELU(gate) * up, from halves of x or from (gate, up).

        Raises
        ------
        ValueError
            x has an odd length along the axis, or gate and up do not broadcast together.
        TypeError
            An input holds no real numbers.
        """
        if up is None:
            y = geglu(x, self.approximate, axis=self.axis)
            self._saved = (x,)
        else:
            y = gelu_mul(x, up, self.approximate)
            self._saved = (x, up)
        return y

    def backward(self, grad_output):
        """dx for forward(x), or (dgate, dup) for forward(gate, up).

        Raises
        ------
        RuntimeError
            No forward has run since the layer was made or cleared.
        """
        saved = self._inputs()
        if len(saved) == 1:
            return geglu_grad(saved[0], grad_output, self.approximate, axis=self.axis)
        gate, up = saved
        dgate, dup = gelu_mul_grad(gate, up, grad_output, self.approximate)
        return _sum_to(dgate, np.shape(gate)), _sum_to(dup, np.shape(up))

    def extra_repr(self):
        """The arguments shown by repr()."""
        s = f"approximate={self.approximate!r}"
        return s + f", axis={self.axis}" if self.axis != -1 else s
