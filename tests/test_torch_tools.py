"""fastgelu.torch under the tools people run on models: torch.compile, torch.export, TorchScript (trace and
script), torch.fx, torch.func, gradcheck's batched and forward-mode checks, and both ONNX exporters run in
ONNX Runtime. Every check compares with eager values on inputs other than the ones used to trace."""
import io
import warnings

import pytest

torch = pytest.importorskip("torch")

import fastgelu.torch as fgt  # noqa: E402

from common import APPROXIMATE  # noqa: E402


def model(approximate="none", seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), fgt.GELU(approximate), torch.nn.Linear(16, 4))


def inputs(seed, n=5):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 8, generator=g) * 2


def eager_grads(m, x):
    """(output, d sum(output) / d x, d sum(output) / d first weight) in eager mode."""
    x = x.clone().requires_grad_()
    m.zero_grad()
    y = m(x)
    y.sum().backward()
    return y.detach(), x.grad, next(m.parameters()).grad.clone()


# ---- torch.compile ----------------------------------------------------------------------------------------

@pytest.fixture
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_compile_fullgraph_inference(fresh_dynamo):
    m = model("tanh")
    c = torch.compile(m, fullgraph=True)  # fullgraph: any graph break raises
    with torch.no_grad():
        for seed in (1, 2):
            x = inputs(seed)
            torch.testing.assert_close(c(x), m(x), rtol=1e-6, atol=1e-6)


def test_compile_fullgraph_training(fresh_dynamo):
    m = model("none")
    c = torch.compile(m, fullgraph=True)
    x = inputs(3)
    got = eager_grads(c, x)
    want = eager_grads(m, x)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-6, atol=1e-6)


def test_compiled_graph_calls_fastgelu(fresh_dynamo):
    # the graph keeps the operator (not PyTorch's GELU, not a trace of NumPy): seen by a custom backend
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    m = model("sigmoid")
    x = inputs(4)
    y = torch.compile(m, fullgraph=True, backend=backend)(x)
    assert any("fastgelu" in str(n.target) for gm in graphs for n in gm.graph.nodes)
    assert torch.equal(y, m(x))


def test_compile_lowers_with_ci_set_and_no_cache(tmp_path):
    """Inductor refuses its own fallback for an operator torch._decomp can decompose when the environment
    variable CI is set (GitHub Actions sets it), and gelu and gelu_mul are there for the ONNX exporter: fastgelu
    registers the fallbacks itself. A fresh process with Inductor's caches off, so the graph is really lowered."""
    import os
    import subprocess
    import sys
    code = """
import torch, fastgelu.torch as fgt
torch.manual_seed(0)
lin = torch.nn.Linear(8, 32)
def f(x):
    h = lin(x)
    return fgt.gelu(h, "tanh") + fgt.gelu_mul(h[:, :16], h[:, 16:]).sum(-1, keepdim=True)
x = torch.randn(5, 8, requires_grad=True)
c = torch.compile(f, fullgraph=True)
y, want = c(x), f(x)
torch.testing.assert_close(y, want, rtol=1e-6, atol=1e-6)
g, = torch.autograd.grad(y.sum(), x)
gw, = torch.autograd.grad(want.sum(), x)
torch.testing.assert_close(g, gw, rtol=1e-6, atol=1e-6)
print("ok")
"""
    env = dict(os.environ, CI="true", TORCHINDUCTOR_FORCE_DISABLE_CACHES="1",
               TORCHINDUCTOR_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]


# ---- torch.export -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("approximate", ["none", "sigmoid"])
def test_export_and_round_trip(approximate, tmp_path):
    m = model(approximate)
    batch = torch.export.Dim("batch")
    ep = torch.export.export(m, (inputs(5),), dynamic_shapes=({0: batch},))
    assert "torch.ops.fastgelu.gelu.default" in ep.graph_module.code
    x = inputs(6, n=11)  # another batch size
    assert torch.equal(ep.module()(x), m(x))
    path = tmp_path / "m.pt2"
    torch.export.save(ep, path)
    loaded = torch.export.load(path)
    assert torch.equal(loaded.module()(x), m(x))


