"""fastgelu.torch.patch / unpatch on real transformers models built from random-init configs (GPT-2, T5 v1.1
gated, Gemma, BERT, ViT), on timm- and diffusers-style modules written here (neither library is needed), and on
plain nn.GELU models: the report, values and backward against the stock model, in place, torch.compile,
torch.export, state_dict, pickle, unpatch, and what is left alone."""
import copy
import io
import math
import pickle

import pytest

torch = pytest.importorskip("torch")

import fastgelu.torch as fgt  # noqa: E402

nn = torch.nn
F = nn.functional


# ---- modules shaped like timm's and diffusers' (class names and forwards as in those libraries) ---------------

class GELU(nn.Module):  # timm.layers.GELU: a dummy inplace argument
    def __init__(self, inplace=False):
        super().__init__()

    def forward(self, x):
        return F.gelu(x)


class QuickGELU(nn.Module):  # timm.layers.QuickGELU
    def __init__(self, inplace=False):
        super().__init__()

    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


class Mlp(nn.Module):  # timm.layers.Mlp
    def __init__(self, d, h, act_layer=GELU):
        super().__init__()
        self.fc1, self.act, self.drop1 = nn.Linear(d, h), act_layer(), nn.Dropout(0.1)
        self.norm, self.fc2, self.drop2 = nn.Identity(), nn.Linear(h, d), nn.Dropout(0.1)

    def forward(self, x):
        return self.drop2(self.fc2(self.norm(self.drop1(self.act(self.fc1(x))))))


class GluMlp(Mlp):  # timm.layers.GluMlp (gate in the second half by default)
    def __init__(self, d, h, act_layer=GELU, gate_last=True):
        super().__init__(d, h, act_layer)
        self.fc2, self.chunk_dim, self.gate_last = nn.Linear(h // 2, d), -1, gate_last

    def forward(self, x):
        x1, x2 = self.fc1(x).chunk(2, dim=self.chunk_dim)
        x = x1 * self.act(x2) if self.gate_last else self.act(x1) * x2
        return self.drop2(self.fc2(self.norm(self.drop1(x))))


class GEGLU(nn.Module):  # diffusers.models.activations.GEGLU: hidden first, gate second
    def __init__(self, d, h, swapped=False):
        super().__init__()
        self.proj, self.swapped = nn.Linear(d, 2 * h), swapped

    def forward(self, x, *args, **kwargs):
        h, gate = self.proj(x).chunk(2, dim=-1)
        if self.swapped:  # a module named GEGLU that does something else: the probe must catch it
            h, gate = gate, h
        return h * F.gelu(gate)


class diffusers:  # a namespace, so that its GELU and timm's GELU above both pickle
    class GELU(nn.Module):  # diffusers.models.activations.GELU
        def __init__(self, d, h, approximate="none"):
            super().__init__()
            self.proj, self.approximate = nn.Linear(d, h), approximate

        def forward(self, x):
            return F.gelu(self.proj(x), approximate=self.approximate)


def tanh_projection(d, h):
    return diffusers.GELU(d, h, "tanh")


class ApproximateGELU(nn.Module):  # diffusers
    def __init__(self, d, h):
        super().__init__()
        self.proj = nn.Linear(d, h)

    def forward(self, x):
        x = self.proj(x)
        return x * torch.sigmoid(1.702 * x)


class FeedForward(nn.Module):  # diffusers' FeedForward: net = [act module with proj, dropout, Linear]
    def __init__(self, d, h, act):
        super().__init__()
        self.net = nn.ModuleList([act(d, h), nn.Dropout(0.0), nn.Linear(h, d)])

    def forward(self, x):
        for m in self.net:
            x = m(x)
        return x


class GELUActivation(nn.Module):  # named as transformers' exact GELU, computes ReLU: the probe must refuse it
    def forward(self, x):
        return F.relu(x)


class ResidualMLP(nn.Module):  # an MLP-named parent that reads the pre-activation again: never in place
    def __init__(self, d):
        super().__init__()
        self.fc, self.act = nn.Linear(d, d), nn.GELU()

    def forward(self, x):
        h = self.fc(x)
        return self.act(h) + h


class TimmStyle(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.mlp = Mlp(d, 4 * d)
        self.glu = GluMlp(d, 4 * d)
        self.quick = Mlp(d, 2 * d, act_layer=QuickGELU)
        self.ff = FeedForward(d, 2 * d, GEGLU)
        self.ff_gelu = FeedForward(d, 2 * d, tanh_projection)
        self.ff_approx = FeedForward(d, 2 * d, ApproximateGELU)

    def forward(self, x):
        for m in (self.mlp, self.glu, self.quick, self.ff, self.ff_gelu, self.ff_approx):
            x = x + m(x)
        return x


def plain(d=16):
    return nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d), nn.GELU(approximate="tanh"),
                         nn.Linear(d, d))


