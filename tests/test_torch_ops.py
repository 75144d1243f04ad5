"""fastgelu.torch's operators (torch.ops.fastgelu.*): registration checks, fake tensors, the in-place form,
visibility to dispatch modes, and the errors of what cannot work."""
import pytest

torch = pytest.importorskip("torch")

import fastgelu.torch as fgt  # noqa: E402

from common import APPROXIMATE, torch_bf16  # noqa: E402

BF16 = torch_bf16(torch)
ops = torch.ops.fastgelu


@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_opcheck(approximate):
    # PyTorch's own consistency checks: schema (mutation, aliasing), the autograd registration, the fake
    # implementation against the real one, and AOT dispatch (what torch.compile runs)
    x = (torch.randn(3, 4, dtype=torch.float64) * 2).requires_grad_()
    dy = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    torch.library.opcheck(ops.gelu.default, (x, approximate))
    torch.library.opcheck(ops.gelu.default, (x.detach().t(), approximate))
    torch.library.opcheck(ops.gelu_backward.default, (dy, x, approximate))
    torch.library.opcheck(ops.gelu_.default, (x.detach().clone(), approximate))
    out = torch.empty(4, 3, dtype=torch.float64).t()
    torch.library.opcheck(ops.gelu_out.default, (x.detach(), out, approximate))


def test_operator_values_are_the_function_values():
    x = torch.randn(50, dtype=torch.float64) * 3
    dy = torch.randn(50, dtype=torch.float64)
    for a in APPROXIMATE:
        assert torch.equal(ops.gelu(x, a), fgt.gelu(x, a))
        xr = x.clone().requires_grad_()
        (g,) = torch.autograd.grad(fgt.gelu(xr, a), xr, dy)
        assert torch.equal(ops.gelu_backward(dy, x, a), g)
    assert torch.equal(ops.gelu(x), fgt.gelu(x, "none"))  # the schema's default


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, BF16], ids=str)
def test_fake_tensors_have_the_real_metadata(dtype):
    from torch._subclasses.fake_tensor import FakeTensorMode
    real = torch.randn(4, 6).to(dtype).t()
    want = fgt.gelu(real)
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(real)
        for y in (fgt.gelu(fake), ops.gelu_backward(fake, fake)):
            assert type(y).__name__ == "FakeTensor"
            assert (y.shape, y.stride(), y.dtype) == (want.shape, want.stride(), want.dtype)
        with pytest.raises(TypeError, match="fastgelu::gelu: x has dtype torch.int64"):
            ops.gelu(torch.ones(3, dtype=torch.int64))


