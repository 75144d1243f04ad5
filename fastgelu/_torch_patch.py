"""fastgelu.torch.patch / unpatch: fastgelu's kernels inside an existing PyTorch model, in one call.

patch(model) walks the module tree once and changes two kinds of module, in place:

* activation modules (no parameters, no children) whose class is a GELU: torch.nn.GELU; transformers'
  GELUActivation, GELUTanh (PytorchGELUTanh), NewGELUActivation, FastGELUActivation, AccurateGELUActivation and
  QuickGELUActivation (the sigmoid form); timm's GELU, GELUTanh and QuickGELU. Each is replaced in its parent by
  a PatchedGELU (a fastgelu.torch.GELU that keeps the module it replaced, outside the module tree);
* modules that own the projection feeding their GELU keep their object, children and parameters (state_dict keys
  and isinstance checks unchanged); only their forward is replaced, by an instance attribute: gated MLPs
  (T5's T5DenseGatedActDense, Llama/Gemma-style `down_proj(act_fn(gate_proj(x)) * up_proj(x))`, diffusers'
  GEGLU, timm's GluMlp) run fastgelu.torch.gelu_mul; diffusers' GELU and ApproximateGELU run the activation
  on their projection's output.

Classes are known by name (no other library is imported) and never trusted on the name alone: each candidate
runs on a probe tensor before it is changed. An activation must match the fastgelu form it claims in float64
(1e-6 absolute + 1e-5 relative: the exact and tanh forms differ by up to 4.7e-4, tanh and sigmoid by 0.02); a
module with projections must give the output of its own forward to within 1e-3 of the output's size (3e-2 in
16-bit dtypes), which a swapped gate and up or an extra operation would miss by far. A module that fails, and
any other module whose class name says GELU or GEGLU, is left alone and listed in the report. The recognition
and the probes are fastgelu._torch_probe's, the replaced forwards fastgelu._torch_fused's.

In place: GELU's gradient needs its input, and a module cannot know who else holds the tensor it is given. So
an activation is applied in place only where the input is known to be a fresh projection output nothing else
reads: inside the fused forwards above, after an nn.Linear in an nn.Sequential, and in a parent whose class
name says MLP/Intermediate/FeedForward and whose forward, run on a probe with the activation in place, gives
the same output and leaves its input unchanged. At those sites, per call: inplace=None (default) works in
place exactly when no autograd graph needs the input (inference mode, no_grad, or a frozen model whose input
needs no gradient); False never; True always, raising a RuntimeError where autograd would need the input.
Under torch.compile and torch.export the out-of-place operators are traced (the compiler plans buffers).

Tensors fastgelu does not compute on (CUDA and other devices, integer or quantized dtypes) run through the
replaced module's own forward, so a patched model moved to another device still works (with PyTorch's GELU).

Built on fastgelu.torch (a PatchedGELU is a fastgelu.torch.GELU), which does not import this module: it
loads it on the first use of one of its names (fastgelu.torch.patch, ...), so neither waits on the other.
"""
from typing import NamedTuple

import torch

from . import torch as fgt
from ._torch_fused import _Fused, _act, _takes
from ._torch_probe import _ACTIVATIONS, _GELU_LIKE, _activation_form, _fused_kind, _inplace_site, _probe_fused

__all__ = ["patch", "unpatch", "PatchedGELU", "PatchReport", "Replacement", "LeftAlone"]


class Replacement(NamedTuple):
    """One site `patch` changed (an entry of ``PatchReport.replaced``).

    Attributes
    ----------
    path : str
        The module's path in the model ("" is the model itself).
    cls : str
        The class name of the module replaced, or of the module whose forward was replaced.
    form : str
        fastgelu's `approximate` there: "none", "tanh" or "sigmoid".
    kind : str
        "activation" (a GELU module replaced by a `PatchedGELU`), "gated" (a gated MLP's forward through
        ``gelu_mul``) or "projection" (a module's own Linear, then fastgelu's GELU).
    inplace : bool or None
        The in-place policy at this site: None (in place when no autograd graph needs the input), True,
        or False (never).

    Examples
    --------
    >>> import torch, fastgelu.torch as fgt
    >>> report = fgt.patch(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU()))
    >>> site = report.replaced[0]
    >>> site.path, site.kind, site.form, site.inplace
    ('1', 'activation', 'none', None)
    """
    path: str
    cls: str
    form: str
    kind: str
    inplace: bool | None


class LeftAlone(NamedTuple):
    """A GELU-like module `patch` did not change (an entry of ``PatchReport.left_alone``).

    Attributes
    ----------
    path : str
        The module's path in the model.
    cls : str
        Its class name.
    reason : str
        Why: class not known, its probe failed (and by how much), its forward already wrapped, ...

    Examples
    --------
    >>> import torch, fastgelu.torch as fgt
    >>> report = fgt.patch(torch.nn.GELU())   # a model that is a GELU has no parent to put fastgelu's into
    >>> report.left_alone[0]
    LeftAlone(path='', cls='GELU', reason='the model itself: patch its parent')
    """
    path: str
    cls: str
    reason: str


