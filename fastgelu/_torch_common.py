"""What fastgelu's PyTorch operators share: tensor checks, NumPy views of tensors, the test for a call no
tracer can watch, the operator library, and the ladder each operator climbs (CPU kernel, fake kernel,
autograd kernel over an autograd.Function, vmap rule), written once for the plain (_torch_ops) and the
gated (_torch_gated) operators. fastgelu.torch imports torch first and says what is missing."""
import operator
import sys

import torch
import torch.autograd.forward_ad as _fwAD

from ._api import _variant
from .ufuncs import _kernels

_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


# ---- checks -------------------------------------------------------------------------------------------------

def _check_approximate(approximate, who="fastgelu.torch"):
    _variant(approximate, who)


def _dim_arg(dim, who):
    """dim as an int: a TypeError naming it for anything else (a float is never truncated; bool is refused,
    as PyTorch's own argument parser does)."""
    if isinstance(dim, bool):
        raise TypeError(f"{who}: dim must be an integer; got bool")
    try:
        return operator.index(dim)
    except TypeError:
        raise TypeError(f"{who}: dim must be an integer; got {type(dim).__name__}") from None


def _check_dim(dim, ndim, who):
    """dim checked against a tensor of ndim >= 1 dimensions: IndexError as PyTorch's own when out of range."""
    dim = _dim_arg(dim, who)
    if not -ndim <= dim < ndim:
        raise IndexError(f"{who}: dim out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got "
                         f"{dim})")
    return dim


def _check_tensor(t, name="input", who="fastgelu.torch.gelu"):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{who}: {name} must be a torch.Tensor; got {type(t).__name__}")
    if t.device.type != "cpu":
        raise TypeError(f"{who}: {name} is on {t.device}; fastgelu computes on CPU tensors only "
                        f"(use torch.nn.functional.gelu / torch.nn.GELU on other devices)")
    _check_dtype_layout(t, name, who)


def _check_dtype_layout(t, name, who):
    if t.dtype not in _DTYPES:
        raise TypeError(f"{who}: {name} has dtype {t.dtype}; supported: float32, float64, "
                        f"float16, bfloat16")
    if t.layout != torch.strided:
        raise TypeError(f"{who}: {name} has layout {t.layout}; only dense (strided) tensors")


# ---- NumPy views of tensors ---------------------------------------------------------------------------------

def _bfloat16():
    try:
        import ml_dtypes
    except ImportError as e:
        raise TypeError('fastgelu.torch: bfloat16 tensors need ml_dtypes: pip install "fastgelu[bf16]"') from e
    return ml_dtypes.bfloat16


def as_numpy(t):
    """A NumPy array over the memory of CPU tensor `t`: same shape and strides, no copy.

    Writing into the array writes into the tensor, so fastgelu's NumPy functions can compute into a tensor's
    memory (``fastgelu.gelu(a, out=a)``). Autograd does not see such writes.

    Parameters
    ----------
    t : torch.Tensor
        A CPU tensor. bfloat16, which NumPy lacks, needs ml_dtypes (the array's dtype is
        ``ml_dtypes.bfloat16``).

    Returns
    -------
    numpy.ndarray
        The view.

    Raises
    ------
    TypeError
        `t` is on another device than the CPU, or has a dtype NumPy cannot view (PyTorch's own error).

    Examples
    --------
    >>> import torch, fastgelu, fastgelu.torch as fgt
    >>> t = torch.tensor([-1.0, 0.0, 1.0])
    >>> a = fgt.as_numpy(t)
    >>> _ = fastgelu.gelu(a, out=a)
    >>> t.round(decimals=4)
    tensor([-0.1587,  0.0000,  0.8413])
    """
    return _view(t.detach())


def _view(t):
    """as_numpy for a tensor that needs no gradient (saves the detach)."""
    if t.is_neg():  # a lazily negated view has no memory of its own to share: materialize it
        t = t.resolve_neg()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(_bfloat16())
    return t.numpy()


# ---- who watches a call -------------------------------------------------------------------------------------