def data(shape=(3, 5, 16), seed=1, dtype=torch.float32):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def stock_and_patched(make, **kw):
    torch.manual_seed(0)
    stock = make().eval()
    patched = copy.deepcopy(stock)
    return stock, patched, fgt.patch(patched, **kw)


def max_rel(a, b):
    return ((a - b).abs().max() / b.abs().max()).item()


# ---- plain, timm-style and diffusers-style models -------------------------------------------------------------

def test_plain_report_values_inplace_and_unpatch():
    stock, patched, report = stock_and_patched(plain)
    assert [(r.path, r.cls, r.form, r.kind, r.inplace) for r in report.replaced] == [
        ("1", "GELU", "none", "activation", None), ("3", "GELU", "tanh", "activation", None)]
    assert report.left_alone == [] and len(report) == 2 and "1: GELU -> activation" in str(report)
    assert isinstance(patched[1], fgt.GELU) and patched[1].original is not stock[1]
    x = data()
    with torch.inference_mode():
        assert max_rel(patched(x), stock(x)) < 1e-6
    originals = [m.original for m in (patched[1], patched[3])]
    assert fgt.unpatch(patched) == 2
    assert patched[1] is originals[0] and patched[3] is originals[1] and type(patched[1]) is nn.GELU
    assert torch.equal(patched(x), stock(x))  # the original modules: bit for bit the stock model
    assert fgt.unpatch(patched) == 0


def test_inplace_overwrites_the_linear_output_only_when_no_graph_needs_it(monkeypatch):
    _, patched, _ = stock_and_patched(plain)
    calls = []
    monkeypatch.setattr(fgt, "gelu_", lambda x, a: calls.append(a) or fgt.gelu(x, a).clone())
    x = data()
    with torch.inference_mode():
        patched(x)
    with torch.no_grad():
        patched(x)
    assert calls == ["none", "tanh"] * 2
    patched(x).sum().backward()  # training: the graph needs GELU's input, so never in place
    assert calls == ["none", "tanh"] * 2


def test_inplace_true_and_false():
    _, patched, report = stock_and_patched(plain, inplace=False)
    assert {r.inplace for r in report.replaced} == {False}
    patched(data()).sum().backward()  # training works without in place
    _, patched, report = stock_and_patched(plain, inplace=True)
    assert {r.inplace for r in report.replaced} == {True}
    with torch.no_grad():
        patched(data())
    with pytest.raises(RuntimeError, match="inplace=True"):
        patched(data())  # parameters need gradients: the input of GELU is in the graph


def test_bad_arguments():
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        fgt.patch(lambda x: x)
    with pytest.raises(TypeError, match="inplace must be None, True or False"):
        fgt.patch(plain(), inplace="yes")
    with pytest.raises(TypeError, match="fuse_gated"):
        fgt.patch(plain(), fuse_gated=1)
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        fgt.unpatch(None)


def test_timm_and_diffusers_style():
    stock, patched, report = stock_and_patched(TimmStyle)
    got = {r.path: (r.cls, r.form, r.kind) for r in report.replaced}
    assert got == {
        "mlp.act": ("GELU", "none", "activation"),
        "glu": ("GluMlp", "none", "gated"),
        "quick.act": ("QuickGELU", "sigmoid", "activation"),
        "ff.net.0": ("GEGLU", "none", "gated"),
        "ff_gelu.net.0": ("GELU", "tanh", "projection"),
        "ff_approx.net.0": ("ApproximateGELU", "sigmoid", "projection"),
    }
    assert report.left_alone == []
    x = data()
    with torch.inference_mode():
        assert max_rel(patched(x), stock(x)) < 1e-5
    patched.train(), stock.train()
    torch.manual_seed(3)
    ys = stock(x)
    torch.manual_seed(3)  # the same dropout masks
    yp = patched(x)
    assert max_rel(yp, ys) < 1e-5
    ys.square().sum().backward()
    yp.square().sum().backward()
    for (name, a), b in zip(stock.named_parameters(), patched.parameters()):
        assert max_rel(b.grad, a.grad) < 1e-4, name
    assert fgt.unpatch(patched) == 6
    assert "forward" not in patched.glu.__dict__ and type(patched.mlp.act) is GELU
    assert torch.equal(patched.eval()(x), stock.eval()(x))


def test_fuse_gated_false_replaces_the_activation_child():
    _, patched, report = stock_and_patched(lambda: GluMlp(16, 64), fuse_gated=False)
    assert [(r.path, r.kind) for r in report.replaced] == [("act", "activation")]
    assert "forward" not in patched.__dict__