class PatchReport:
    """What `patch` did: the sites it changed and the GELU-like modules it left alone.

    ``len(report)`` is the number of sites changed; ``print(report)`` shows one line a site.

    Attributes
    ----------
    replaced : list of Replacement
        Each site changed: path, class, form, kind and in-place policy.
    left_alone : list of LeftAlone
        GELU-like modules it did not recognise, or whose probe failed, with the reason.

    Examples
    --------
    >>> import torch, fastgelu.torch as fgt
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 4))
    >>> report = fgt.patch(model)
    >>> report
    <PatchReport: 1 replaced, 0 left alone>
    >>> report.replaced[0]
    Replacement(path='1', cls='GELU', form='none', kind='activation', inplace=None)
    """

    def __init__(self):
        self.replaced = []
        self.left_alone = []

    def __len__(self):
        return len(self.replaced)

    def __repr__(self):
        return f"<PatchReport: {len(self.replaced)} replaced, {len(self.left_alone)} left alone>"

    def __str__(self):
        lines = [f"fastgelu.torch.patch: {len(self.replaced)} replaced, {len(self.left_alone)} left alone"]
        lines += [f"  {r.path or '<model>'}: {r.cls} -> {r.kind}, approximate={r.form!r}, inplace={r.inplace}"
                  for r in self.replaced]
        lines += [f"  left alone {a.path or '<model>'}: {a.cls} ({a.reason})" for a in self.left_alone]
        return "\n".join(lines)


# ---- the activation module ----------------------------------------------------------------------------------

class PatchedGELU(fgt.GELU):
    """The `GELU` that `patch` puts in place of a GELU module; `unpatch` puts the original back.

    Made by `patch`, not by hand. Tensors fastgelu does not compute on (other devices, integer or quantized
    dtypes) go through the original module's forward.

    Parameters
    ----------
    original : torch.nn.Module
        The module replaced (kept outside the module tree: ``state_dict`` keys are unchanged).
    approximate : {"none", "tanh", "sigmoid"}, optional
        The form the original computes. Default "none".
    inplace : bool or None, optional
        The in-place policy of its site (see `patch`). Default False.

    Raises
    ------
    ValueError
        `approximate` is not one of the three forms.

    Examples
    --------
    >>> import torch, fastgelu.torch as fgt
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU("tanh"))
    >>> _ = fgt.patch(model)
    >>> model[1]
    PatchedGELU(approximate='tanh', inplace=None, replaces GELU)
    """

    def __init__(self, original, approximate="none", inplace=False):
        super().__init__(approximate)
        self.inplace = inplace
        self.__dict__["original"] = original  # not a submodule: named_modules() and state_dict() as before

    def forward(self, input):
        """GELU(input) by fastgelu, in place where the site's policy allows; the original's forward for
        tensors fastgelu does not take."""
        if isinstance(input, torch.fx.Proxy):
            return fgt.gelu(input, self.approximate)
        if not _takes(input):
            return self.original(input)
        return _act(input, self.approximate, self.inplace)

    def extra_repr(self):
        return f"approximate={self.approximate!r}, inplace={self.inplace}, replaces {type(self.original).__name__}"


# ---- patch / unpatch ----------------------------------------------------------------------------------------

def _check_policy(inplace):
    if inplace not in (None, True, False):
        raise TypeError(f"fastgelu.torch.patch: inplace must be None, True or False; got {inplace!r}")


