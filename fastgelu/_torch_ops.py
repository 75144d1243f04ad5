"""The plain operators fastgelu::gelu, gelu_out, gelu_ and gelu_backward: CPU kernels (fastgelu's ufuncs on
NumPy views of the tensors), fake kernels, autograd (reverse and forward mode, double backward through
GELU'' in torch operations) and vmap rules, on the ladder of _torch_common."""
import torch

from ._api import _variant
from ._torch_common import (_BELOW_AUTOGRAD, _batch_first, _beside_intra_op_pool, _check_approximate,
                            _check_dtype_layout, _check_tensor, _differentiable, _function, _functorch_active,
                            _has_tangent, _lib, _operator, _second_derivative, _unwatched, _vmap, as_numpy)


# ---- CPU kernels ----------------------------------------------------------------------------------------------

@_beside_intra_op_pool
def _gelu_cpu(x, approximate="none"):
    fwd = _variant(approximate, "fastgelu::gelu")[0]
    _check_tensor(x, "x", "fastgelu::gelu")
    y = torch.empty_like(x)  # keeps x's strides when x is dense (transposed, permuted), else contiguous
    fwd(as_numpy(x), out=as_numpy(y))
    return y


@_beside_intra_op_pool
def _gelu_out_cpu(x, out, approximate="none"):
    fwd = _variant(approximate, "fastgelu::gelu_out")[0]
    _check_out(x, out)
    if torch._debug_has_internal_overlap(out) == 1:
        raise RuntimeError("fastgelu::gelu_out: more than one element of out refers to the same memory (an "
                           "expanded view?); pass a dense tensor")
    fwd(as_numpy(x), out=as_numpy(out))  # NumPy copies what it must when x and out overlap


def _check_out(x, out):
    _check_tensor(x, "x", "fastgelu::gelu_out")
    _check_tensor(out, "out", "fastgelu::gelu_out")
    _check_out_like(x, out)


def _check_out_like(x, out):
    if out.shape != x.shape or out.dtype != x.dtype:
        raise ValueError(f"fastgelu::gelu_out: out must have x's shape and dtype {tuple(x.shape)}, "
                         f"{x.dtype}; got {tuple(out.shape)}, {out.dtype}")


@_beside_intra_op_pool
def _gelu_inplace_cpu(x, approximate="none"):
    fwd = _variant(approximate, "fastgelu::gelu_")[0]
    _check_tensor(x, "x", "fastgelu::gelu_")
    _check_no_overlap(x)
    a = as_numpy(x)
    fwd(a, out=a)


@_beside_intra_op_pool
def _gelu_backward_cpu(grad_output, x, approximate="none"):
    grad = _variant(approximate, "fastgelu::gelu_backward")[1]
    _check_tensor(x, "x", "fastgelu::gelu_backward")
    _check_tensor(grad_output, "grad_output", "fastgelu::gelu_backward")
    _check_same_shape(grad_output, x)
    g = grad_output if grad_output.dtype == x.dtype else grad_output.to(x.dtype)
    dx = torch.empty_like(x)
    grad(as_numpy(x), as_numpy(g), out=as_numpy(dx))
    return dx


def _check_no_overlap(x):
    if torch._debug_has_internal_overlap(x) == 1:  # as PyTorch's own in-place ops refuse
        raise RuntimeError("fastgelu::gelu_: more than one element of the tensor written in place refers to "
                           "the same memory (an expanded view?); clone() it first or use fastgelu.torch.gelu")


def _check_same_shape(grad_output, x):
    if grad_output.shape != x.shape:
        raise ValueError(f"fastgelu::gelu_backward: grad_output has shape {tuple(grad_output.shape)}, "
                         f"x has shape {tuple(x.shape)}; they must be equal")


# ---- fake (meta) kernels: shapes, dtypes and strides for tracers --------------------------------------------

def _gelu_fake(x, approximate="none"):
    _check_approximate(approximate, "fastgelu::gelu")
    _check_dtype_layout(x, "x", "fastgelu::gelu")
    return torch.empty_like(x)


def _gelu_out_fake(x, out, approximate="none"):
    _check_approximate(approximate, "fastgelu::gelu_out")
    _check_dtype_layout(x, "x", "fastgelu::gelu_out")
    _check_out_like(x, out)


def _gelu_inplace_fake(x, approximate="none"):
    _check_approximate(approximate, "fastgelu::gelu_")
    _check_dtype_layout(x, "x", "fastgelu::gelu_")
    _check_no_overlap(x)


def _gelu_backward_fake(grad_output, x, approximate="none"):
    _check_approximate(approximate, "fastgelu::gelu_backward")
    _check_dtype_layout(x, "x", "fastgelu::gelu_backward")
    _check_dtype_layout(grad_output, "grad_output", "fastgelu::gelu_backward")
    _check_same_shape(grad_output, x)
    return torch.empty_like(x)


_gelu_op = _operator("gelu(Tensor x, str approximate='none') -> Tensor", _gelu_cpu, _gelu_fake)
# out as a positional argument: dynamo expects a tensor back from ops called with an out= keyword
_gelu_out_op = _operator("gelu_out(Tensor x, Tensor(a!) out, str approximate='none') -> ()", _gelu_out_cpu,
                         _gelu_out_fake)