def test_left_alone_listed_with_reasons():
    class ClippedGELUActivation(nn.Module):
        def forward(self, x):
            return torch.clip(F.gelu(x), -10, 10)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.liar = GELUActivation()
            self.clipped = ClippedGELUActivation()
            self.geglu = GEGLU(8, 8, swapped=True)
            self.fast = fgt.GELU()

    model = Model()
    report = fgt.patch(model)
    assert len(report) == 0
    reasons = {a.path: a.reason for a in report.left_alone}
    assert set(reasons) == {"liar", "clipped", "geglu"}
    assert "differs from fastgelu's approximate='none'" in reasons["liar"]
    assert "class not known" in reasons["clipped"]
    assert "differs from its own forward" in reasons["geglu"]
    assert type(model.liar) is GELUActivation and "forward" not in model.geglu.__dict__
    assert fgt.patch(nn.GELU()).left_alone[0].reason.startswith("the model itself")


def test_parent_that_reads_the_pre_activation_is_never_in_place():
    torch.manual_seed(0)
    stock = ResidualMLP(16)
    patched = copy.deepcopy(stock)
    report = fgt.patch(patched)
    assert [(r.path, r.inplace) for r in report.replaced] == [("act", False)]
    x = data()
    with torch.inference_mode():
        assert max_rel(patched(x), stock(x)) < 1e-6


def test_fused_forward_takes_its_input_by_name():
    stock, patched, _ = stock_and_patched(TimmStyle)
    x = data()
    with torch.inference_mode():
        assert torch.equal(patched.glu(x=x), patched.glu(x)) and torch.equal(patched.ff.net[0](x=x),
                                                                            patched.ff.net[0](x))
        assert max_rel(patched.glu(x=x), stock.glu(x=x)) < 1e-5


def test_patch_twice_changes_nothing_more():
    _, patched, _ = stock_and_patched(TimmStyle)
    again = fgt.patch(patched)
    assert len(again) == 0 and again.left_alone == []


def test_state_dict_and_pickle():
    stock, patched, _ = stock_and_patched(TimmStyle)
    assert list(patched.state_dict()) == list(stock.state_dict())
    patched.load_state_dict(stock.state_dict())
    buf = io.BytesIO()
    torch.save(patched, buf)
    buf.seek(0)
    loaded = torch.load(buf, weights_only=False)
    again = pickle.loads(pickle.dumps(patched))
    x = data()
    with torch.inference_mode():
        want = patched(x)
        assert torch.equal(loaded(x), want) and torch.equal(again(x), want)
    assert isinstance(again.mlp.act, fgt.PatchedGELU) and again.glu.forward.module is again.glu
    assert fgt.unpatch(again) == 6 and type(again.mlp.act) is GELU


def _fastgelu_ops(graph):
    return sorted({str(n.target) for n in graph.nodes if "fastgelu" in str(n.target)})


def test_export_keeps_fastgelu_operators():
    stock, patched, _ = stock_and_patched(TimmStyle)
    x = data()
    ep = torch.export.export(patched, (x,))
    assert _fastgelu_ops(ep.graph) == ["fastgelu.gelu.default", "fastgelu.gelu_mul.default"]
    x2 = data(seed=7)
    assert max_rel(ep.module()(x2), stock(x2)) < 1e-5


def test_compile_inference_and_training():
    stock, patched, _ = stock_and_patched(TimmStyle)
    graphs = []

    def capture(gm, example_inputs):
        graphs.append(gm.graph)
        return gm.forward

    x = data(seed=4)
    with torch.no_grad():  # dynamo traces the fused forwards, not the classes' own
        torch.compile(patched, backend=capture, fullgraph=True)(x)
    assert _fastgelu_ops(graphs[0]) == ["fastgelu.gelu.default", "fastgelu.gelu_mul.default"]
    compiled = torch.compile(patched, fullgraph=True)
    with torch.no_grad():
        assert max_rel(compiled(x), stock(x)) < 1e-5
    patched.train()
    stock.train()
    x = data(seed=5).requires_grad_()
    xs = x.detach().clone().requires_grad_()
    for m in (patched, stock):  # no dropout randomness to match between compiled and eager
        for d in m.modules():
            if isinstance(d, nn.Dropout):
                d.p = 0.0
    compiled(x).square().sum().backward()
    stock(xs).square().sum().backward()
    assert max_rel(x.grad, xs.grad) < 1e-4


# ---- transformers models from random-init configs (no downloads) ----------------------------------------------

@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("transformers")


def _gpt2(tf):
    return tf.GPT2Model(tf.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=64, n_positions=32,
                                      bos_token_id=0, eos_token_id=0))


def _t5(tf):
    return tf.T5EncoderModel(tf.T5Config(d_model=32, d_ff=64, num_layers=2, num_heads=2, d_kv=16, vocab_size=64,
                                         feed_forward_proj="gated-gelu", dropout_rate=0.0))


def _gemma(tf):
    return tf.GemmaModel(tf.GemmaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                        num_attention_heads=2, num_key_value_heads=1, head_dim=16, vocab_size=64))


