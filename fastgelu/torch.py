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

import torch.autograd.forward_ad as _fwAD

from ._api import VARIANTS, _variant

__all__ = ["gelu", "gelu_", "GELU", "as_numpy", "onnx_translation_table"]

_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)

if not hasattr(torch.library, "register_vmap"):  # torch.library's Python-operator API is complete in 2.5
    raise ImportError(f"fastgelu.torch needs PyTorch >= 2.5 (torch.library.register_vmap); found "
                      f"{torch.__version__}. Upgrade torch, or use torch.nn.GELU / torch.nn.functional.gelu.")


def _check_approximate(approximate, who="fastgelu.torch"):
    _variant(approximate, who)


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
    return _view(t.detach())


# ---- the CPU kernels: fastgelu's ufuncs on views of the tensors -------------------------------------------

def _gelu_cpu(x, approximate="none"):
    fwd = _variant(approximate, "fastgelu::gelu")[0]
    _check_tensor(x, "x", "fastgelu::gelu")
    y = torch.empty_like(x)  # keeps x's strides when x is dense (transposed, permuted), else contiguous
    fwd(as_numpy(x), out=as_numpy(y))
    return y


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
    if out.shape != x.shape or out.dtype != x.dtype:
        raise ValueError(f"fastgelu::gelu_out: out must have x's shape and dtype {tuple(x.shape)}, "
                         f"{x.dtype}; got {tuple(out.shape)}, {out.dtype}")


def _gelu_inplace_cpu(x, approximate="none"):
    fwd = _variant(approximate, "fastgelu::gelu_")[0]
    _check_tensor(x, "x", "fastgelu::gelu_")
    _check_no_overlap(x)
    a = as_numpy(x)
    fwd(a, out=a)


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


# ---- fake (meta) implementations: shapes, dtypes and strides for tracers ----------------------------------

def _gelu_fake(x, approximate="none"):
    _check_approximate(approximate, "fastgelu::gelu")
    _check_dtype_layout(x, "x", "fastgelu::gelu")
    return torch.empty_like(x)


def _gelu_out_fake(x, out, approximate="none"):
    _check_approximate(approximate, "fastgelu::gelu_out")
    _check_dtype_layout(x, "x", "fastgelu::gelu_out")
    if out.shape != x.shape or out.dtype != x.dtype:
        raise ValueError(f"fastgelu::gelu_out: out must have x's shape and dtype {tuple(x.shape)}, "
                         f"{x.dtype}; got {tuple(out.shape)}, {out.dtype}")


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


# ---- registration ---------------------------------------------------------------------------------------

_lib = torch.library.Library("fastgelu", "DEF")  # noqa: the namespace belongs to this module
_lib.define("gelu(Tensor x, str approximate='none') -> Tensor")
# out as a positional argument: dynamo expects a tensor back from ops called with an out= keyword
_lib.define("gelu_out(Tensor x, Tensor(a!) out, str approximate='none') -> ()")
_lib.define("gelu_(Tensor(a!) x, str approximate='none') -> ()")
_lib.define("gelu_backward(Tensor grad_output, Tensor x, str approximate='none') -> Tensor")
_lib.impl("gelu", _gelu_cpu, "CPU")
_lib.impl("gelu_out", _gelu_out_cpu, "CPU")
_lib.impl("gelu_", _gelu_inplace_cpu, "CPU")
_lib.impl("gelu_backward", _gelu_backward_cpu, "CPU")
for _name, _fake in (("gelu", _gelu_fake), ("gelu_out", _gelu_out_fake), ("gelu_", _gelu_inplace_fake),
                     ("gelu_backward", _gelu_backward_fake)):
    torch.library.register_fake(f"fastgelu::{_name}", _fake, lib=_lib)

_gelu_op = torch.ops.fastgelu.gelu.default
_gelu_out_op = torch.ops.fastgelu.gelu_out.default
_gelu_inplace_op = torch.ops.fastgelu.gelu_.default
_gelu_backward_op = torch.ops.fastgelu.gelu_backward.default
_BELOW_AUTOGRAD = torch._C._after_autograd_keyset


# ---- GELU'' (only the gradient's own derivative needs it), in torch operations so it differentiates again --

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


