"""PyTorch front end: fastgelu's kernels as PyTorch operators (``torch.ops.fastgelu.*``), a function and an
nn.Module (CPU tensors).

    import fastgelu.torch as fgt
    y = fgt.gelu(x, approximate="none")      # differentiable, like torch.nn.functional.gelu
    fgt.gelu_(x, "tanh")                      # in place, returns x
    fgt.gelu(x, out=buf)                      # into buf, returns buf
    layer = fgt.GELU(approximate="tanh")      # drop-in for torch.nn.GELU, also "sigmoid"
    y = fgt.gelu_mul(gate, up, "tanh")        # GELU(gate) * up in one pass (GeGLU); fgt.geglu(x, dim=-1)
    layer = fgt.GeGLU("tanh")                 # halves of the input along dim, gate first

The operators, registered with torch.library so that every PyTorch tracer sees them (jit.trace/script, fx,
torch.compile, torch.export, torch.func, both ONNX exporters):

    fastgelu::gelu(Tensor x, str approximate='none') -> Tensor
    fastgelu::gelu_out(Tensor x, Tensor(a!) out, str approximate='none') -> ()
    fastgelu::gelu_(Tensor(a!) x, str approximate='none') -> ()
    fastgelu::gelu_backward(Tensor grad_output, Tensor x, str approximate='none') -> Tensor
    fastgelu::gelu_mul(Tensor gate, Tensor up, str approximate='none') -> Tensor
    fastgelu::gelu_mul_backward(Tensor grad_output, Tensor gate, Tensor up, str approximate='none')
        -> (Tensor, Tensor)

Each has a fake (meta) implementation, and all but gelu_out a vmap rule; gelu and gelu_backward have
autograd formulas for reverse and forward mode, gelu_backward's own derivative using GELU'' in torch
operations, so double backward works. gelu_ and gelu_out refuse to be differentiated. The CPU kernels
run fastgelu's ufuncs on NumPy views of the tensors' own memory: no copies, any strides, float32, float64, float16 and bfloat16 (bfloat16 needs ml_dtypes: ``pip install
"fastgelu[bf16]"``). The result has the input's layout (torch.empty_like).

Other devices and dtypes are refused with a TypeError rather than silently handed to PyTorch's own GELU: a
fallback would change the numbers (PyTorch's exact GELU loses accuracy for x < -3) and has no "sigmoid"
variant. Use torch.nn.GELU for CUDA/MPS tensors. ONNX: ``torch.onnx.export(model, args)`` works as it is
(the operators decompose into PyTorch's GELU, sigmoid and mul at export); ``onnx_translation_table()`` gives
the dynamo exporter a translation of its own, and the legacy exporter's symbolic is registered on import.
"""
try:
    import torch
except ImportError as e:  # also when torch is installed but broken: say what is needed
    raise ImportError('fastgelu.torch needs PyTorch: pip install "fastgelu[torch]" (install the torch wheel '
                      f'for your platform first to choose CPU/CUDA builds). Import failed with: {e}') from e


if not hasattr(torch.library, "register_vmap"):  # torch.library's Python-operator API is complete in 2.5
    raise ImportError(f"fastgelu.torch needs PyTorch >= 2.5 (torch.library.register_vmap); found "
                      f"{torch.__version__}. Upgrade torch, or use torch.nn.GELU / torch.nn.functional.gelu.")

from ._api import VARIANTS
from ._torch_common import (_DTYPES, _check_approximate, _check_dim, _check_tensor, _dim_arg, _functorch_active,
                            _name_intra_op_pool, _untraced, _unwatched, _view, as_numpy)
from ._torch_gated import _GELUMul, _check_pair, _gelu_mul_cpu, _gelu_mul_op
from ._torch_onnx import onnx_translation_table
from ._torch_ops import (_GELU, _check_out, _gelu_eager, _gelu_inplace_cpu, _gelu_inplace_op, _gelu_op,
                         _gelu_out_op)

__all__ = ["gelu", "gelu_", "GELU", "as_numpy", "onnx_translation_table", "gelu_mul", "geglu", "GeGLU",
           "patch", "unpatch", "PatchedGELU", "PatchReport"]


