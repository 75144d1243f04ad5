"""fastgelu.torch's gated calls (gelu_mul, geglu, GeGLU): values against PyTorch and float64, autograd (double
backward, forward mode, broadcasting), vmap and torch.func, the tools (compile fullgraph, export, jit.trace /
script, fx), and ONNX export with default arguments run in ONNX Runtime -- also for fgt.GELU / fgt.gelu."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import fastgelu  # noqa: E402
import fastgelu.torch as fgt  # noqa: E402

from common import APPROXIMATE  # noqa: E402
F = torch.nn.functional


def torch_gelu(x, approximate):
    if approximate == "sigmoid":
        return x * torch.sigmoid(1.702 * x)
    return F.gelu(x, approximate=approximate)


def pair(seed, shape=(5, 8), dtype=torch.float32, requires_grad=False):
    g = torch.Generator().manual_seed(seed)
    gate = (torch.randn(shape, generator=g) * 2).to(dtype).requires_grad_(requires_grad)
    up = torch.randn(shape, generator=g).to(dtype).requires_grad_(requires_grad)
    return gate, up


class MLP(torch.nn.Module):
    """A Gemma/T5-style gated MLP: down(GELU(x W_gate) * (x W_up)), the gate and up projections fused."""

    def __init__(self, approximate="tanh", how="module", seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.gate_up = torch.nn.Linear(8, 32)
        self.down = torch.nn.Linear(16, 4)
        self.act = fgt.GeGLU(approximate)
        self.approximate, self.how = approximate, how

    def forward(self, x):
        h = self.gate_up(x)
        if self.how == "module":
            return self.down(self.act(h))
        if self.how == "geglu":
            return self.down(fgt.geglu(h, self.approximate))
        gate, up = h.chunk(2, -1)
        return self.down(fgt.gelu_mul(gate, up, self.approximate))


def inputs(seed, n=5):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 8, generator=g) * 2


# ---- values ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("approximate", APPROXIMATE)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_values_are_the_numpy_ufuncs_and_close_to_pytorch(approximate, dtype):
    gate, up = pair(1, (64, 33), dtype)
    y = fgt.gelu_mul(gate, up, approximate)
    assert y.dtype == dtype and y.shape == gate.shape
    want = fastgelu.gelu_mul(fgt.as_numpy(gate), fgt.as_numpy(up), approximate)
    assert np.array_equal(fgt.as_numpy(y), want)
    ref = (torch_gelu(gate.double(), approximate) * up.double()).to(dtype)
    tol = {torch.float32: 1e-6, torch.float64: 1e-12, torch.float16: 1e-3, torch.bfloat16: 8e-3}[dtype]
    torch.testing.assert_close(y, ref, rtol=tol, atol=tol)
    x = torch.cat([gate, up], dim=1)
    assert torch.equal(fgt.geglu(x, approximate, dim=1), y)
    assert torch.equal(fgt.GeGLU(approximate, dim=1)(x), y)
    assert torch.equal(fgt.GeGLU(approximate)(gate, up), y)


def test_broadcasting_and_strided_inputs():
    gate, up = pair(2, (6, 10))
    row = up[0]
    assert torch.equal(fgt.gelu_mul(gate, row), fgt.gelu_mul(gate, row.expand(6, 10).contiguous()))
    assert torch.equal(fgt.gelu_mul(gate.t(), up.t()), fgt.gelu_mul(gate, up).t())


def test_geglu_odd_length_and_bad_arguments():
    with pytest.raises(ValueError, match="odd length 7 along dim -1"):
        fgt.geglu(torch.ones(3, 7))
    with pytest.raises(ValueError, match="approximate"):
        fgt.gelu_mul(torch.ones(2), torch.ones(2), "erf")
    with pytest.raises(TypeError, match="one dtype"):
        fgt.gelu_mul(torch.ones(2), torch.ones(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="do not broadcast"):
        fgt.gelu_mul(torch.ones(2), torch.ones(3))
    with pytest.raises(TypeError, match="gate must be a torch.Tensor"):
        fgt.gelu_mul(np.ones(2), torch.ones(2))
    with pytest.raises(TypeError, match="dtype"):
        fgt.gelu_mul(torch.ones(2, dtype=torch.int32), torch.ones(2, dtype=torch.int32))


# ---- autograd ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_gradients_match_pytorch_autograd(approximate):
    gate, up = pair(3, (40, 16), torch.float64, requires_grad=True)
    dy = torch.randn(40, 16, dtype=torch.float64)
    dg, du = torch.autograd.grad(fgt.gelu_mul(gate, up, approximate), (gate, up), dy)
    wg, wu = torch.autograd.grad(torch_gelu(gate, approximate) * up, (gate, up), dy)
    torch.testing.assert_close(dg, wg, rtol=1e-12, atol=1e-13)
    torch.testing.assert_close(du, wu, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_gradcheck_gradgradcheck_forward_mode_and_batched(approximate):
    gate, up = pair(4, (3, 6), torch.float64, requires_grad=True)
    f = lambda a, b: fgt.gelu_mul(a, b, approximate)  # noqa: E731
    assert torch.autograd.gradcheck(f, (gate, up), check_forward_ad=True, check_batched_grad=True)
    assert torch.autograd.gradgradcheck(f, (gate, up), check_fwd_over_rev=True, check_batched_grad=True)
    row = torch.randn(6, dtype=torch.float64, requires_grad=True)   # broadcast: gradients summed to shape
    assert torch.autograd.gradcheck(f, (gate, row), check_batched_grad=True)
    x = torch.randn(3, 8, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda t: fgt.geglu(t, approximate), (x,))


def test_backward_op_values():
    gate, up = pair(5, (7, 9), torch.float32)
    dy = torch.randn(7, 9)
    dg, du = torch.ops.fastgelu.gelu_mul_backward(dy, gate, up, "tanh")
    wg, wu = fastgelu.gelu_mul_grad(gate.numpy(), up.numpy(), dy.numpy(), "tanh")
    assert np.array_equal(dg.numpy(), wg) and np.array_equal(du.numpy(), wu)


@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_torch_func_transforms(approximate):
    gate, up = pair(6, (4, 5), torch.float64)
    f = lambda a, b: fgt.gelu_mul(a, b, approximate).sum()  # noqa: E731
    g = lambda a, b: (torch_gelu(a, approximate) * b).sum()  # noqa: E731
    for got, want in zip(torch.func.grad(f, argnums=(0, 1))(gate, up), torch.func.grad(g, argnums=(0, 1))(gate, up)):
        torch.testing.assert_close(got, want)
    torch.testing.assert_close(torch.func.vmap(lambda a, b: fgt.gelu_mul(a, b, approximate))(gate, up),
                               torch_gelu(gate, approximate) * up)
    # one side unbatched: vmap broadcasts it
    torch.testing.assert_close(torch.func.vmap(lambda a: fgt.gelu_mul(a, up[0], approximate))(gate),
                               torch_gelu(gate, approximate) * up[0])
    h = torch.func.hessian(lambda a: fgt.gelu_mul(a, up[0], approximate).sum())(gate[0])
    hw = torch.func.hessian(lambda a: (torch_gelu(a, approximate) * up[0]).sum())(gate[0])
    torch.testing.assert_close(h, hw)
    _, t = torch.func.jvp(lambda a: fgt.gelu_mul(a, up, approximate), (gate,), (torch.ones_like(gate),))
    _, tw = torch.func.jvp(lambda a: torch_gelu(a, approximate) * up, (gate,), (torch.ones_like(gate),))
    torch.testing.assert_close(t, tw)


def test_opcheck():
    for approximate in APPROXIMATE:
        gate, up = pair(7, (4, 6), torch.float64, requires_grad=True)
        torch.library.opcheck(torch.ops.fastgelu.gelu_mul.default, (gate, up, approximate))
        dy = torch.randn(4, 6, dtype=torch.float64)
        torch.library.opcheck(torch.ops.fastgelu.gelu_mul_backward.default,
                              (dy, gate.detach(), up.detach(), approximate))


# ---- tools --------------------------------------------------------------------------------------------------------

@pytest.fixture
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("how", ["module", "geglu", "gelu_mul"])
def test_compile_fullgraph_inference_and_training(fresh_dynamo, how):
    m = MLP("tanh", how)
    c = torch.compile(m, fullgraph=True)
    x = inputs(1)
    with torch.no_grad():
        torch.testing.assert_close(c(x), m(x), rtol=1e-6, atol=1e-6)
    xg = inputs(2).requires_grad_()
    c(xg).sum().backward()
    got = xg.grad.clone()
    xg.grad = None
    m(xg).sum().backward()
    torch.testing.assert_close(got, xg.grad, rtol=1e-6, atol=1e-6)


def test_compiled_graph_calls_the_operator(fresh_dynamo):
    seen = []

    def backend(gm, example_inputs):
        seen.extend(str(n.target) for n in gm.graph.nodes)
        return gm.forward

    torch.compile(MLP("none"), backend=backend, fullgraph=True)(inputs(3))
    assert any("fastgelu.gelu_mul" in s for s in seen), seen


@pytest.mark.parametrize("how", ["module", "gelu_mul"])
def test_export_round_trip(how, tmp_path):
    m = MLP("none", how)
    ep = torch.export.export(m, (inputs(4),))
    assert any("fastgelu.gelu_mul" in str(n.target) for n in ep.graph.nodes)
    path = tmp_path / "m.pt2"
    torch.export.save(ep, path)
    x = inputs(5)
    torch.testing.assert_close(torch.export.load(path).module()(x), m(x))


def test_jit_trace_script_and_fx(tmp_path):
    m = MLP("sigmoid")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(m, (inputs(6),))
    x = inputs(7)
    torch.testing.assert_close(traced(x), m(x))
    scripted = torch.jit.script(fgt.GeGLU("tanh"))
    path = tmp_path / "s.pt"
    scripted.save(str(path))
    h = torch.randn(3, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        loaded = torch.jit.load(str(path))
    torch.testing.assert_close(loaded(h), fgt.geglu(h, "tanh"))
    gm = torch.fx.symbolic_trace(MLP("none", "gelu_mul"))
    assert any("fastgelu.gelu_mul" in str(n.target) for n in gm.graph.nodes)
    torch.testing.assert_close(gm(x), MLP("none", "gelu_mul")(x))


# ---- ONNX with default arguments ---------------------------------------------------------------------------------

def run_onnx(data, x):
    ort = pytest.importorskip("onnxruntime")
    s = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return torch.from_numpy(s.run(None, {s.get_inputs()[0].name: x.numpy()})[0])


def default_export(m, tmp_path):
    """torch.onnx.export(model, args, path): no dynamo=, opset, table or any other argument."""
    pytest.importorskip("onnx")
    pytest.importorskip("onnxscript")
    path = tmp_path / "m.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (inputs(10),), str(path))
    return str(path)   # the weights may sit beside it (m.onnx.data)


class PlainGELU(torch.nn.Module):
    def __init__(self, approximate, functional):
        super().__init__()
        torch.manual_seed(0)
        self.l1, self.l2 = torch.nn.Linear(8, 16), torch.nn.Linear(16, 4)
        self.act = fgt.GELU(approximate)
        self.approximate, self.functional = approximate, functional

    def forward(self, x):
        h = self.l1(x)
        h = fgt.gelu(h, self.approximate) if self.functional else self.act(h)
        return self.l2(h)


@pytest.mark.parametrize("approximate", APPROXIMATE)
@pytest.mark.parametrize("how", ["GELU", "gelu", "GeGLU", "geglu", "gelu_mul"])
def test_default_onnx_export_runs_in_onnxruntime(how, approximate, tmp_path):
    onnx = pytest.importorskip("onnx")
    m = PlainGELU(approximate, how == "gelu") if how in ("GELU", "gelu") else \
        MLP(approximate, {"GeGLU": "module"}.get(how, how))
    data = default_export(m, tmp_path)
    kinds = {n.op_type for n in onnx.load(data).graph.node}
    assert not any("fastgelu" in k for k in kinds)
    assert ("Sigmoid" if approximate == "sigmoid" else "Gelu") in kinds or "Erf" in kinds or "Tanh" in kinds
    for seed in (11, 12):   # not the export's input: the graph must depend on it
        x = inputs(seed)
        torch.testing.assert_close(run_onnx(data, x), m(x).detach(), rtol=1e-5, atol=1e-5)


def test_translation_table_still_takes_precedence():
    pytest.importorskip("onnx")
    pytest.importorskip("onnxscript")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prog = torch.onnx.export(PlainGELU("none", False), (inputs(13),), dynamo=True, verbose=False,
                                 custom_translation_table=fgt.onnx_translation_table(20), opset_version=20)
    data = prog.model_proto.SerializeToString()
    x = inputs(14)
    torch.testing.assert_close(run_onnx(data, x), PlainGELU("none", False)(x).detach(), rtol=1e-5, atol=1e-5)


def test_module_repr():
    assert repr(fgt.GeGLU("tanh")) == "GeGLU(approximate='tanh')"
    assert repr(fgt.GeGLU(dim=0)) == "GeGLU(approximate='none', dim=0)"
    assert {"gelu_mul", "geglu", "GeGLU"} <= set(fgt.__all__)