def _untraced(t):
    """True when no tracer, transform or mode can watch an operator call on `t`, a dense CPU tensor: then
    the kernel (or, for a gradient, the autograd Function) may run without the dispatcher (docs/pytorch.md,
    "Eager call overhead"). Anything else goes through the operator. The watchers: dynamo (torch.compile, torch.export),
    jit.trace (and the legacy ONNX exporter), forward AD, dispatch modes (FakeTensor, make_fx, AOTAutograd,
    FlopCounter), torch.profiler (which records dispatcher calls), torch-function modes, tensor subclasses,
    and batched and functorch-wrapped tensors (seen in their dispatch keys, which also say: dense, CPU)."""
    return not (_compiling()  # first: dynamo folds it to True and must not meet the checks after it
                or _fwAD._current_level >= 0 or _tracing_state() is not None
                or _dispatch_modes() or _function_modes() or _profiling()) and type(t) is torch.Tensor \
        and _dispatch_keys(t) in _PLAIN_KEYS


def _unwatched(*tensors):
    """_untraced, and autograd does not need to see the call either."""
    grad = torch.is_grad_enabled()
    return all(_untraced(t) and not (grad and t.requires_grad) for t in tensors)


_tracing_state = torch._C._get_tracing_state
_dispatch_keys = torch._C._dispatch_keys
with torch.inference_mode():
    _INFERENCE_KEYS = _dispatch_keys(torch.empty(0))
_PLAIN_KEYS = (_dispatch_keys(torch.empty(0)), _INFERENCE_KEYS)  # of a CPU tensor, of an inference-mode one
_dispatch_modes = torch._C._len_torch_dispatch_stack
_function_modes = torch._C._is_torch_function_mode_enabled
_compiling = torch.compiler.is_compiling
_profiling = torch._C._autograd._profiler_enabled


def _functorch_active():
    return torch._C._are_functorch_transforms_active()


def _differentiating(*tensors):
    """Must autograd see this call: a tensor needing a gradient, or forward-mode AD in progress?"""
    return (torch.is_grad_enabled() and any(t.requires_grad for t in tensors)) or _fwAD._current_level >= 0


def _has_tangent(t):
    return _fwAD._current_level >= 0 and _fwAD.unpack_dual(t).tangent is not None


# ---- the ladder: operator, CPU and fake kernels, autograd, vmap ---------------------------------------------

_lib = torch.library.Library("fastgelu", "DEF")  # noqa: the namespace belongs to this package
_BELOW_AUTOGRAD = torch._C._after_autograd_keyset


def _name_intra_op_pool():
    """Tell the threading policy that PyTorch's intra-op workers may be spinning from its last parallel op:
    they are this process's, not other load (inside a model, counting them ran most activation calls on one
    thread). Before every kernel call of fastgelu.torch."""
    _kernels._host_pool(torch.get_num_threads())


def _beside_intra_op_pool(cpu):
    """A CPU kernel (decorator) that names PyTorch's pool first (_name_intra_op_pool)."""
    def kernel(*args, **kwargs):
        _name_intra_op_pool()
        return cpu(*args, **kwargs)
    return kernel


_OPS = []
_inductor_done = False


def _inductor_fallbacks():
    """Make Inductor's fallbacks (the eager CPU kernel inside a compiled graph) for our operators ourselves.
    Inductor makes one by itself for an operator it cannot lower, except that, when the environment variable CI
    is set, it refuses an operator that torch._decomp's table can decompose, and _torch_onnx puts gelu and
    gelu_mul there for the ONNX exporter. Inductor is loaded before it lowers a graph it has traced through these
    fake kernels, so the first fake call after that registers them; importing Inductor here would cost seconds."""
    global _inductor_done
    lowering = sys.modules.get("torch._inductor.lowering")
    if _inductor_done or lowering is None:
        return
    _inductor_done = True
    try:
        for op in _OPS:
            if op not in lowering.lowerings:
                tag = torch._library.utils.get_layout_constraint_tag(op, with_default=True)
                lowering.make_fallback(op, layout_constraint=lowering.tag_to_layout_constraint(tag), warn=False,
                                       override_decomp=True)
    except (AttributeError, TypeError, ImportError):  # a PyTorch without these: Inductor's own fallback acts
        pass


def _operator(schema, cpu, fake):
    """Define fastgelu::<schema> with its CPU and fake (meta) kernels; the operator's default overload."""
    name = schema.split("(", 1)[0]
    _lib.define(schema)
    _lib.impl(name, cpu, "CPU")

    def traced(*args, **kwargs):
        _inductor_fallbacks()
        return fake(*args, **kwargs)

    torch.library.register_fake(f"fastgelu::{name}", traced, lib=_lib)
    op = getattr(torch.ops.fastgelu, name).default
    _OPS.append(op)
    return op