def patch(model, *, inplace=None, fuse_gated=True):
    """Put fastgelu's kernels into an existing model, in place: every GELU it recognises, and gated MLPs.

    Recognised by class name, then checked by behaviour on a probe (no other library is imported):
    ``torch.nn.GELU``; transformers' ``GELUActivation``, ``GELUTanh``, ``NewGELUActivation``,
    ``FastGELUActivation``, ``AccurateGELUActivation``, ``QuickGELUActivation``; timm's ``GELU``,
    ``GELUTanh``, ``QuickGELU`` become `PatchedGELU` modules. Gated MLPs (T5's ``T5DenseGatedActDense``,
    Llama/Gemma-style ``*MLP``, diffusers' ``GEGLU``, timm's ``GluMlp``) and diffusers' ``GELU`` and
    ``ApproximateGELU`` keep their object and parameters; only their forward is replaced. Any other module
    whose class name says GELU or GEGLU is left alone and listed in the report. The model keeps its
    ``state_dict`` keys, trains, pickles, and works under torch.compile and torch.export.

    Parameters
    ----------
    model : torch.nn.Module
        Changed in place.
    inplace : bool or None, optional
        Where a GELU's input is a projection's fresh output nothing else reads: None (default) computes it
        in place exactly when no autograd graph needs the input (inference mode, no_grad, a frozen model);
        False never; True always (a RuntimeError at a call where autograd would need the input).
    fuse_gated : bool, optional
        Run gated MLPs through `gelu_mul` (one pass for GELU(gate) * up). Default True.

    Returns
    -------
    PatchReport
        What was replaced and what was left alone, with the reasons.

    Raises
    ------
    TypeError
        `model` is not a ``torch.nn.Module``; `inplace` is not None, True or False; `fuse_gated` is not a
        bool.

    See Also
    --------
    unpatch : puts the original modules back.

    Examples
    --------
    >>> import torch, fastgelu.torch as fgt
    >>> model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.GELU(), torch.nn.Linear(64, 16))
    >>> report = fgt.patch(model)
    >>> print(report)
    fastgelu.torch.patch: 1 replaced, 0 left alone
      1: GELU -> activation, approximate='none', inplace=None
    >>> with torch.inference_mode():
    ...     y = model(torch.randn(2, 16))
    >>> fgt.unpatch(model)
    1
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"fastgelu.torch.patch: model must be a torch.nn.Module; got {type(model).__name__}")
    _check_policy(inplace)
    if not isinstance(fuse_gated, bool):
        raise TypeError(f"fastgelu.torch.patch: fuse_gated must be True or False; got {fuse_gated!r}")
    report = PatchReport()
    covered = set()  # paths of activation children a fused forward no longer calls
    for path, m in list(model.named_modules()):
        fused = m.__dict__.get("forward")
        if isinstance(fused, _Fused):  # patched before: so is its activation child
            covered.add(_join(path, fused.act_name))
            continue
        if path in covered or isinstance(m, PatchedGELU):
            continue
        if _patch_fused(m, path, inplace, fuse_gated, report, covered):
            continue
        _patch_activation(model, m, path, inplace, report)
    return report


def _patch_fused(m, path, inplace, fuse_gated, report, covered):
    found = _fused_kind(m)
    if found is None:
        return False
    kind, act_name = found
    gated = kind != "projection"
    if gated and not fuse_gated:
        return False
    cls = type(m).__name__
    if "forward" in m.__dict__:  # someone (accelerate's hooks, another patch) already wraps it
        report.left_alone.append(LeftAlone(path, cls, "its forward is already replaced by another wrapper"))
        return True
    if act_name is not None:
        form, why = _activation_form(m._modules[act_name])
        if form is None:
            return False  # not a GELU MLP (SiLU, ReLU...): its activation child is looked at on its own
    else:
        form = {"GEGLU": "none", "ApproximateGELU": "sigmoid"}.get(cls) or getattr(m, "approximate", "none")
    why = _probe_fused(m, kind, form)
    if why is not None:
        report.left_alone.append(LeftAlone(path, cls, why))
        return True
    policy = inplace if kind in ("t5", "llama", "projection") else False
    m.forward = _Fused(m, kind, form, policy, act_name)
    covered.add(_join(path, act_name))
    report.replaced.append(Replacement(path, cls, form, "gated" if gated else "projection", policy))
    return True


def _join(path, name):
    return None if name is None else f"{path}.{name}" if path else name


def _patch_activation(model, m, path, inplace, report):
    cls = type(m).__name__
    if cls not in _ACTIVATIONS and not _GELU_LIKE.search(cls):
        return
    if type(m).__module__.startswith("fastgelu."):  # fastgelu's own modules already
        return
    form, why = _activation_form(m)
    if form is None or not path:
        report.left_alone.append(LeftAlone(path, cls, why or "the model itself: patch its parent"))
        return
    parent_path, _, name = path.rpartition(".")
    parent = model.get_submodule(parent_path)
    new = PatchedGELU(m, form)
    setattr(parent, name, new)
    if inplace is not False and _inplace_site(parent, name, new):
        new.inplace = inplace
    report.replaced.append(Replacement(path, cls, form, "activation", new.inplace))


def unpatch(model):
    """Undo `patch`: every `PatchedGELU` goes back to the module it replaced (the same object), and every
    replaced forward is removed.

    Parameters
    ----------
    model : torch.nn.Module
        A model `patch` changed (anything else is left as it is).

    Returns
    -------
    int
        The number of modules restored.

    Raises
    ------
    TypeError
        `model` is not a ``torch.nn.Module``.

    Examples
    --------
    >>> import torch, fastgelu.torch as fgt
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU())
    >>> _ = fgt.patch(model)
    >>> fgt.unpatch(model), model[1]
    (1, GELU(approximate='none'))
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"fastgelu.torch.unpatch: model must be a torch.nn.Module; got {type(model).__name__}")
    n = 0
    for path, m in list(model.named_modules()):
        if isinstance(m.__dict__.get("forward"), _Fused):
            del m.__dict__["forward"]
            n += 1
        for name, c in list(m._modules.items()):
            if isinstance(c, PatchedGELU):
                setattr(m, name, c.original)
                n += 1
    return n