def gelu(input, approximate="none", *, out=None):
    """GELU of a CPU tensor by fastgelu's kernels, like ``torch.nn.functional.gelu``; differentiable.

    The operator ``fastgelu::gelu`` (``fastgelu::gelu_out`` with `out`), which torch.compile, torch.export,
    jit.trace/script, fx, torch.func and the ONNX exporters see.

    Parameters
    ----------
    input : torch.Tensor
        A dense CPU tensor of float32, float64, float16 or bfloat16, any strides.
    approximate : {"none", "tanh", "sigmoid"}, optional
        "none" (exact) and "tanh" as in PyTorch; "sigmoid" is x * sigmoid(1.702 x). Default "none".
    out : torch.Tensor, optional
        A tensor of input's shape and dtype to write into (not differentiable).

    Returns
    -------
    torch.Tensor
        GELU(input), with input's layout; `out` itself when given.

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms; `out` has another shape or dtype than input.
    TypeError
        input is not a tensor, or is on another device than the CPU (use ``torch.nn.GELU`` there), of another
        dtype, or not dense.
    RuntimeError
        `out` is given where autograd or forward AD would need a gradient.

    See Also
    --------
    gelu_ : in place.
    GELU : the module.
    fastgelu.gelu : the same on NumPy arrays.

    Examples
    --------
    >>> import torch, fastgelu.torch as fgt
    >>> x = torch.tensor([-2.0, -1.0, 0.0, 1.0, 2.0])
    >>> fgt.gelu(x).round(decimals=4)
    tensor([-0.0455, -0.1587,  0.0000,  0.8413,  1.9545])
    >>> fgt.gelu(x, approximate="tanh").round(decimals=4)
    tensor([-0.0454, -0.1588,  0.0000,  0.8412,  1.9546])
    """
    pair = VARIANTS.get(approximate) if type(approximate) is str else None
    if pair is None:
        _check_approximate(approximate)
    if out is None and _untraced(input) and input.dtype in _DTYPES:
        if input.requires_grad and torch.is_grad_enabled():
            return _gelu_eager(input, approximate)  # what the operator's Autograd kernel would call
        y = torch.empty_like(input)  # the kernel itself, as _gelu_cpu runs it
        _name_intra_op_pool()
        pair[0](_view(input) if not input.requires_grad else as_numpy(input), out=_view(y))
        return y
    if out is not None:
        _check_out(input, out)
        _gelu_out_op(input, out, approximate)
        return out
    if isinstance(input, torch.fx.Proxy):  # torch.fx.symbolic_trace: record the operator
        return _gelu_op(input, approximate)
    _check_tensor(input)
    if _functorch_active():  # torch.func: the Function at the top, so its transform rules apply
        return _GELU.apply(input, approximate)
    return _gelu_op(input, approximate)


def gelu_(input, approximate="none"):
    """GELU in place (operator ``fastgelu::gelu_``); not differentiable: GELU's gradient needs the input it
    overwrites.

    Parameters
    ----------
    input : torch.Tensor
        A dense CPU tensor of float32, float64, float16 or bfloat16, overwritten with its GELU.
    approximate : {"none", "tanh", "sigmoid"}, optional
        The form, as for `gelu`. Default "none".

    Returns
    -------
    torch.Tensor
        `input` itself.

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms.
    TypeError
        input is not a dense CPU tensor of a supported dtype.
    RuntimeError
        Autograd or forward AD would need input's gradient.

    Examples
    --------
    >>> import torch, fastgelu.torch as fgt
    >>> x = torch.tensor([-1.0, 0.0, 1.0])
    >>> fgt.gelu_(x) is x
    True
    >>> x.round(decimals=4)
    tensor([-0.1587,  0.0000,  0.8413])
    """
    _check_approximate(approximate)
    if _unwatched(input) and input.dtype in _DTYPES:
        _gelu_inplace_cpu(input, approximate)  # as the operator's Autograd kernel would, without the dispatcher
        if not input.is_inference():
            torch.autograd.graph.increment_version(input)
        return input
    _check_tensor(input)
    _gelu_inplace_op(input, approximate)
    return input


