"""PyTorch front end: fastgelu's kernels as an autograd function and an nn.Module (CPU tensors).

    import fastgelu.torch as fgt
    y = fgt.gelu(x, approximate="none")      # differentiable, like torch.nn.functional.gelu
    layer = fgt.GELU(approximate="tanh")      # drop-in for torch.nn.GELU, also "sigmoid"

Forward and backward run fastgelu's ufuncs on NumPy views of the tensors' own memory: no copies, any strides
(transposed, sliced, expanded), float32, float64, float16 and bfloat16 (bfloat16 needs ml_dtypes:
``pip install "fastgelu[bf16]"``). The result has the input's layout (torch.empty_like).

Other devices and dtypes are refused with a TypeError rather than silently handed to PyTorch's own GELU: a
fallback would change the numbers (PyTorch's exact GELU loses accuracy for x < -3) and has no "sigmoid"
variant. Use torch.nn.GELU for CUDA/MPS tensors. First derivatives come from fastgelu's kernels; double backward
(create_graph=True) works too, its GELU'' term computed by torch operations. torch.compile graph-breaks
around these functions (the kernels run outside PyTorch).
"""
try:
    import torch
except ImportError as e:  # also when torch is installed but broken: say what is needed
    raise ImportError('fastgelu.torch needs PyTorch: pip install "fastgelu[torch]" (install the torch wheel '
                      f'for your platform first to choose CPU/CUDA builds). Import failed with: {e}') from e

from ._api import gelu as _gelu, gelu_grad as _gelu_grad
from ._api import _variant

__all__ = ["gelu", "GELU", "GELUFunction", "GELUGradFunction", "as_numpy"]

_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def _check_approximate(approximate):
    _variant(approximate, "fastgelu.torch")


def _check_tensor(t, name="input"):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"fastgelu.torch.gelu: {name} must be a torch.Tensor; got {type(t).__name__}")
    if t.device.type != "cpu":
        raise TypeError(f"fastgelu.torch.gelu: {name} is on {t.device}; fastgelu computes on CPU tensors only "
                        f"(use torch.nn.functional.gelu / torch.nn.GELU on other devices)")
    if t.dtype not in _DTYPES:
        raise TypeError(f"fastgelu.torch.gelu: {name} has dtype {t.dtype}; supported: float32, float64, "
                        f"float16, bfloat16")
    if t.layout != torch.strided:
        raise TypeError(f"fastgelu.torch.gelu: {name} has layout {t.layout}; only dense (strided) tensors")


def _bfloat16():
    try:
        import ml_dtypes
    except ImportError as e:
        raise TypeError('fastgelu.torch: bfloat16 tensors need ml_dtypes: pip install "fastgelu[bf16]"') from e
    return ml_dtypes.bfloat16


def as_numpy(t):
    """A NumPy array over the memory of CPU tensor `t`, same shape and strides, no copy.

    bfloat16 (which NumPy lacks) is viewed as int16 by torch and as ml_dtypes.bfloat16 by NumPy.
    Writing into the array writes into the tensor.
    """
    t = t.detach()
    if t.is_neg():  # a lazily negated view has no memory of its own to share: materialize it
        t = t.resolve_neg()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(_bfloat16())
    return t.numpy()


def _forward(x, approximate):
    y = torch.empty_like(x)  # keeps x's strides when x is dense (transposed, permuted), else contiguous
    _gelu(as_numpy(x), approximate, out=as_numpy(y))
    return y


class GELUFunction(torch.autograd.Function):
    """autograd.Function: apply(x, approximate). Saves x; backward is grad_output * GELU'(x)."""

    @staticmethod
    def forward(ctx, x, approximate):
        ctx.approximate = approximate
        ctx.save_for_backward(x)
        return _forward(x, approximate)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        if not ctx.needs_input_grad[0]:
            return None, None
        return GELUGradFunction.apply(x, grad_output, ctx.approximate), None


class GELUGradFunction(torch.autograd.Function):
    """apply(x, grad_output, approximate) = grad_output * GELU'(x) by fastgelu's kernel; differentiable, so
    double backward (create_graph=True: gradient penalties, Hessian-vector products) works. GELU''(x), needed
    only there, is written in torch operations (_second_derivative)."""

    @staticmethod
    def forward(ctx, x, grad_output, approximate):
        ctx.approximate = approximate
        ctx.save_for_backward(x, grad_output)
        g = grad_output
        if g.dtype != x.dtype or g.device != x.device:  # autograd gives the output's dtype; be safe anyway
            g = g.to(device=x.device, dtype=x.dtype)
        grad = torch.empty_like(x)
        _gelu_grad(as_numpy(x), as_numpy(g), approximate=ctx.approximate, out=as_numpy(grad))
        return grad

    @staticmethod
    def backward(ctx, gg):
        x, grad_output = ctx.saved_tensors
        dx = ddy = None
        if ctx.needs_input_grad[0]:
            dx = gg * grad_output * _second_derivative(x, ctx.approximate)
        if ctx.needs_input_grad[1]:
            ddy = GELUGradFunction.apply(x, gg, ctx.approximate)
        return dx, ddy, None


_SQRT_2_OVER_PI = 0.7978845608028654
_INV_SQRT_2PI = 0.3989422804014327
_TANH_C = 0.044715
_SIGMOID_C = 1.702


def _second_derivative(x, approximate):
    """GELU''(x) in torch operations (differentiable again). Only double backward uses it."""
    if approximate == "none":  # d/dx (Phi + x phi) = 2 phi - x^2 phi
        return _INV_SQRT_2PI * torch.exp(-0.5 * x * x) * (2.0 - x * x)
    if approximate == "tanh":  # y = x/2 (1 + tanh u), u = k (x + c x^3)
        u1 = _SQRT_2_OVER_PI * (1.0 + 3.0 * _TANH_C * x * x)
        u2 = 6.0 * _SQRT_2_OVER_PI * _TANH_C * x
        t = torch.tanh(_SQRT_2_OVER_PI * (x + _TANH_C * x * x * x))
        return (1.0 - t * t) * (u1 - x * t * u1 * u1 + 0.5 * x * u2)
    s = torch.sigmoid(_SIGMOID_C * x)  # y = x s(a x)
    return _SIGMOID_C * s * (1.0 - s) * (2.0 + _SIGMOID_C * x * (1.0 - 2.0 * s))


def gelu(input, approximate="none"):
    """GELU of a CPU tensor by fastgelu's kernels; differentiable. Like torch.nn.functional.gelu, plus
    approximate="sigmoid" (x*sigmoid(1.702x))."""
    _check_approximate(approximate)
    _check_tensor(input)
    if input.requires_grad and torch.is_grad_enabled():
        return GELUFunction.apply(input, approximate)
    return _forward(input, approximate)  # nothing to differentiate: skip autograd and keep no reference


class GELU(torch.nn.Module):
    """torch.nn.GELU with fastgelu's kernels (CPU). approximate: "none", "tanh" or "sigmoid"."""

    def __init__(self, approximate="none"):
        super().__init__()
        _check_approximate(approximate)
        self.approximate = approximate

    def forward(self, input):
        return gelu(input, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"