def _function(name, cpu, op, backward, jvp):
    """An autograd.Function over operator `op` whose inputs are tensors then `approximate`: forward runs
    the CPU kernel itself when nothing watches the call (else the operator below autograd) and saves the
    tensors; backward(ctx, *grads) and jvp(ctx, *tangents, _) are the formulas. (register_autograd has no
    forward mode; a Function has jvp, setup_context and a generated vmap rule, so torch.func transforms
    compose with it.)"""
    def forward(*inputs):
        if _unwatched(*inputs[:-1]):
            return cpu(*inputs)
        with torch._C._AutoDispatchBelowAutograd():
            return op(*inputs)

    def setup_context(ctx, inputs, output):
        ctx.approximate = inputs[-1]
        ctx.save_for_backward(*inputs[:-1])
        ctx.save_for_forward(*inputs[:-1])

    return type(name, (torch.autograd.Function,), {
        "generate_vmap_rule": True, "forward": staticmethod(forward),
        "setup_context": staticmethod(setup_context), "backward": staticmethod(backward),
        "jvp": staticmethod(jvp)})


def _eager_function(cls):
    """`cls` in the old style (forward takes ctx): the same formulas without autograd.Function.apply's
    per-call signature binding, for the operators' Autograd kernels outside torch.func."""
    def forward(ctx, *inputs):
        output = cls.forward(*inputs)
        cls.setup_context(ctx, inputs, output)
        return output
    eager = type(cls.__name__ + "Eager", (torch.autograd.Function,), {
        "forward": staticmethod(forward), "backward": staticmethod(cls.backward), "jvp": staticmethod(cls.jvp)})
    return super(torch.autograd.Function, eager).apply  # torch._C._FunctionBase.apply: autograd's own entry


# tensors left wrapped by a finished torch.func transform: Function.apply unwraps them, so must we
_unwrap_dead_wrappers = torch._functorch.utils.unwrap_dead_wrappers


def _refuse_functorch(name):
    raise RuntimeError(f"torch.ops.fastgelu.{name} called directly under a torch.func transform (grad, jacrev, "
                       f"jvp, ...), which PyTorch's custom operators do not support: call fastgelu.torch.gelu or "
                       f"fastgelu.torch.GELU instead (or torch.nn.GELU / torch.nn.functional.gelu).")


def _differentiable(op, function, ntensors):
    """Register the Autograd kernel of `op` (ntensors tensors, then approximate): `function`'s formulas when
    the call is differentiated, else the operator below autograd. Returns the eager apply of `function`."""
    eager = _eager_function(function)
    name = op._schema.name.split("::", 1)[1]

    def kernel(keyset, *args):
        if len(args) == ntensors:  # the dispatcher leaves out a trailing argument equal to its default
            args += ("none",)
        if _differentiating(*args[:ntensors]):
            if _functorch_active():
                _refuse_functorch(name)
            return eager(*_unwrap_dead_wrappers(args))
        return op.redispatch(keyset & _BELOW_AUTOGRAD, *args)

    _lib.impl(name, kernel, "Autograd", with_keyset=True)
    return eager


def _batch_first(t, bdim, batch_size):
    return t.movedim(bdim, 0) if bdim is not None else t.expand(batch_size, *t.shape)


def _vmap(op, rule):
    torch.library.register_vmap(str(op._schema.name), rule, lib=_lib)


# ---- GELU'' (only the gradients' own derivatives need it), in torch operations so it differentiates again ----

_SQRT_2_OVER_PI = 0.7978845608028654
_INV_SQRT_2PI = 0.3989422804014327
_TANH_C = 0.044715
_SIGMOID_C = 1.702


def _second_derivative(x, approximate):
    """GELU''(x) in torch operations (differentiable again)."""
    if approximate == "none":  # d/dx (Phi + x phi) = 2 phi - x^2 phi
        return _INV_SQRT_2PI * torch.exp(-0.5 * x * x) * (2.0 - x * x)
    if approximate == "tanh":  # y = x/2 (1 + tanh u), u = k (x + c x^3)
        u1 = _SQRT_2_OVER_PI * (1.0 + 3.0 * _TANH_C * x * x)
        u2 = 6.0 * _SQRT_2_OVER_PI * _TANH_C * x
        t = torch.tanh(_SQRT_2_OVER_PI * (x + _TANH_C * x * x * x))
        return (1.0 - t * t) * (u1 - x * t * u1 * u1 + 0.5 * x * u2)
    s = torch.sigmoid(_SIGMOID_C * x)  # y = x s(a x)
    return _SIGMOID_C * s * (1.0 - s) * (2.0 + _SIGMOID_C * x * (1.0 - 2.0 * s))