_gelu_inplace_op = _operator("gelu_(Tensor(a!) x, str approximate='none') -> ()", _gelu_inplace_cpu,
                             _gelu_inplace_fake)
_gelu_backward_op = _operator("gelu_backward(Tensor grad_output, Tensor x, str approximate='none') -> Tensor",
                              _gelu_backward_cpu, _gelu_backward_fake)


# ---- autograd -----------------------------------------------------------------------------------------------

def _gelu_backward(grad_output, x, approximate):
    """grad_output * GELU'(x) inside formulas: under torch.func transforms through the Function itself (its
    custom_function_call must start at the transform's top), else through the operator."""
    if _functorch_active():
        return _GELUBackward.apply(grad_output, x, approximate)
    if _unwatched(grad_output, x):  # a plain backward (no create_graph): the kernel itself
        return _gelu_backward_cpu(grad_output, x, approximate)
    return _gelu_backward_op(grad_output, x, approximate)


def _gelu_grads(ctx, grad_output):
    (x,) = ctx.saved_tensors
    return _gelu_backward(grad_output, x, ctx.approximate), None


def _gelu_tangent(ctx, x_t, _):
    (x,) = ctx.saved_tensors
    return _gelu_backward(x_t, x, ctx.approximate)


def _gelu_backward_grads(ctx, gg):
    grad_output, x = ctx.saved_tensors
    d_grad_output = d_x = None
    if ctx.needs_input_grad[0]:
        d_grad_output = _gelu_backward(gg, x, ctx.approximate)
    if ctx.needs_input_grad[1]:
        d_x = gg * grad_output * _second_derivative(x, ctx.approximate)
    return d_grad_output, d_x, None


def _gelu_backward_tangent(ctx, grad_output_t, x_t, _):
    grad_output, x = ctx.saved_tensors
    out = None
    if grad_output_t is not None:
        out = _gelu_backward(grad_output_t, x, ctx.approximate)
    if x_t is not None:
        term = grad_output * _second_derivative(x, ctx.approximate) * x_t
        out = term if out is None else out + term
    return out


_GELU = _function("_GELU", _gelu_cpu, _gelu_op, _gelu_grads, _gelu_tangent)
_GELUBackward = _function("_GELUBackward", _gelu_backward_cpu, _gelu_backward_op, _gelu_backward_grads,
                          _gelu_backward_tangent)
_gelu_eager = _differentiable(_gelu_op, _GELU, 1)
_gelu_backward_eager = _differentiable(_gelu_backward_op, _GELUBackward, 2)


def _gelu_out_autograd(keyset, self, out, approximate="none"):
    if (torch.is_grad_enabled() and (self.requires_grad or out.requires_grad)) or _has_tangent(self):
        raise RuntimeError("fastgelu.torch.gelu(..., out=...) cannot be differentiated (as PyTorch's out= "
                           "functions); call fastgelu.torch.gelu(x) without out= where gradients are needed.")
    _gelu_out_op.redispatch(keyset & _BELOW_AUTOGRAD, self, out, approximate)
    if not out.is_inference():
        torch.autograd.graph.increment_version(out)


def _gelu_inplace_autograd(keyset, self, approximate="none"):
    if (torch.is_grad_enabled() and self.requires_grad) or _has_tangent(self):
        # GELU is not invertible: its gradient needs the input the in-place form overwrites
        raise RuntimeError("fastgelu.torch.gelu_ (in place) cannot be differentiated: the gradient needs the "
                           "input it overwrites. Use fastgelu.torch.gelu(x) (or torch.nn.GELU) where "
                           "gradients are needed.")
    _gelu_inplace_op.redispatch(keyset & _BELOW_AUTOGRAD, self, approximate)
    if not self.is_inference():
        torch.autograd.graph.increment_version(self)  # autograd's check for saved tensors changed later


_lib.impl("gelu_", _gelu_inplace_autograd, "Autograd", with_keyset=True)
_lib.impl("gelu_out", _gelu_out_autograd, "Autograd", with_keyset=True)


# ---- vmap: the operators are elementwise, so a batched call is one call on the whole batch -------------------

def _gelu_vmap(info, in_dims, self, approximate="none"):
    return _gelu_op(self, approximate), in_dims[0]


def _gelu_inplace_vmap(info, in_dims, self, approximate="none"):
    _gelu_inplace_op(self, approximate)
    return None, None


def _gelu_backward_vmap(info, in_dims, grad_output, self, approximate="none"):
    gd, xd = in_dims[0], in_dims[1]
    if gd == xd:
        return _gelu_backward_op(grad_output, self, approximate), xd
    grad_output = _batch_first(grad_output, gd, info.batch_size)
    self = _batch_first(self, xd, info.batch_size)
    return _gelu_backward_op(grad_output, self, approximate), 0


_vmap(_gelu_op, _gelu_vmap)
_vmap(_gelu_inplace_op, _gelu_inplace_vmap)
_vmap(_gelu_backward_op, _gelu_backward_vmap)