# ---- TorchScript -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
def test_jit_trace(grad):
    m = model("tanh")
    with torch.set_grad_enabled(grad), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchScript's deprecation notice
        tm = torch.jit.trace(m, inputs(7))
    assert "fastgelu::gelu" in str(tm.inlined_graph)
    x = inputs(8)  # other values than the traced ones: the graph must depend on its input
    with torch.no_grad():
        assert torch.equal(tm(x), m(x))
    for g, w in zip(eager_grads(tm, x), eager_grads(m, x)):
        torch.testing.assert_close(g, w, rtol=0, atol=0)


@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_jit_script_and_save_load(approximate, tmp_path):
    m = model(approximate)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sm = torch.jit.script(m)
        path = tmp_path / "m.pt"
        torch.jit.save(sm, path)
        loaded = torch.jit.load(path)
    x = inputs(9)
    assert torch.equal(sm(x), m(x)) and torch.equal(loaded(x), m(x))
    for g, w in zip(eager_grads(sm, x), eager_grads(m, x)):
        torch.testing.assert_close(g, w, rtol=0, atol=0)


# ---- torch.fx ----------------------------------------------------------------------------------------------

def test_fx_symbolic_trace():
    m = model("tanh")
    gm = torch.fx.symbolic_trace(m)
    gm2 = torch.fx.symbolic_trace(lambda t: fgt.gelu(t, "sigmoid") + 1)
    assert "fastgelu.gelu" in gm2.code
    x = inputs(10)
    assert torch.equal(gm(x), m(x))
    assert torch.equal(gm2(x), fgt.gelu(x, "sigmoid") + 1)


# ---- torch.func --------------------------------------------------------------------------------------------

def torch_gelu(x, approximate):
    if approximate == "sigmoid":
        return x * torch.sigmoid(1.702 * x)
    return torch.nn.functional.gelu(x, approximate=approximate)


@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_torch_func_transforms(approximate):
    x = torch.randn(7, dtype=torch.float64) * 3
    xs = torch.randn(4, 7, dtype=torch.float64) * 3
    v = torch.randn(7, dtype=torch.float64)
    f = lambda t: fgt.gelu(t, approximate)  # noqa: E731
    ref = lambda t: torch_gelu(t, approximate)  # noqa: E731
    close = lambda a, b: torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-13)  # noqa: E731
    func = torch.func
    close(func.grad(lambda t: f(t).sum())(x), func.grad(lambda t: ref(t).sum())(x))
    close(func.vmap(f)(xs), ref(xs))
    close(func.vmap(f, in_dims=1)(xs.t()), ref(xs))
    close(func.jacrev(f)(x), func.jacrev(ref)(x))
    close(func.jacfwd(f)(x), func.jacfwd(ref)(x))
    y, t = func.jvp(f, (x,), (v,))
    y0, t0 = func.jvp(ref, (x,), (v,))
    close(y, y0)
    close(t, t0)
    assert t.abs().max() > 0.1  # a real tangent
    close(func.hessian(lambda t: f(t).sum())(x), func.hessian(lambda t: ref(t).sum())(x))
    close(func.vmap(func.grad(lambda t: f(t).sum()))(xs), func.vmap(func.grad(lambda t: ref(t).sum()))(xs))
    # a module through functional_call, as training loops written with torch.func do
    m = model(approximate).double()
    params = dict(m.named_parameters())
    xm = inputs(11).double()
    g = func.grad(lambda p: func.functional_call(m, p, (xm,)).sum())(params)
    m.zero_grad()
    m(xm).sum().backward()
    for name, p in m.named_parameters():
        close(g[name], p.grad)


