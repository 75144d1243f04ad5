"""The computing half of fastgelu.torch.patch: when a patched module runs fastgelu and when in place, and the
fused forwards that replace those of modules owning the projections around their GELU (gated MLPs, diffusers'
GELU modules). fastgelu._torch_patch decides which modules get them."""
import torch
import torch.autograd.forward_ad as _fwAD

from . import torch as fgt
from ._api_gated import gelu_mul as _np_gelu_mul
from ._torch_common import _DTYPES


# ---- when fastgelu computes, and when in place ---------------------------------------------------------------

def _takes(t):
    return t.device.type == "cpu" and t.dtype in _DTYPES and t.layout == torch.strided


def _in_place(policy, *tensors):
    """Whether this call may overwrite `tensors` (fresh projection outputs) under in-place `policy`."""
    if policy is False or torch.compiler.is_compiling():
        return False
    if _fwAD._current_level < 0 and not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors)):
        return True
    if policy:
        raise RuntimeError("fastgelu.torch.patch(..., inplace=True): autograd needs this GELU's input (its "
                           "gradient is computed from it), so it cannot be overwritten; run the model under "
                           "torch.inference_mode() or torch.no_grad(), or patch with inplace=None")
    return False


def _eager_plain(*tensors):
    """No tracer, mode or transform can see a call on these tensors: a kernel may write through NumPy views."""
    return (_fwAD._current_level < 0 and torch._C._get_tracing_state() is None
            and not torch._C._len_torch_dispatch_stack() and not torch._C._is_torch_function_mode_enabled()
            and not torch._C._are_functorch_transforms_active() and not torch._C._autograd._profiler_enabled()
            and all(type(t) is torch.Tensor for t in tensors))


def _act(x, form, policy):
    if policy is not False and _in_place(policy, x):
        return fgt.gelu_(x, form)
    return fgt.gelu(x, form)


def _gelu_mul(gate, up, form, policy):
    if (policy is not False and gate.shape == up.shape and gate.dtype == up.dtype and _in_place(policy, gate, up)
            and _eager_plain(gate, up)):
        g = fgt.as_numpy(gate)
        _np_gelu_mul(g, fgt.as_numpy(up), form, out=g)  # into gate's fresh buffer: no new pages to fault in
        if not gate.is_inference():
            torch.autograd.graph.increment_version(gate)
        return gate
    return fgt.gelu_mul(gate, up, form)


# ---- the fused forwards of modules that own their projections ---------------------------------------------

def _t5_forward(m, form, policy, x):
    h = m.dropout(_gelu_mul(m.wi_0(x), m.wi_1(x), form, policy))
    w = m.wo.weight  # T5 keeps wo in float32 for 8-bit checkpoints; cast as its own forward does
    if isinstance(w, torch.Tensor) and h.dtype != w.dtype and w.dtype != torch.int8:
        h = h.to(w.dtype)
    return m.wo(h)


def _llama_forward(m, form, policy, x):
    return m.down_proj(_gelu_mul(m.gate_proj(x), m.up_proj(x), form, policy))


def _geglu_forward(m, form, policy, x, *args, **kwargs):  # diffusers ignores (and deprecates) extra arguments
    h, gate = m.proj(x).chunk(2, dim=-1)  # gate second; halves of one buffer, so not in place
    return fgt.gelu_mul(gate, h, form)


def _glumlp_forward(m, form, policy, x):
    x1, x2 = m.fc1(x).chunk(2, dim=m.chunk_dim)
    x = fgt.gelu_mul(x2, x1, form) if m.gate_last else fgt.gelu_mul(x1, x2, form)
    return m.drop2(m.fc2(m.norm(m.drop1(x))))


def _projection_forward(m, form, policy, x):
    return _act(m.proj(x), form, policy)


_FORWARDS = {"t5": _t5_forward, "llama": _llama_forward, "geglu": _geglu_forward, "glumlp": _glumlp_forward,
             "projection": _projection_forward}


class _Fused:
    """The instance attribute `forward` of a module patch() fused (a plain object, so the model pickles)."""

    def __init__(self, module, kind, form, inplace, act_name):
        self.module, self.kind, self.form, self.inplace = module, kind, form, inplace
        self.act_name = act_name  # the activation child it no longer calls (None: it has none)

    def __call__(self, *args, **kwargs):
        m = self.module
        if not args and len(kwargs) == 1:  # the input passed by name (hidden_states=..., x=...)
            args, kwargs = tuple(kwargs.values()), {}
        x, args = args[0], args[1:]
        if not isinstance(x, torch.fx.Proxy) and not (_takes(x) and _takes(_first_weight(m))):
            return type(m).forward(m, x, *args, **kwargs)
        return _FORWARDS[self.kind](m, self.form, self.inplace, x, *args, **kwargs)


def _first_weight(m):
    for c in m.children():
        w = getattr(c, "weight", None)
        if isinstance(w, torch.Tensor) and w.dim() == 2:
            return w
    raise LookupError("no projection")