class GELU(torch.nn.Module):
    """``torch.nn.GELU`` with fastgelu's kernels (CPU tensors); scriptable.

    Parameters
    ----------
    approximate : {"none", "tanh", "sigmoid"}, optional
        The form, as for `gelu`. Default "none".

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms.

    See Also
    --------
    gelu : the function the module calls (its errors are the module's on a call).
    patch : swaps the GELU modules of an existing model for fastgelu's.

    Examples
    --------
    >>> import torch, fastgelu.torch as fgt
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), fgt.GELU("tanh"), torch.nn.Linear(8, 4))
    >>> model[1]
    GELU(approximate='tanh')
    >>> model(torch.randn(2, 4)).shape
    torch.Size([2, 4])
    """

    approximate: str

    def __init__(self, approximate="none"):
        super().__init__()
        _check_approximate(approximate)
        self.approximate = approximate

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        """GELU(input), as `gelu`."""
        if torch.jit.is_scripting():
            return torch.ops.fastgelu.gelu(input, self.approximate)
        return gelu(input, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


def gelu_mul(gate, up, approximate="none"):
    """GELU(gate) * up of CPU tensors in one pass (operator ``fastgelu::gelu_mul``); differentiable in both.

    Parameters
    ----------
    gate, up : torch.Tensor
        Dense CPU tensors of one dtype (float32, float64, float16 or bfloat16) that broadcast against each
        other.
    approximate : {"none", "tanh", "sigmoid"}, optional
        The form of GELU; Gemma uses "tanh". Default "none".

    Returns
    -------
    torch.Tensor
        GELU(gate) * up in the broadcast shape.

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms; gate and up do not broadcast.
    TypeError
        gate or up is not a dense CPU tensor of a supported dtype, or the two dtypes differ.

    See Also
    --------
    geglu : gate and up as the two halves of one tensor.
    GeGLU : the module.
    fastgelu.gelu_mul : the same on NumPy arrays.

    Examples
    --------
    >>> import torch, fastgelu.torch as fgt
    >>> fgt.gelu_mul(torch.tensor([1.0, -1.0]), torch.tensor([2.0, 3.0])).round(decimals=4)
    tensor([ 1.6827, -0.4760])
    """
    _check_approximate(approximate, "fastgelu.torch.gelu_mul")
    if isinstance(gate, torch.fx.Proxy) or isinstance(up, torch.fx.Proxy):
        return _gelu_mul_op(gate, up, approximate)
    _check_pair(gate, up, "fastgelu.torch.gelu_mul")
    if _functorch_active():
        return _GELUMul.apply(gate, up, approximate)
    if _unwatched(gate, up):
        return _gelu_mul_cpu(gate, up, approximate)
    return _gelu_mul_op(gate, up, approximate)


def geglu(input, approximate="none", dim=-1):
    """GELU(gate) * up with gate and up the first and second halves of `input` along `dim` (gate first, as
    vLLM's and sglang's ``gelu_and_mul``); differentiable.

    Parameters
    ----------
    input : torch.Tensor
        A dense CPU tensor of a supported dtype with an even length along `dim`.
    approximate : {"none", "tanh", "sigmoid"}, optional
        The form of GELU. Default "none".
    dim : int, optional
        The dimension split in two. Default -1.

    Returns
    -------
    torch.Tensor
        input's shape with half its length along `dim`.

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms; input is 0-d or has an odd length along `dim`.
    IndexError
        `dim` is out of range.
    TypeError
        `dim` is not an integer; input is not a dense CPU tensor of a supported dtype.

    Examples
    --------
    >>> import torch, fastgelu.torch as fgt
    >>> fgt.geglu(torch.tensor([[1.0, -1.0, 2.0, 3.0]])).round(decimals=4)
    tensor([[ 1.6827, -0.4760]])
    """
    if not isinstance(input, torch.fx.Proxy):
        _check_tensor(input, "input", "fastgelu.torch.geglu")
        if input.dim() == 0:
            raise ValueError("fastgelu.torch.geglu: input must have at least one dimension")
        dim = _check_dim(dim, input.dim(), "fastgelu.torch.geglu")
        n = input.shape[dim]
        if n % 2:
            raise ValueError(f"fastgelu.torch.geglu: input has odd length {n} along dim {dim}; the gate and up "
                             f"halves need an even length")
    gate, up = input.chunk(2, dim)
    return gelu_mul(gate, up, approximate)


class GeGLU(torch.nn.Module):
    """Gated GELU module: ``GELU(gate) * up``, the activation of Gemma's (approximate="tanh") and T5 v1.1's
    MLPs; scriptable.

    ``m(x)`` takes gate and up as the two halves of x along `dim` (gate first); ``m(gate, up)`` takes them
    separately.

    Parameters
    ----------
    approximate : {"none", "tanh", "sigmoid"}, optional
        The form of GELU. Default "none".
    dim : int, optional
        The dimension the one-argument form splits. Default -1.

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms.
    TypeError
        `dim` is not an integer.

    See Also
    --------
    geglu, gelu_mul : the functions the module calls.

    Examples
    --------
    >>> import torch, fastgelu.torch as fgt
    >>> fgt.GeGLU("tanh")(torch.tensor([[1.0, -1.0, 2.0, 3.0]])).round(decimals=4)
    tensor([[ 1.6824, -0.4764]])
    """

    approximate: str
    dim: int

    def __init__(self, approximate="none", dim=-1):
        super().__init__()
        _check_approximate(approximate, "fastgelu.torch.GeGLU")
        self.approximate = approximate
        self.dim = _dim_arg(dim, "fastgelu.torch.GeGLU")

    def forward(self, input: torch.Tensor, up: torch.Tensor | None = None) -> torch.Tensor:
        """`geglu` of input, or `gelu_mul` of (input, up)."""
        if torch.jit.is_scripting():
            if up is None:
                halves = input.chunk(2, self.dim)
                return torch.ops.fastgelu.gelu_mul(halves[0], halves[1], self.approximate)
            return torch.ops.fastgelu.gelu_mul(input, up, self.approximate)
        if up is None:
            return geglu(input, self.approximate, self.dim)
        return gelu_mul(input, up, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}" + (f", dim={self.dim}" if self.dim != -1 else "")


# the patching names, and the types of a PatchReport's entries (documented, not in __all__)
_PATCHING = ("patch", "unpatch", "PatchedGELU", "PatchReport", "Replacement", "LeftAlone")


def __getattr__(name):
    # model patching (fastgelu._torch_patch) builds on this module: it loads on first use, so that importing
    # either module never finds the other half-initialized
    if name in _PATCHING:
        from . import _torch_patch
        return getattr(_torch_patch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_PATCHING])