def _bert(tf):
    return tf.BertModel(tf.BertConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=2, vocab_size=64))


def _vit(tf):
    return tf.ViTModel(tf.ViTConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                    num_attention_heads=2, image_size=16, patch_size=8))


# model -> (builder, what the report must say: (path pattern, class, form, kind))
MODELS = {
    "gpt2": (_gpt2, ("h.{}.mlp.act", "NewGELUActivation", "tanh", "activation")),
    "t5": (_t5, ("encoder.block.{}.layer.1.DenseReluDense", "T5DenseGatedActDense", "tanh", "gated")),
    "gemma": (_gemma, ("layers.{}.mlp", "GemmaMLP", "tanh", "gated")),
    "bert": (_bert, ("encoder.layer.{}.intermediate.intermediate_act_fn", "GELUActivation", "none",
                     "activation")),
    "vit": (_vit, ("encoder.layer.{}.mlp.activation_fn", "GELUActivation", "none", "activation")),
}


def _inputs(name):
    g = torch.Generator().manual_seed(2)
    if name == "vit":
        return {"pixel_values": torch.randn(2, 3, 16, 16, generator=g)}
    return {"input_ids": torch.randint(0, 64, (2, 7), generator=g)}


def _out(model, inputs):
    return model(**inputs).last_hidden_state


@pytest.mark.parametrize("name", sorted(MODELS))
def test_transformers_model(tf, name):
    build, (path, cls, form, kind) = MODELS[name]
    stock, patched, report = stock_and_patched(lambda: build(tf))
    rows = [(r.path, r.cls, r.form, r.kind, r.inplace) for r in report.replaced]
    if name == "vit" and rows and not rows[0][0].startswith("encoder.layer"):
        path = "layers.{}.mlp.activation_fn"  # ViT's module layout in transformers 5
    assert rows == [(path.format(i), cls, form, kind, None) for i in range(2)], report
    assert report.left_alone == []
    assert list(patched.state_dict()) == list(stock.state_dict())
    inputs = _inputs(name)
    with torch.inference_mode():
        want = _out(stock, inputs)
        got = _out(patched, inputs)
    assert max_rel(got, want) < 2e-5
    # training: dropout off in both, so the gradients compare
    for m in (stock, patched):
        m.train()
        for d in m.modules():
            if isinstance(d, nn.Dropout):
                d.p = 0.0
    _out(stock, inputs).square().mean().backward()
    _out(patched, inputs).square().mean().backward()
    scale = max(p.grad.abs().max().item() for p in stock.parameters() if p.grad is not None)
    for (pname, a), b in zip(stock.named_parameters(), patched.parameters()):
        if a.grad is not None:
            assert (b.grad - a.grad).abs().max() <= 1e-4 * scale, pname
    again = pickle.loads(pickle.dumps(patched.eval()))
    with torch.inference_mode():
        assert torch.equal(_out(again, inputs), _out(patched, inputs))
    assert fgt.unpatch(patched) == 2
    with torch.inference_mode():
        assert torch.equal(_out(patched, inputs), want)


@pytest.mark.parametrize("name", ["gpt2", "t5"])
def test_transformers_bfloat16_close_to_float64(tf, name):
    """In bfloat16 the patched model is as close to the float64 model as the stock one (fastgelu rounds once;
    transformers' composite tanh formula rounds at each of its operations)."""
    build, _ = MODELS[name]
    torch.manual_seed(0)
    ref = build(tf).eval().double()
    stock = copy.deepcopy(ref).to(torch.bfloat16)
    patched = copy.deepcopy(stock)
    assert len(fgt.patch(patched)) == 2
    inputs = _inputs(name)
    with torch.inference_mode():
        want = _out(ref, inputs)
        err_stock = (_out(stock, inputs).double() - want).abs().max().item()
        err_patched = (_out(patched, inputs).double() - want).abs().max().item()
    assert err_patched <= 1.25 * err_stock


def test_transformers_gemma_export(tf):
    stock, patched, _ = stock_and_patched(lambda: _gemma(tf))
    inputs = dict(_inputs("gemma"), use_cache=False)
    ep = torch.export.export(patched, (), kwargs=inputs)
    assert _fastgelu_ops(ep.graph) == ["fastgelu.gelu_mul.default"]
    with torch.inference_mode():
        assert max_rel(ep.module()(**inputs).last_hidden_state, _out(stock, inputs)) < 2e-5


def test_no_probe_left_a_mode_changed(tf):
    model = _t5(tf).train()
    model.encoder.block[0].layer[1].dropout.eval()
    fgt.patch(model)
    assert model.training and not model.encoder.block[0].layer[1].dropout.training
    assert math.isfinite(_out(model, _inputs("t5")).sum().item())