# ---- autograd: reverse and forward mode, as autograd.Functions behind the operators' Autograd kernels ------
# (register_autograd has no forward mode; these Functions have jvp, setup_context and a generated vmap
# rule, so torch.func transforms compose with them.)

class _GELU(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x, approximate):
        if _unwatched(x):
            return _gelu_cpu(x, approximate)
        with torch._C._AutoDispatchBelowAutograd():
            return _gelu_op(x, approximate)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ctx.approximate = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return _gelu_backward(grad_output, x, ctx.approximate), None

    @staticmethod
    def jvp(ctx, x_t, _):
        (x,) = ctx.saved_tensors
        return _gelu_backward(x_t, x, ctx.approximate)


class _GELUBackward(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(grad_output, x, approximate):
        if _unwatched(grad_output, x):
            return _gelu_backward_cpu(grad_output, x, approximate)
        with torch._C._AutoDispatchBelowAutograd():
            return _gelu_backward_op(grad_output, x, approximate)

    @staticmethod
    def setup_context(ctx, inputs, output):
        grad_output, x, ctx.approximate = inputs
        ctx.save_for_backward(grad_output, x)
        ctx.save_for_forward(grad_output, x)

    @staticmethod
    def backward(ctx, gg):
        grad_output, x = ctx.saved_tensors
        d_grad_output = d_x = None
        if ctx.needs_input_grad[0]:
            d_grad_output = _gelu_backward(gg, x, ctx.approximate)
        if ctx.needs_input_grad[1]:
            d_x = gg * grad_output * _second_derivative(x, ctx.approximate)
        return d_grad_output, d_x, None

    @staticmethod
    def jvp(ctx, grad_output_t, x_t, _):
        grad_output, x = ctx.saved_tensors
        out = None
        if grad_output_t is not None:
            out = _gelu_backward(grad_output_t, x, ctx.approximate)
        if x_t is not None:
            term = grad_output * _second_derivative(x, ctx.approximate) * x_t
            out = term if out is None else out + term
        return out


def _functorch_active():
    return torch._C._are_functorch_transforms_active()


def _gelu_backward(grad_output, x, approximate):
    """grad_output * GELU'(x) inside formulas: under torch.func transforms through the Function itself (its
    custom_function_call must start at the transform's top), else through the operator."""
    if _functorch_active():
        return _GELUBackward.apply(grad_output, x, approximate)
    if _unwatched(grad_output, x):  # a plain backward (no create_graph): the kernel itself
        return _gelu_backward_cpu(grad_output, x, approximate)
    return _gelu_backward_op(grad_output, x, approximate)


def _refuse_functorch(name):
    raise RuntimeError(f"torch.ops.fastgelu.{name} called directly under a torch.func transform (grad, jacrev, "
                       f"jvp, ...), which PyTorch's custom operators do not support: call fastgelu.torch.gelu or "
                       f"fastgelu.torch.GELU instead (or torch.nn.GELU / torch.nn.functional.gelu).")


def _differentiating(*tensors):
    """Must autograd see this call: a tensor needing a gradient, or forward-mode AD in progress?"""
    return (torch.is_grad_enabled() and any(t.requires_grad for t in tensors)) or _fwAD._current_level >= 0


def _eager_function(cls):
    """`cls` in the old style (forward takes ctx): the same formulas without autograd.Function.apply's
    per-call signature binding (~10 us), for the operators' Autograd kernels outside torch.func."""
    def forward(ctx, *inputs):
        output = cls.forward(*inputs)
        cls.setup_context(ctx, inputs, output)
        return output
    eager = type(cls.__name__ + "Eager", (torch.autograd.Function,), {
        "forward": staticmethod(forward), "backward": staticmethod(cls.backward), "jvp": staticmethod(cls.jvp)})
    return super(torch.autograd.Function, eager).apply  # torch._C._FunctionBase.apply: autograd's own entry


# tensors left wrapped by a finished torch.func transform: Function.apply unwraps them, so must we
_unwrap_dead_wrappers = torch._functorch.utils.unwrap_dead_wrappers
_gelu_eager = _eager_function(_GELU)
_gelu_backward_eager = _eager_function(_GELUBackward)


def _gelu_autograd(keyset, self, approximate="none"):
    if _differentiating(self):
        if _functorch_active():
            _refuse_functorch("gelu")
        return _gelu_eager(*_unwrap_dead_wrappers((self, approximate)))
    return _gelu_op.redispatch(keyset & _BELOW_AUTOGRAD, self, approximate)


def _gelu_backward_autograd(keyset, grad_output, self, approximate="none"):
    if _differentiating(grad_output, self):
        if _functorch_active():
            _refuse_functorch("gelu_backward")
        return _gelu_backward_eager(*_unwrap_dead_wrappers((grad_output, self, approximate)))
    return _gelu_backward_op.redispatch(keyset & _BELOW_AUTOGRAD, grad_output, self, approximate)


def _has_tangent(t):
    return _fwAD._current_level >= 0 and _fwAD.unpack_dual(t).tangent is not None


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


_lib.impl("gelu", _gelu_autograd, "Autograd", with_keyset=True)
_lib.impl("gelu_backward", _gelu_backward_autograd, "Autograd", with_keyset=True)
_lib.impl("gelu_", _gelu_inplace_autograd, "Autograd", with_keyset=True)
_lib.impl("gelu_out", _gelu_out_autograd, "Autograd", with_keyset=True)


# ---- vmap: the operators are elementwise, so a batched call is one call on the whole batch -------------------

def _gelu_vmap(info, in_dims, self, approximate="none"):
    return _gelu_op(self, approximate), in_dims[0]


def _gelu_inplace_vmap(info, in_dims, self, approximate="none"):
    _gelu_inplace_op(self, approximate)
    return None, None


def _batch_first(t, bdim, batch_size):
    return t.movedim(bdim, 0) if bdim is not None else t.expand(batch_size, *t.shape)


def _gelu_backward_vmap(info, in_dims, grad_output, self, approximate="none"):
    gd, xd = in_dims[0], in_dims[1]
    if gd == xd:
        return _gelu_backward_op(grad_output, self, approximate), xd
    grad_output = _batch_first(grad_output, gd, info.batch_size)
    self = _batch_first(self, xd, info.batch_size)
    return _gelu_backward_op(grad_output, self, approximate), 0


torch.library.register_vmap("fastgelu::gelu", _gelu_vmap, lib=_lib)
torch.library.register_vmap("fastgelu::gelu_", _gelu_inplace_vmap, lib=_lib)
torch.library.register_vmap("fastgelu::gelu_backward", _gelu_backward_vmap, lib=_lib)


# ---- ONNX -------------------------------------------------------------------------------------------------

def _onnx_legacy_symbolic(opset):
    from torch.onnx import symbolic_helper

    @symbolic_helper.parse_args("v", "s")
    def symbolic(g, self, approximate="none"):
        if approximate == "sigmoid":
            c = g.op("Constant", value_t=torch.tensor(_SIGMOID_C))
            return g.op("Mul", self, g.op("Sigmoid", g.op("Mul", self, _cast_like(g, c, self))))
        if opset >= 20:
            return g.op("Gelu", self, approximate_s=approximate)
        return _onnx_gelu_graph(g, self, approximate)
    return symbolic


def _cast_like(g, c, like):
    return g.op("CastLike", c, like)


def _onnx_gelu_graph(g, x, approximate):
    """GELU for opsets before 20 (no Gelu op): the textbook formulas, as ONNX Runtime computes them."""
    def const(v):
        return _cast_like(g, g.op("Constant", value_t=torch.tensor(v)), x)
    half_x = g.op("Mul", x, const(0.5))
    if approximate == "tanh":
        inner = g.op("Mul", const(_SQRT_2_OVER_PI),
                     g.op("Add", x, g.op("Mul", const(_TANH_C), g.op("Mul", x, g.op("Mul", x, x)))))
        return g.op("Mul", half_x, g.op("Add", const(1.0), g.op("Tanh", inner)))
    erf = g.op("Erf", g.op("Mul", x, const(0.7071067811865476)))
    return g.op("Mul", half_x, g.op("Add", const(1.0), erf))


def _register_onnx_legacy():
    try:
        from torch.onnx import register_custom_op_symbolic
    except ImportError:  # a torch without the legacy exporter
        return
    for opset in (15, 20):  # CastLike needs 15; opsets 15-19 get the formula graph, 20+ the Gelu op
        register_custom_op_symbolic("fastgelu::gelu", _onnx_legacy_symbolic(opset), opset)


def onnx_translation_table(opset=20):
    """{operator: onnxscript function} for ``torch.onnx.export(..., dynamo=True,
    custom_translation_table=fastgelu.torch.onnx_translation_table())``: fastgelu::gelu becomes ONNX's Gelu
    (opset >= 20, with its `approximate` attribute) or the equivalent graph (older opsets, and the sigmoid form).
    """
    import onnxscript
    from onnxscript import opset18 as op

    def gelu(self, approximate: str = "none"):
        if approximate == "sigmoid":
            return op.Mul(self, op.Sigmoid(op.Mul(self, op.CastLike(_SIGMOID_C, self))))
        if opset >= 20:
            return onnxscript.opset20.Gelu(self, approximate=approximate)
        half_x = op.Mul(self, op.CastLike(0.5, self))
        if approximate == "tanh":
            cube = op.Mul(op.CastLike(_TANH_C, self), op.Mul(self, op.Mul(self, self)))
            inner = op.Mul(op.CastLike(_SQRT_2_OVER_PI, self), op.Add(self, cube))
            return op.Mul(half_x, op.Add(op.CastLike(1.0, self), op.Tanh(inner)))
        erf = op.Erf(op.Mul(self, op.CastLike(0.7071067811865476, self)))
        return op.Mul(half_x, op.Add(op.CastLike(1.0, self), erf))

    return {_gelu_op: gelu}


_register_onnx_legacy()


# ---- the Python API -----------------------------------------------------------------------------------------

def _untraced(t):
    """True when no tracer, transform or mode can watch an operator call on `t`, a dense CPU tensor: then
    the kernel (or, for a gradient, the autograd Function) may run without the dispatcher (~4 us less per
    call). Anything else goes through the operator. The watchers: dynamo (torch.compile, torch.export),
    jit.trace (and the legacy ONNX exporter), forward AD, dispatch modes (FakeTensor, make_fx, AOTAutograd,
    FlopCounter), torch.profiler (which records dispatcher calls), torch-function modes, tensor subclasses, and batched and functorch-wrapped tensors (seen in
    their dispatch keys, which also say: dense, CPU)."""
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


def _view(t):
    """as_numpy for a tensor that needs no gradient (saves the detach)."""
    if t.is_neg():  # a lazily negated view has no memory of its own to share: materialize it
        t = t.resolve_neg()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(_bfloat16())
    return t.numpy()


def gelu(input, approximate="none", *, out=None):
    """GELU of a CPU tensor by fastgelu's kernels (operator fastgelu::gelu); differentiable. Like
    torch.nn.functional.gelu, plus approximate="sigmoid" (x*sigmoid(1.702x)). out=: a tensor of input's shape
    and dtype to write into (operator fastgelu::gelu_out; not differentiable), returned."""
    pair = VARIANTS.get(approximate) if type(approximate) is str else None
    if pair is None:
        _check_approximate(approximate)
    if out is None and _untraced(input) and input.dtype in _DTYPES:
        if input.requires_grad and torch.is_grad_enabled():
            return _gelu_eager(input, approximate)  # what the operator's Autograd kernel would call
        y = torch.empty_like(input)  # the kernel itself, as _gelu_cpu runs it
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
    """GELU in place (operator fastgelu::gelu_); returns `input`. Not differentiable (GELU's gradient needs
    the input it overwrites)."""
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
    """torch.nn.GELU with fastgelu's kernels (CPU). approximate: "none", "tanh" or "sigmoid".
    Scriptable (torch.jit.script calls the operator directly)."""

    approximate: str

    def __init__(self, approximate="none"):
        super().__init__()
        _check_approximate(approximate)
        self.approximate = approximate

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if torch.jit.is_scripting():
            return torch.ops.fastgelu.gelu(input, self.approximate)
        return gelu(input, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


# ---- gated GELU: GELU(gate) * up ----------------------------------------------------------------------------
#
#     fastgelu::gelu_mul(Tensor gate, Tensor up, str approximate='none') -> Tensor
#     fastgelu::gelu_mul_backward(Tensor grad_output, Tensor gate, Tensor up, str approximate='none')
#         -> (Tensor, Tensor)
#
# gate and up broadcast against each other (one dtype); gelu_mul_backward returns (dgate, dup) in the broadcast
# shape, summed back to each input's shape by the autograd formula. Reverse mode (double backward through
# GELU'' in torch operations), forward mode, vmap and fake implementations as for fastgelu::gelu.

def _check_pair(gate, up, who):
    _check_tensor(gate, "gate", who)
    _check_tensor(up, "up", who)
    if gate.dtype != up.dtype:
        raise TypeError(f"{who}: gate and up must have one dtype; got {gate.dtype} and {up.dtype}")
    try:
        return torch.broadcast_shapes(gate.shape, up.shape)
    except RuntimeError:
        raise ValueError(f"{who}: gate and up shapes {tuple(gate.shape)} and {tuple(up.shape)} do not "
                         f"broadcast") from None


def _gated_ufuncs(approximate, who):
    from ._api import _gated
    return _gated(approximate, who)


def _empty_for(shape, like, other):
    # the layout of an input that already has the result's shape (empty_like keeps dense strides)
    if like.shape == shape:
        return torch.empty_like(like)
    if other.shape == shape:
        return torch.empty_like(other)
    return torch.empty(shape, dtype=like.dtype)


def _gelu_mul_cpu(gate, up, approximate="none"):
    fwd = _gated_ufuncs(approximate, "fastgelu::gelu_mul")[0]
    shape = _check_pair(gate, up, "fastgelu::gelu_mul")
    y = _empty_for(shape, gate, up)
    fwd(as_numpy(gate), as_numpy(up), out=as_numpy(y))
    return y


def _gelu_mul_backward_cpu(grad_output, gate, up, approximate="none"):
    grad = _gated_ufuncs(approximate, "fastgelu::gelu_mul_backward")[1]
    shape = _check_pair(gate, up, "fastgelu::gelu_mul_backward")
    _check_tensor(grad_output, "grad_output", "fastgelu::gelu_mul_backward")
    shape = torch.broadcast_shapes(shape, grad_output.shape)
    g = grad_output if grad_output.dtype == gate.dtype else grad_output.to(gate.dtype)
    dgate, dup = _empty_for(shape, gate, up), _empty_for(shape, gate, up)
    grad(as_numpy(gate), as_numpy(up), as_numpy(g), out=(as_numpy(dgate), as_numpy(dup)))
    return dgate, dup


def _gelu_mul_fake(gate, up, approximate="none"):
    _gated_ufuncs(approximate, "fastgelu::gelu_mul")
    _check_dtype_layout(gate, "gate", "fastgelu::gelu_mul")
    _check_dtype_layout(up, "up", "fastgelu::gelu_mul")
    if gate.dtype != up.dtype:
        raise TypeError(f"fastgelu::gelu_mul: gate and up must have one dtype; got {gate.dtype} and {up.dtype}")
    return _empty_for(torch.broadcast_shapes(gate.shape, up.shape), gate, up)


def _gelu_mul_backward_fake(grad_output, gate, up, approximate="none"):
    _gated_ufuncs(approximate, "fastgelu::gelu_mul_backward")
    shape = torch.broadcast_shapes(gate.shape, up.shape, grad_output.shape)
    return _empty_for(shape, gate, up), _empty_for(shape, gate, up)


_lib.define("gelu_mul(Tensor gate, Tensor up, str approximate='none') -> Tensor")
_lib.define("gelu_mul_backward(Tensor grad_output, Tensor gate, Tensor up, str approximate='none') "
            "-> (Tensor, Tensor)")
_lib.impl("gelu_mul", _gelu_mul_cpu, "CPU")
_lib.impl("gelu_mul_backward", _gelu_mul_backward_cpu, "CPU")
torch.library.register_fake("fastgelu::gelu_mul", _gelu_mul_fake, lib=_lib)
torch.library.register_fake("fastgelu::gelu_mul_backward", _gelu_mul_backward_fake, lib=_lib)
_gelu_mul_op = torch.ops.fastgelu.gelu_mul.default
_gelu_mul_backward_op = torch.ops.fastgelu.gelu_mul_backward.default


def _reduce_to(t, shape):
    return t if t.shape == shape else t.sum_to_size(shape)


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


class _GELUMul(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(gate, up, approximate):
        if _unwatched(gate, up):
            return _gelu_mul_cpu(gate, up, approximate)
        with torch._C._AutoDispatchBelowAutograd():
            return _gelu_mul_op(gate, up, approximate)

    @staticmethod
    def setup_context(ctx, inputs, output):
        gate, up, ctx.approximate = inputs
        ctx.save_for_backward(gate, up)
        ctx.save_for_forward(gate, up)

    @staticmethod
    def backward(ctx, grad_output):
        gate, up = ctx.saved_tensors
        dgate, dup = _gelu_mul_backward_any(grad_output, gate, up, ctx.approximate)
        return _reduce_to(dgate, gate.shape), _reduce_to(dup, up.shape), None

    @staticmethod
    def jvp(ctx, gate_t, up_t, _):
        gate, up = ctx.saved_tensors
        out = None
        if gate_t is not None:
            out = _gelu_backward(gate_t * up, gate, ctx.approximate)
        if up_t is not None:
            term = _gelu_mul_any(gate, up_t, ctx.approximate)
            out = term if out is None else out + term
        return out


class _GELUMulBackward(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(grad_output, gate, up, approximate):
        if _unwatched(grad_output, gate, up):
            return _gelu_mul_backward_cpu(grad_output, gate, up, approximate)
        with torch._C._AutoDispatchBelowAutograd():
            return _gelu_mul_backward_op(grad_output, gate, up, approximate)

    @staticmethod
    def setup_context(ctx, inputs, output):
        grad_output, gate, up, ctx.approximate = inputs
        ctx.save_for_backward(grad_output, gate, up)
        ctx.save_for_forward(grad_output, gate, up)

    @staticmethod
    def backward(ctx, g_dgate, g_dup):
        # dgate = dy up f'(gate), dup = dy f(gate)
        dy, gate, up = ctx.saved_tensors
        a = ctx.approximate
        d_dy = d_gate = d_up = None
        if ctx.needs_input_grad[0]:
            d_dy = _reduce_to(_gelu_backward(g_dgate * up, gate, a) + _gelu_mul_any(gate, g_dup, a), dy.shape)
        if ctx.needs_input_grad[1]:
            d_gate = _reduce_to(g_dgate * dy * up * _second_derivative(gate, a)
                                + _gelu_backward(g_dup * dy, gate, a), gate.shape)
        if ctx.needs_input_grad[2]:
            d_up = _reduce_to(_gelu_backward(g_dgate * dy, gate, a), up.shape)
        return d_dy, d_gate, d_up, None

    @staticmethod
    def jvp(ctx, dy_t, gate_t, up_t, _):
        dy, gate, up = ctx.saved_tensors
        a = ctx.approximate
        zero = torch.zeros((), dtype=gate.dtype)
        dy_t = zero if dy_t is None else dy_t
        gate_t = zero if gate_t is None else gate_t
        up_t = zero if up_t is None else up_t
        dgate_t = _gelu_backward(dy_t * up + dy * up_t, gate, a) + dy * up * _second_derivative(gate, a) * gate_t
        dup_t = _gelu_mul_any(gate, dy_t, a) + _gelu_backward(dy * gate_t, gate, a)
        return dgate_t, dup_t


_gelu_mul_eager = _eager_function(_GELUMul)
_gelu_mul_backward_eager = _eager_function(_GELUMulBackward)


def _gelu_mul_autograd(keyset, gate, up, approximate="none"):
    if _differentiating(gate, up):
        if _functorch_active():
            _refuse_functorch("gelu_mul")
        return _gelu_mul_eager(*_unwrap_dead_wrappers((gate, up, approximate)))
    return _gelu_mul_op.redispatch(keyset & _BELOW_AUTOGRAD, gate, up, approximate)


def _gelu_mul_backward_autograd(keyset, grad_output, gate, up, approximate="none"):
    if _differentiating(grad_output, gate, up):
        if _functorch_active():
            _refuse_functorch("gelu_mul_backward")
        return _gelu_mul_backward_eager(*_unwrap_dead_wrappers((grad_output, gate, up, approximate)))
    return _gelu_mul_backward_op.redispatch(keyset & _BELOW_AUTOGRAD, grad_output, gate, up, approximate)


_lib.impl("gelu_mul", _gelu_mul_autograd, "Autograd", with_keyset=True)
_lib.impl("gelu_mul_backward", _gelu_mul_backward_autograd, "Autograd", with_keyset=True)


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


torch.library.register_vmap("fastgelu::gelu_mul", _gelu_mul_vmap, lib=_lib)
torch.library.register_vmap("fastgelu::gelu_mul_backward", _gelu_mul_backward_vmap, lib=_lib)


def gelu_mul(gate, up, approximate="none"):
    """GELU(gate) * up of CPU tensors in one pass (operator fastgelu::gelu_mul); differentiable in gate and up,
    which broadcast against each other. approximate: "none", "tanh" (Gemma's) or "sigmoid"."""
    _gated_ufuncs(approximate, "fastgelu.torch.gelu_mul")
    if isinstance(gate, torch.fx.Proxy) or isinstance(up, torch.fx.Proxy):
        return _gelu_mul_op(gate, up, approximate)
    _check_pair(gate, up, "fastgelu.torch.gelu_mul")
    if _functorch_active():
        return _GELUMul.apply(gate, up, approximate)
    if _unwatched(gate, up):
        return _gelu_mul_cpu(gate, up, approximate)
    return _gelu_mul_op(gate, up, approximate)


def geglu(input, approximate="none", dim=-1):
    """GELU(gate) * up with gate and up the first and second halves of `input` along `dim` (vLLM/sglang's
    `gelu_and_mul`); an odd length along `dim` is a ValueError."""
    if not isinstance(input, torch.fx.Proxy):
        _check_tensor(input, "input", "fastgelu.torch.geglu")
        if input.dim() == 0:
            raise ValueError("fastgelu.torch.geglu: input must have at least one dimension")
        n = input.shape[dim]
        if n % 2:
            raise ValueError(f"fastgelu.torch.geglu: input has odd length {n} along dim {dim}; the gate and up "
                             f"halves need an even length")
    gate, up = input.chunk(2, dim)
    return gelu_mul(gate, up, approximate)


class GeGLU(torch.nn.Module):
    """Gated GELU: ``GELU(gate) * up`` with gate and up the two halves of the input along `dim` (gate first),
    the activation of Gemma's (approximate="tanh") and T5 v1.1's MLPs. Called with two tensors, ``m(gate, up)``
    takes them separately. Scriptable."""

    approximate: str
    dim: int

    def __init__(self, approximate="none", dim=-1):
        super().__init__()
        _check_approximate(approximate, "fastgelu.torch.GeGLU")
        self.approximate = approximate
        self.dim = int(dim)

    def forward(self, input: torch.Tensor, up: torch.Tensor | None = None) -> torch.Tensor:
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


# ---- ONNX with the default exporter: decompositions into PyTorch's own operators ----------------------------
# torch.onnx.export (the dynamo exporter, PyTorch >= 2.9's default) decomposes every operator it has no
# translation for with torch._decomp's table before translating; the entries below turn fastgelu's forward
# operators into aten.gelu / sigmoid / mul, which it translates to ONNX's Gelu (opset >= 20) or Erf/Tanh
# graphs. A custom_translation_table (onnx_translation_table()) still takes precedence. torch.compile and
# torch.export keep the operators: neither applies this table (they use the core ATen decompositions).

def _gelu_decomposition(x, approximate="none"):
    if approximate == "sigmoid":
        return x * torch.sigmoid(x * _SIGMOID_C)
    return torch.nn.functional.gelu(x, approximate=approximate)


def _gelu_mul_decomposition(gate, up, approximate="none"):
    return _gelu_decomposition(gate, approximate) * up


def _register_decompositions():
    try:
        from torch._decomp import decomposition_table
    except ImportError:
        return
    decomposition_table.setdefault(_gelu_op, _gelu_decomposition)
    decomposition_table.setdefault(_gelu_mul_op, _gelu_mul_decomposition)


_register_decompositions()
__all__ += ["gelu_mul", "geglu", "GeGLU"]

from ._torch_patch import patch, unpatch, PatchedGELU, PatchReport  # noqa: E402,F401  (model patching)