@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_gradcheck_batched_and_forward_mode(approximate):
    x = (torch.randn(4, 3, dtype=torch.float64) * 2).requires_grad_()
    f = lambda t: fgt.gelu(t, approximate)  # noqa: E731
    assert torch.autograd.gradcheck(f, (x,), check_batched_grad=True, check_forward_ad=True,
                                    check_batched_forward_grad=True)
    assert torch.autograd.gradgradcheck(f, (x,), check_batched_grad=True, check_fwd_over_rev=True)
    xt = (torch.randn(3, 4, dtype=torch.float64) * 2).t().requires_grad_()  # strided
    assert torch.autograd.gradcheck(f, (xt,), check_batched_grad=True, check_forward_ad=True)


def test_forward_ad_gives_the_tangent():
    import torch.autograd.forward_ad as fwAD
    x = torch.randn(6, dtype=torch.float64)
    t = torch.randn(6, dtype=torch.float64)
    for a in APPROXIMATE:
        with fwAD.dual_level():
            y = fgt.gelu(fwAD.make_dual(x, t), a)
            primal, tangent = fwAD.unpack_dual(y)
        with fwAD.dual_level():
            want = fwAD.unpack_dual(torch_gelu(fwAD.make_dual(x, t), a)).tangent
        assert torch.equal(primal, fgt.gelu(x, a))
        torch.testing.assert_close(tangent, want, rtol=1e-12, atol=1e-13)


# ---- ONNX ----------------------------------------------------------------------------------------------------

def run_onnx(data, x):
    ort = pytest.importorskip("onnxruntime")
    s = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return torch.from_numpy(s.run(None, {s.get_inputs()[0].name: x.numpy()})[0])


def export_onnx(m, dynamo, opset):
    pytest.importorskip("onnx")
    f = io.BytesIO()
    kwargs = {}
    if dynamo:
        pytest.importorskip("onnxscript")
        kwargs["custom_translation_table"] = fgt.onnx_translation_table(opset)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = torch.onnx.export(m, (inputs(12),), None if dynamo else f, dynamo=dynamo, opset_version=opset,
                                verbose=False, **kwargs)
    if dynamo:
        return out.model_proto.SerializeToString()
    return f.getvalue()


@pytest.mark.parametrize("approximate", APPROXIMATE)
@pytest.mark.parametrize("opset", [18, 20])
@pytest.mark.parametrize("dynamo", [False, True], ids=["legacy", "dynamo"])
def test_onnx_export_runs_in_onnxruntime(dynamo, opset, approximate):
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    m = model(approximate)
    data = export_onnx(m, dynamo, opset)
    proto = onnx.load_from_string(data)
    kinds = {n.op_type for n in proto.graph.node}
    if opset >= 20 and approximate != "sigmoid":
        gelu = [n for n in proto.graph.node if n.op_type == "Gelu"]
        assert len(gelu) == 1
        attrs = {a.name: a.s.decode() for a in gelu[0].attribute}
        assert attrs.get("approximate", "none") == approximate
    else:
        assert "Gelu" not in kinds and ("Sigmoid" if approximate == "sigmoid" else
                                         "Tanh" if approximate == "tanh" else "Erf") in kinds
    x = inputs(13)  # not the export's input: the graph must depend on it
    torch.testing.assert_close(run_onnx(data, x), m(x).detach(), rtol=1e-5, atol=1e-6)


def test_onnx_legacy_exporter_refuses_old_opsets_by_name():
    pytest.importorskip("onnx")
    with pytest.raises(Exception, match="fastgelu::gelu"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model(), (inputs(14),), io.BytesIO(), dynamo=False, opset_version=14)


def test_onnx_dynamo_exporter_without_the_table_decomposes_the_operator():
    """No custom_translation_table: fastgelu::gelu is decomposed into PyTorch's GELU at export (issue 31);
    tests/test_torch_gated.py runs such exports in ONNX Runtime."""
    pytest.importorskip("onnx")
    pytest.importorskip("onnxscript")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prog = torch.onnx.export(model(), (inputs(15),), dynamo=True, verbose=False)
    kinds = {n.op_type for n in prog.model_proto.graph.node}
    assert not any("fastgelu" in k for k in kinds) and ({"Gelu", "Erf"} & kinds)