def test_every_call_is_seen_by_a_dispatch_mode():
    # the eager shortcut (no dispatcher) must not hide the operator from modes: profilers, FlopCounter,
    # make_fx and friends all watch through them
    from torch.utils._python_dispatch import TorchDispatchMode

    class Record(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x = torch.randn(5)
    with Record() as rec:
        y = fgt.gelu(x, "tanh")
        fgt.GELU()(x)
    assert rec.seen == ["fastgelu.gelu.default"] * 2
    assert torch.equal(y, fgt.gelu(x, "tanh"))


def test_the_profiler_sees_the_operator():
    x = torch.randn(3, 4)
    with torch.profiler.profile() as prof:
        fgt.gelu(x)
        fgt.GELU("tanh")(x)
    names = [e.name for e in prof.events()]
    assert names.count("fastgelu::gelu") == 2, names


def test_make_fx_records_the_operator():
    from torch.fx.experimental.proxy_tensor import make_fx
    x = torch.randn(6)
    gm = make_fx(lambda t: fgt.gelu(t, "sigmoid") * 2)(x)
    assert "torch.ops.fastgelu.gelu.default" in gm.code
    assert torch.equal(gm(x + 1), fgt.gelu(x + 1, "sigmoid") * 2)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_operators_make_no_numpy_copies(layout):
    # the dispatcher path (what compiled, scripted and exported models call) views the tensors too
    import tracemalloc
    base = torch.randn(1024, 512)
    x = {"contiguous": base, "transposed": base.t(), "sliced": base[:, ::2]}[layout]
    dy = torch.randn(x.shape)
    ops.gelu(x[:2])
    tracemalloc.start()
    try:
        y = ops.gelu(x, "tanh")
        g = ops.gelu_backward(dy, x, "tanh")
        ops.gelu_(y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 160 * 1024, peak  # a copy of x would be >= 1 MiB; NumPy's buffer is at most 64 KiB
    assert y.shape == g.shape == x.shape


# ---- in place -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("approximate", APPROXIMATE)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, BF16], ids=str)
def test_in_place(approximate, dtype):
    base = torch.randn(8, 10).to(dtype)
    want = fgt.gelu(base, approximate)
    x = base.clone()
    ptr = x.data_ptr()
    assert fgt.gelu_(x, approximate) is x
    assert x.data_ptr() == ptr and torch.equal(x, want)
    # a strided view: only its elements change
    y = base.clone()
    fgt.gelu_(y.t()[::2], approximate)
    assert torch.equal(y.t()[::2], want.t()[::2]) and torch.equal(y.t()[1::2], base.t()[1::2])


def test_in_place_bumps_the_version_counter():
    # autograd must notice that a tensor it saved was overwritten (else backward would use the new values)
    a = torch.randn(5, requires_grad=True)
    b = torch.randn(5)
    c = a * b  # saves b
    v = b._version
    fgt.gelu_(b)
    assert b._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()
    with torch.inference_mode():
        fgt.gelu_(torch.ones(3))


def test_in_place_refuses_to_differentiate():
    a = torch.randn(5, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"fastgelu.torch.gelu_ .*cannot be differentiated.*torch.nn.GELU"):
        fgt.gelu_(a * 1)
    import torch.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="fastgelu.torch.gelu_"):
            fgt.gelu_(fwAD.make_dual(torch.randn(3), torch.ones(3)))
    with torch.no_grad():  # without a graph it is fine
        t = a.detach().clone()
        fgt.gelu_(t)
    with fwAD.dual_level():  # and so is a tensor without a tangent inside a dual level
        t = torch.ones(3)
        fgt.gelu_(t)
        assert torch.equal(t, fgt.gelu(torch.ones(3)))


def test_gradient_operator_under_vmap_with_one_side_unbatched():
    x = torch.randn(5, dtype=torch.float64) * 2
    gs = torch.randn(3, 5, dtype=torch.float64)
    for a in APPROXIMATE:
        want = torch.stack([ops.gelu_backward(g, x, a) for g in gs])
        assert torch.equal(torch.func.vmap(lambda g: ops.gelu_backward(g, x, a))(gs), want)
        assert torch.equal(torch.func.vmap(lambda g: ops.gelu_backward(g, x, a), in_dims=1)(gs.t()), want)
        xs = gs * 2
        want = torch.stack([ops.gelu_backward(x, t, a) for t in xs])
        assert torch.equal(torch.func.vmap(lambda t: ops.gelu_backward(x, t, a))(xs), want)


def test_in_place_under_vmap_and_compile():
    x = torch.randn(3, 5)
    y = x.clone()
    torch.func.vmap(fgt.gelu_)(y)
    assert torch.equal(y, fgt.gelu(x))

    def f(t):
        t = t * 2
        fgt.gelu_(t, "tanh")
        return t + 1
    torch._dynamo.reset()
    assert torch.equal(torch.compile(f, fullgraph=True, backend="aot_eager")(x), f(x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, BF16], ids=str)
def test_out(dtype):
    x = (torch.randn(6, 7) * 3).to(dtype)
    for a in APPROXIMATE:
        out = torch.empty(7, 6, dtype=dtype).t()  # strided
        assert fgt.gelu(x, a, out=out) is out
        assert torch.equal(out, fgt.gelu(x, a))
    y = x.clone()
    fgt.gelu(y, out=y)  # out=self is in place
    assert torch.equal(y, fgt.gelu(x))
    with pytest.raises(ValueError, match="out must have x.s shape and dtype"):
        fgt.gelu(x, out=torch.empty(6, 7, dtype=torch.float64))
    with pytest.raises(RuntimeError, match=r"out=.*cannot be differentiated"):
        fgt.gelu(torch.randn(6, 7, requires_grad=True), out=torch.empty(6, 7))
    with pytest.raises(RuntimeError, match="fastgelu::gelu_out"):  # no vmap rule: PyTorch says so
        torch.func.vmap(lambda t: fgt.gelu(t, out=torch.empty_like(t)))(x)
    with pytest.raises(RuntimeError, match="fastgelu::gelu_out: more than one element"):
        fgt.gelu(x, out=torch.empty(6, 1, dtype=dtype).expand(6, 7))

    def f(t):
        o = torch.empty_like(t)
        fgt.gelu(t, "tanh", out=o)
        return o * 2
    torch._dynamo.reset()
    xf = x.float()
    assert torch.equal(torch.compile(f, fullgraph=True, backend="aot_eager")(xf), f(xf))


# ---- what cannot work says so ------------------------------------------------------------------------------

def test_direct_operator_under_torch_func_grad_is_refused_clearly():
    x = torch.randn(4, dtype=torch.float64)
    with pytest.raises(RuntimeError, match=r"fastgelu.*fastgelu.torch.gelu.*torch.nn.GELU"):
        torch.func.grad(lambda t: ops.gelu(t, "none").sum())(x)
    # the function (and the module) work there
    torch.func.grad(lambda t: fgt.gelu(t).sum())(x)


def test_operator_refuses_bad_arguments():
    with pytest.raises(ValueError, match="fastgelu::gelu: approximate must be one of"):
        ops.gelu(torch.ones(2), "exact")
    with pytest.raises(TypeError, match="fastgelu::gelu: x has dtype torch.int32"):
        ops.gelu(torch.ones(2, dtype=torch.int32))
    with pytest.raises(ValueError, match="fastgelu::gelu_backward: grad_output has shape"):
        ops.gelu_backward(torch.ones(3), torch.ones(2))
    with pytest.raises(TypeError, match="fastgelu.torch.gelu: input is on meta"):
        fgt.gelu_(torch.ones(2, device="meta"))
    b = torch.ones(3)
    with pytest.raises(RuntimeError, match="fastgelu::gelu_: more than one element"):
        fgt.gelu_(b[:1].expand(3))  # like torch.relu_ on an expanded view
    # nothing written when a call fails
    assert torch.equal(b, torch.ones(3))
    x = torch.ones(3, dtype=torch.float64)
    with pytest.raises(ValueError):
        fgt.gelu_(x, "bad")
    assert torch.equal(x, torch.ones(3, dtype=torch.float64))
