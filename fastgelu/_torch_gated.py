"""The gated operators, on the ladder of _torch_common:

    fastgelu::gelu_mul(Tensor gate, Tensor up, str approximate='none') -> Tensor
    fastgelu::gelu_mul_backward(Tensor grad_output, Tensor gate, Tensor up, str approximate='none')
        -> (Tensor, Tensor)

gate and up broadcast against each other (one dtype); gelu_mul_backward returns (dgate, dup) in the broadcast
shape, summed back to each input's shape by the autograd formula. Reverse mode (double backward through
GELU'' in torch operations), forward mode, vmap and fake kernels as for fastgelu::gelu."""
import torch

from ._api_gated import _gated
from ._torch_common import (_batch_first, _beside_intra_op_pool, _check_dtype_layout, _check_tensor,
                            _differentiable, _function, _functorch_active, _operator, _second_derivative,
                            _unwatched, _vmap, as_numpy)
from ._torch_ops import _gelu_backward


def _check_pair(gate, up, who):
    _check_tensor(gate, "gate", who)
    _check_tensor(up, "up", who)
    _check_same_dtype(gate, up, who)
    try:
        return torch.broadcast_shapes(gate.shape, up.shape)
    except RuntimeError:
        raise ValueError(f"{who}: gate and up shapes {tuple(gate.shape)} and {tuple(up.shape)} do not "
                         f"broadcast") from None


def _check_same_dtype(gate, up, who):
    if gate.dtype != up.dtype:
        raise TypeError(f"{who}: gate and up must have one dtype; got {gate.dtype} and {up.dtype}")


def _empty_for(shape, like, other):
    # the layout of an input that already has the result's shape (empty_like keeps dense strides)
    if like.shape == shape:
        return torch.empty_like(like)
    if other.shape == shape:
        return torch.empty_like(other)
    return torch.empty(shape, dtype=like.dtype)


# ---- CPU and fake kernels -------------------------------------------------------------------------------------

@_beside_intra_op_pool
def _gelu_mul_cpu(gate, up, approximate="none"):
    fwd = _gated(approximate, "fastgelu::gelu_mul")[0]
    shape = _check_pair(gate, up, "fastgelu::gelu_mul")
    y = _empty_for(shape, gate, up)
    fwd(as_numpy(gate), as_numpy(up), out=as_numpy(y))
    return y


@_beside_intra_op_pool
def _gelu_mul_backward_cpu(grad_output, gate, up, approximate="none"):
    grad = _gated(approximate, "fastgelu::gelu_mul_backward")[1]
    shape = _check_pair(gate, up, "fastgelu::gelu_mul_backward")
    _check_tensor(grad_output, "grad_output", "fastgelu::gelu_mul_backward")
    shape = torch.broadcast_shapes(shape, grad_output.shape)
    g = grad_output if grad_output.dtype == gate.dtype else grad_output.to(gate.dtype)
    dgate, dup = _empty_for(shape, gate, up), _empty_for(shape, gate, up)
    grad(as_numpy(gate), as_numpy(up), as_numpy(g), out=(as_numpy(dgate), as_numpy(dup)))
    return dgate, dup


def _gelu_mul_fake(gate, up, approximate="none"):
    _gated(approximate, "fastgelu::gelu_mul")
    _check_dtype_layout(gate, "gate", "fastgelu::gelu_mul")
    _check_dtype_layout(up, "up", "fastgelu::gelu_mul")
    _check_same_dtype(gate, up, "fastgelu::gelu_mul")
    return _empty_for(torch.broadcast_shapes(gate.shape, up.shape), gate, up)


def _gelu_mul_backward_fake(grad_output, gate, up, approximate="none"):
    _gated(approximate, "fastgelu::gelu_mul_backward")
    shape = torch.broadcast_shapes(gate.shape, up.shape, grad_output.shape)
    return _empty_for(shape, gate, up), _empty_for(shape, gate, up)


_gelu_mul_op = _operator("gelu_mul(Tensor gate, Tensor up, str approximate='none') -> Tensor",
                         _gelu_mul_cpu, _gelu_mul_fake)
_gelu_mul_backward_op = _operator("gelu_mul_backward(Tensor grad_output, Tensor gate, Tensor up, "
                                  "str approximate='none') -> (Tensor, Tensor)",
                                  _gelu_mul_backward_cpu, _gelu_mul_backward_fake)


# ---- autograd -----------------------------------------------------------------------------------------------

def _reduce_to(t, shape):
    return t if t.shape == shape else t.sum_to_size(shape)


def _gate_backward(grad_output, gate, approximate):
    """grad_output * GELU'(gate) where gate broadcasts against grad_output (gate (3, 1) against up (1, 4)):
    fastgelu::gelu_backward takes equal shapes, so both are expanded to the common one (views, no copies)."""
    shape = torch.broadcast_shapes(grad_output.shape, gate.shape)
    return _gelu_backward(grad_output.expand(shape), gate.expand(shape), approximate)


