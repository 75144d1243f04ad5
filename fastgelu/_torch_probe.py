"""How fastgelu.torch.patch recognises a module: GELU activation classes and the modules whose forward it
knows, by class name, each then checked by behaviour on a probe tensor (the rules and tolerances: the module
docstring of fastgelu._torch_patch). Nothing here changes a module."""
import re

import torch

from . import torch as fgt
from ._torch_fused import _FORWARDS, _takes

# activation class name -> fastgelu form (None: read the module's `approximate`, as torch.nn.GELU's)
_ACTIVATIONS = {
    "GELU": None, "GELUActivation": "none", "GELUTanh": "tanh", "PytorchGELUTanh": "tanh",
    "NewGELUActivation": "tanh", "FastGELUActivation": "tanh", "AccurateGELUActivation": "tanh",
    "QuickGELUActivation": "sigmoid", "QuickGELU": "sigmoid",
}
_GELU_LIKE = re.compile(r"ge(glu|lu)", re.IGNORECASE)
_MLP_LIKE = re.compile(r"(MLP|Mlp|Intermediate|FeedForward|DenseActDense|FFN|Ffn)$")


def _child(m, name, cls=torch.nn.Linear):
    c = getattr(m, name, None) if name in m._modules else None
    return c if isinstance(c, cls) else None


def _fused_kind(m):
    """(kind, name of its activation child or None) for a module whose forward patch() knows, else None."""
    name = type(m).__name__
    if name == "T5DenseGatedActDense" and _child(m, "wi_0") and _child(m, "wi_1") and _child(m, "wo"):
        return "t5", "act"
    if (name.endswith("MLP") and _child(m, "gate_proj") and _child(m, "up_proj") and _child(m, "down_proj")
            and "act_fn" in m._modules):
        return "llama", "act_fn"
    if name == "GluMlp" and _child(m, "fc1") and _child(m, "fc2") and "act" in m._modules:
        return "glumlp", "act"
    if _child(m, "proj") is not None and name in ("GEGLU", "GELU", "ApproximateGELU"):
        return ("geglu" if name == "GEGLU" else "projection"), None
    return None


def _probe_input(m):
    """A small random input for module `m`, in its first projection's dtype, or a reason why not."""
    for c in m.children():
        w = getattr(c, "weight", None)
        if not (isinstance(w, torch.Tensor) and w.dim() == 2):
            continue
        if not _takes(w):
            return None, f"its weights are {w.dtype} on {w.device}; fastgelu computes float tensors on CPU"
        n = c.in_features if isinstance(c, torch.nn.Linear) else getattr(c, "nx", w.shape[0])  # Conv1D: (nx, nf)
        gen = torch.Generator().manual_seed(0)
        return torch.randn(2, 3, n, generator=gen, dtype=torch.float32).to(w.dtype), None
    return None, "no Linear to size a probe"


def _activation_form(m):
    """(form, None) when activation module `m` computes a fastgelu form on the probe, else (None, reason)."""
    name = type(m).__name__
    if name not in _ACTIVATIONS:
        return None, "class not known to fastgelu.torch.patch"
    if any(True for _ in m.children()) or any(True for _ in m.parameters()) or any(True for _ in m.buffers()):
        return None, "has parameters, buffers or children; not an activation module patch() knows"
    form = _ACTIVATIONS[name]
    if form is None:  # torch.nn.GELU's attribute; timm's GELU has none (exact)
        form = getattr(m, "approximate", "none")
        if form not in ("none", "tanh"):
            return None, f"approximate={form!r}"
    x = torch.linspace(-8, 8, 321, dtype=torch.float64)
    try:
        with torch.no_grad():
            y = m(x.clone())
    except Exception as e:  # a module that cannot take the probe is not one we can vouch for
        return None, f"probe failed: {type(e).__name__}: {e}"
    if not (isinstance(y, torch.Tensor) and y.shape == x.shape and y.dtype == x.dtype):
        return None, "probe output is not a float64 tensor of the input's shape"
    want = fgt.gelu(x, form)
    if not bool(((y - want).abs() <= 1e-6 + 1e-5 * want.abs()).all()):
        err = (y - want).abs().max().item()
        return None, f"output differs from fastgelu's approximate={form!r} by {err:.3g} on the probe"
    return form, None


class _Modes:
    """Eval mode for a probe (dropout off, no running statistics updated), every submodule's mode restored."""

    def __init__(self, m):
        self.m = m

    def __enter__(self):
        self.saved = [(s, s.training) for s in self.m.modules()]
        self.m.eval()

    def __exit__(self, *exc):
        for s, t in self.saved:
            s.training = t


def _close(a, b):
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.shape != b.shape:
        return False, "output shape differs"
    tol = 3e-2 if a.dtype in (torch.float16, torch.bfloat16) else 1e-3
    err = (a.double() - b.double()).abs().max().item()
    scale = b.double().abs().max().item()
    return err <= tol * scale, f"differs from its own forward by {err:.3g} (output size {scale:.3g})"


def _probe_fused(m, kind, form):
    x, why = _probe_input(m)
    if x is None:
        return why
    try:
        with torch.no_grad(), _Modes(m):
            want = type(m).forward(m, x.clone())
            got = _FORWARDS[kind](m, form, False, x.clone())
    except Exception as e:
        return f"probe failed: {type(e).__name__}: {e}"
    ok, why = _close(got, want)
    return None if ok else why


def _inplace_site(parent, name, act):
    """May `act` (a PatchedGELU, child `name` of `parent`) overwrite its input? Only where that input is a fresh
    projection output nothing else reads (see the module docstring of fastgelu._torch_patch)."""
    if isinstance(parent, torch.nn.Sequential):
        keys = list(parent._modules)
        i = keys.index(name)
        return i > 0 and type(parent._modules[keys[i - 1]]) is torch.nn.Linear
    if not _MLP_LIKE.search(type(parent).__name__):
        return False
    x, _ = _probe_input(parent)
    if x is None:
        return False
    try:
        with torch.no_grad(), _Modes(parent):
            act.inplace = False
            want = parent(x)
            x0 = x.clone()
            act.inplace = True
            got = parent(x)
    except Exception:
        return False
    finally:
        act.inplace = False
    return isinstance(got, torch.Tensor) and torch.equal(got, want) and torch.equal(x, x0)
