"""ONNX for fastgelu's operators: the legacy exporter's symbolic (registered on import), a translation table
for the dynamo exporter (onnx_translation_table), and decompositions into PyTorch's own operators, which the
default exporter applies to operators it has no translation for."""
import torch

from ._torch_common import _SIGMOID_C, _SQRT_2_OVER_PI, _TANH_C
from ._torch_gated import _gelu_mul_op
from ._torch_ops import _gelu_op


# ---- the legacy exporter (torch.onnx.export(..., dynamo=False), jit.trace based) ----------------------------

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
    """A translation of ``fastgelu::gelu`` for the dynamo ONNX exporter's ``custom_translation_table``.

    Not needed for a plain ``torch.onnx.export(model, args)``: the default exporter already decomposes
    fastgelu's operators into PyTorch's GELU, sigmoid and multiply. The table makes the mapping explicit.

    Parameters
    ----------
    opset : int, optional
        The ONNX opset exported to. From 20 on, ``fastgelu::gelu`` becomes ONNX's ``Gelu`` with its
        `approximate` attribute; below, the equivalent ``Erf`` or ``Tanh`` graph. The sigmoid form is
        ``x * Sigmoid(1.702 x)`` at every opset. Default 20.

    Returns
    -------
    dict
        ``{operator: onnxscript function}``.

    Raises
    ------
    ImportError
        onnxscript is not installed (``pip install "fastgelu[onnx]"``).

    Notes
    -----
    ONNX Runtime then computes the graph with its own GELU: an exported model has ONNX Runtime's accuracy,
    not fastgelu's.

    Examples
    --------
    >>> import torch, fastgelu.torch as fgt
    >>> table = fgt.onnx_translation_table(opset=20)
    >>> list(table) == [torch.ops.fastgelu.gelu.default]
    True

    Then ``torch.onnx.export(model, args, "model.onnx", dynamo=True, custom_translation_table=table)``.
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