def _gelu_mul_any(gate, up, approximate):
    """GELU(gate) * up inside formulas (differentiable again)."""
    if _functorch_active():
        return _GELUMul.apply(gate, up, approximate)
    return _gelu_mul_op(gate, up, approximate)


def _gelu_mul_backward_any(grad_output, gate, up, approximate):
    if _functorch_active():
        return _GELUMulBackward.apply(grad_output, gate, up, approximate)
    if _unwatched(grad_output, gate, up):
        return _gelu_mul_backward_cpu(grad_output, gate, up, approximate)
    return _gelu_mul_backward_op(grad_output, gate, up, approximate)


def _gelu_mul_grads(ctx, grad_output):
    gate, up = ctx.saved_tensors
    dgate, dup = _gelu_mul_backward_any(grad_output, gate, up, ctx.approximate)
    return _reduce_to(dgate, gate.shape), _reduce_to(dup, up.shape), None


def _gelu_mul_tangent(ctx, gate_t, up_t, _):
    gate, up = ctx.saved_tensors
    out = None
    if gate_t is not None:
        out = _gate_backward(gate_t * up, gate, ctx.approximate)
    if up_t is not None:
        term = _gelu_mul_any(gate, up_t, ctx.approximate)
        out = term if out is None else out + term
    return out


def _gelu_mul_backward_grads(ctx, g_dgate, g_dup):
    # dgate = dy up f'(gate), dup = dy f(gate)
    dy, gate, up = ctx.saved_tensors
    a = ctx.approximate
    d_dy = d_gate = d_up = None
    if ctx.needs_input_grad[0]:
        d_dy = _reduce_to(_gate_backward(g_dgate * up, gate, a) + _gelu_mul_any(gate, g_dup, a), dy.shape)
    if ctx.needs_input_grad[1]:
        d_gate = _reduce_to(g_dgate * dy * up * _second_derivative(gate, a)
                            + _gate_backward(g_dup * dy, gate, a), gate.shape)
    if ctx.needs_input_grad[2]:
        d_up = _reduce_to(_gate_backward(g_dgate * dy, gate, a), up.shape)
    return d_dy, d_gate, d_up, None


def _gelu_mul_backward_tangent(ctx, dy_t, gate_t, up_t, _):
    dy, gate, up = ctx.saved_tensors
    a = ctx.approximate
    zero = torch.zeros((), dtype=gate.dtype)
    dy_t = zero if dy_t is None else dy_t
    gate_t = zero if gate_t is None else gate_t
    up_t = zero if up_t is None else up_t
    shape = torch.broadcast_shapes(dy.shape, gate.shape, up.shape)   # the outputs' shape
    dgate_t = _gate_backward(dy_t * up + dy * up_t, gate, a) + dy * up * _second_derivative(gate, a) * gate_t
    dup_t = _gelu_mul_any(gate, dy_t, a) + _gate_backward(dy * gate_t, gate, a)
    return dgate_t.expand(shape), dup_t.expand(shape)


_GELUMul = _function("_GELUMul", _gelu_mul_cpu, _gelu_mul_op, _gelu_mul_grads, _gelu_mul_tangent)
_GELUMulBackward = _function("_GELUMulBackward", _gelu_mul_backward_cpu, _gelu_mul_backward_op,
                             _gelu_mul_backward_grads, _gelu_mul_backward_tangent)
_differentiable(_gelu_mul_op, _GELUMul, 2)
_differentiable(_gelu_mul_backward_op, _GELUMulBackward, 3)


# ---- vmap -----------------------------------------------------------------------------------------------------

def _batched(tensors, in_dims, batch_size):
    """Tensors with the batch dimension first, padded so that their logical dimensions broadcast."""
    rank = max(t.dim() - (d is not None) for t, d in zip(tensors, in_dims))
    out = []
    for t, d in zip(tensors, in_dims):
        t = _batch_first(t, d, batch_size)
        out.append(t.reshape(t.shape[:1] + (1,) * (rank + 1 - t.dim()) + t.shape[1:]))
    return out


def _gelu_mul_vmap(info, in_dims, gate, up, approximate="none"):
    if in_dims[0] == in_dims[1] and gate.shape == up.shape:
        return _gelu_mul_op(gate, up, approximate), in_dims[0]
    gate, up = _batched((gate, up), in_dims[:2], info.batch_size)
    return _gelu_mul_op(gate, up, approximate), 0


def _gelu_mul_backward_vmap(info, in_dims, grad_output, gate, up, approximate="none"):
    if in_dims[0] == in_dims[1] == in_dims[2] and grad_output.shape == gate.shape == up.shape:
        return _gelu_mul_backward_op(grad_output, gate, up, approximate), (in_dims[0], in_dims[0])
    grad_output, gate, up = _batched((grad_output, gate, up), in_dims[:3], info.batch_size)
    return _gelu_mul_backward_op(grad_output, gate, up, approximate), (0, 0)


_vmap(_gelu_mul_op, _gelu_mul_vmap)
_vmap(_gelu_mul_backward_op, _gelu_mul_backward_vmap)
