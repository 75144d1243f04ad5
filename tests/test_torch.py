"""fastgelu.torch: the autograd function and nn.Module on CPU tensors, against PyTorch and float64 references."""
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import fastgelu  # noqa: E402
import fastgelu.torch as fgt  # noqa: E402
from fastgelu._reference import ref64, ulp_error  # noqa: E402

from common import APPROXIMATE, torch_bf16  # noqa: E402

BF16 = torch_bf16(torch)
LOW = [torch.float16, BF16]


def torch_ref(x, approximate):
    """PyTorch's own GELU of x (autograd-differentiable); 'sigmoid' written out as x*sigmoid(1.702x)."""
    if approximate == "sigmoid":
        return x * torch.sigmoid(1.702 * x)
    return F.gelu(x, approximate=approximate)


def layouts(base):
    """(name, tensor) views of one storage: contiguous, transposed, sliced with steps, expanded, 0-d."""
    return [
        ("contiguous", base),
        ("transposed", base.t()),
        ("sliced", base[1::2, ::3]),
        ("transposed_sliced", base.t()[::2, 1:]),
        ("expanded", base[:, :1].expand(-1, 5)),
        ("scalar", base[0, 0]),
    ]


# ---- no copies ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, BF16],
                         ids=str)
def test_numpy_view_shares_the_tensor_memory(dtype):
    base = torch.randn(8, 9).to(dtype)
    for name, t in layouts(base):
        a = fgt.as_numpy(t)
        assert a.__array_interface__["data"][0] == t.data_ptr(), name
        assert a.shape == tuple(t.shape), name
        assert a.strides == tuple(s * t.element_size() for s in t.stride()), name
        assert a.itemsize == t.element_size(), name
        assert np.shares_memory(a, fgt.as_numpy(base)), name
    if dtype == torch.bfloat16:
        assert fgt.as_numpy(base).dtype.name == "bfloat16"
    # writing through the view writes the tensor
    view = base.t()[::2]
    fgt.as_numpy(view)[...] = 3
    assert (base.t()[::2] == 3).all() and (base.t()[1::2] != 3).any()


def test_requires_grad_tensors_are_viewed_not_copied():
    t = torch.randn(4, 5, requires_grad=True)
    assert fgt.as_numpy(t).__array_interface__["data"][0] == t.data_ptr()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, BF16], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_forward_and_backward_make_no_numpy_copies(dtype, layout):
    base = torch.randn(1024, 512).to(dtype)
    x = {"contiguous": base, "transposed": base.t(), "sliced": base[:, ::2]}[layout].requires_grad_()
    dy = torch.randn(x.shape).to(dtype)
    w = torch.ones(4, dtype=dtype, requires_grad=True)  # warm up: autograd's first backward imports modules
    torch.autograd.grad(fgt.gelu(w), w, torch.ones_like(w))
    tracemalloc.start()
    try:
        y = fgt.gelu(x)
        (g,) = torch.autograd.grad(y, x, dy)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # NumPy reports its data allocations to tracemalloc (PyTorch's allocator does not): a copy of x
    # (>= 512 KiB here) would show. Allowed: NumPy's iterator buffer (8192 elements, at most 64 KiB), which
    # it may allocate when the operands' layouts differ (transposed x, contiguous grad_output).
    assert peak < 160 * 1024, peak
    assert y.shape == x.shape and g.shape == x.shape


def test_output_keeps_the_input_layout():
    x = torch.randn(6, 7).t()
    y = fgt.gelu(x)
    assert y.stride() == x.stride()
    y = fgt.gelu(torch.randn(6, 7)[:, ::2])  # not dense: a contiguous result
    assert y.is_contiguous()


# ---- values ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_float32_matches_pytorch_where_pytorch_is_right(approximate):
    x = torch.cat([torch.linspace(-3, 3, 200001), torch.randn(10000).clamp(-3, 3)])
    y = fgt.gelu(x, approximate)
    assert y.dtype == torch.float32
    assert (y - F.gelu(x, approximate=approximate)).abs().max() <= 2e-6
    assert torch.equal(y, torch.from_numpy(fastgelu.gelu(x.numpy(), approximate)))


@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_float64_matches_pytorch(approximate):
    x = torch.linspace(-8, 8, 100001, dtype=torch.float64)
    torch.testing.assert_close(fgt.gelu(x, approximate), torch_ref(x, approximate), rtol=1e-13, atol=1e-15)


def test_sigmoid_variant_float32():
    x = torch.linspace(-10, 10, 100001)
    y = fgt.gelu(x, "sigmoid")
    torch.testing.assert_close(y, x * torch.sigmoid(1.702 * x), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name", ["gelu", "gelu_grad"])
def test_float32_negative_tail_is_right_against_float64(name):
    # PyTorch's exact GELU, 0.5x(1+erf(x/sqrt2)), cancels for x < -3 in float32 and loses digits there;
    # fastgelu does not: judge it by a float64 erfc reference instead of by PyTorch.
    x = torch.cat([torch.linspace(-13.0, -3.0, 100001), torch.linspace(-3.0, -0.5, 10001)])
    if name == "gelu":
        y = fgt.gelu(x)
    else:
        xr = x.clone().requires_grad_()
        (y,) = torch.autograd.grad(fgt.gelu(xr).sum(), xr)
    ref, scale = ref64(name, x.numpy())
    err = ulp_error(y.numpy(), ref, scale, np.float32)
    assert err.max() <= 2.0, (name, float(x[int(err.argmax())]), float(err.max()))


@pytest.mark.parametrize("name", list(dict(layouts(torch.zeros(8, 9)))))
@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_every_layout_gives_the_contiguous_result(name, approximate):
    base = torch.randn(8, 9, dtype=torch.float64) * 3
    t = dict(layouts(base))[name]
    assert torch.equal(fgt.gelu(t, approximate), fgt.gelu(t.contiguous(), approximate))


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_half_and_bfloat16_close_to_pytorch_float32_rounded(dtype, approximate):
    x = torch.cat([torch.linspace(-3, 3, 20001), torch.randn(5000).clamp(-3, 3)]).to(dtype)
    y = fgt.gelu(x, approximate)
    assert y.dtype == dtype
    want = torch_ref(x.float(), approximate).to(dtype).float()
    fi = torch.finfo(dtype)
    tol = fi.eps * want.abs() + fi.tiny * fi.eps  # one to two ULP of the 16-bit type
    assert ((y.float() - want).abs() <= tol).all()


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_half_and_bfloat16_tail_against_float64(dtype):
    x = torch.linspace(-12.0, -3.0, 20001).to(dtype)
    y = fgt.gelu(x)
    ref, scale = ref64("gelu", x.double().numpy())
    lim = {torch.float16: np.float16, torch.bfloat16: None}[dtype]
    if lim is None:  # bfloat16: spacing of a float32 value with 8 significant bits
        spacing = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64) * 2.0 ** 16
        spacing = np.maximum(spacing, float(torch.finfo(torch.bfloat16).tiny) * 2.0 ** -7)
        err = np.abs(y.double().numpy() - ref) / spacing
    else:
        err = ulp_error(y.double().numpy(), ref, scale, lim)
    assert err.max() <= 1.0, float(x[int(err.argmax())])


# ---- gradients ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_gradcheck_float64(approximate):
    x = (torch.randn(6, 5, dtype=torch.float64) * 2).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: fgt.gelu(t, approximate), (x,))


@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_gradcheck_float64_strided(approximate):
    # non-contiguous leaves, and views taken inside the function (the kernel sees the strides)
    base = torch.randn(7, 6, dtype=torch.float64) * 2
    xt = base.t().requires_grad_()
    assert not xt.is_contiguous()
    assert torch.autograd.gradcheck(lambda t: fgt.gelu(t, approximate), (xt,))
    xs = base[::2, 1::2].requires_grad_()
    assert torch.autograd.gradcheck(lambda t: fgt.gelu(t, approximate), (xs,))
    x = base.clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda t: fgt.gelu(t.t()[1::2, ::3], approximate), (x,))
    col = base[:, :1].clone().requires_grad_()
    assert torch.autograd.gradcheck(lambda t: fgt.gelu(t.expand(-1, 4), approximate), (col,))


@pytest.mark.parametrize("approximate", APPROXIMATE)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_gradients_match_pytorch_autograd(approximate, dtype):
    x = torch.cat([torch.linspace(-3, 3, 20001), torch.randn(5000).clamp(-3, 3)]).to(dtype)
    dy = torch.randn(x.shape, dtype=dtype)
    xa = x.clone().requires_grad_()
    xb = x.clone().requires_grad_()
    fgt.gelu(xa, approximate).backward(dy)
    torch_ref(xb, approximate).backward(dy)
    tol = 4e-6 if dtype == torch.float32 else 1e-13
    torch.testing.assert_close(xa.grad, xb.grad, rtol=tol, atol=tol)
    assert torch.equal(xa.grad, torch.from_numpy(fastgelu.gelu_grad(x.numpy(), dy.numpy(), approximate)))


@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_half_and_bfloat16_gradients(dtype, approximate):
    x = torch.linspace(-3, 3, 20001).to(dtype).requires_grad_()
    dy = torch.randn(x.shape).to(dtype)
    fgt.gelu(x, approximate).backward(dy)
    assert x.grad.dtype == dtype
    x32 = x.detach().float().requires_grad_()
    torch_ref(x32, approximate).backward(dy.float())
    want = x32.grad.to(dtype).float()
    eps = torch.finfo(dtype).eps
    assert ((x.grad.float() - want).abs() <= eps * want.abs() + eps * dy.float().abs()).all()


def test_backward_with_an_expanded_grad_output():
    # .sum().backward() hands the function a stride-0 grad_output
    x = torch.randn(50, 3, dtype=torch.float64, requires_grad=True)
    fgt.gelu(x).sum().backward()
    torch.testing.assert_close(x.grad, torch.from_numpy(fastgelu.gelu_grad(x.detach().numpy())), rtol=0, atol=0)


@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_gradgradcheck_float64(approximate):
    # double backward (create_graph=True): the first derivative by fastgelu, GELU'' by torch operations
    x = (torch.randn(5, 4, dtype=torch.float64) * 2).requires_grad_()
    assert torch.autograd.gradgradcheck(lambda t: fgt.gelu(t, approximate), (x,))
    xt = (torch.randn(4, 6, dtype=torch.float64) * 2).t()[::2].requires_grad_()
    assert torch.autograd.gradgradcheck(lambda t: fgt.gelu(t, approximate), (xt,))


@pytest.mark.parametrize("approximate", APPROXIMATE)
def test_gradient_penalty_matches_pytorch(approximate):
    # d/dx of |GELU'(x)|^2: a path through the second derivative, as in gradient penalties
    x = torch.randn(200, dtype=torch.float64) * 3
    out = []
    for f in (lambda t: fgt.gelu(t, approximate), lambda t: torch_ref(t, approximate)):
        xr = x.clone().requires_grad_()
        (g,) = torch.autograd.grad(f(xr).sum(), xr, create_graph=True)
        (g * g).sum().backward()
        out.append((g.detach(), xr.grad))
    torch.testing.assert_close(out[0], out[1], rtol=1e-12, atol=1e-13)


def test_no_graph_without_requires_grad():
    x = torch.randn(10)
    assert fgt.gelu(x).grad_fn is None
    xr = x.clone().requires_grad_()
    with torch.no_grad():
        y = fgt.gelu(xr)
    assert y.grad_fn is None and not y.requires_grad
    with torch.inference_mode():
        assert torch.equal(fgt.gelu(torch.ones(3)), fgt.gelu(torch.ones(3)))
    assert fgt.gelu(xr).grad_fn is not None


def test_input_is_not_modified():
    x = torch.randn(100)
    keep = x.clone()
    fgt.gelu(x)
    assert torch.equal(x, keep)


# ---- the module --------------------------------------------------------------------------------------------

class SigmoidGELU(torch.nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


@pytest.mark.parametrize("approximate", APPROXIMATE)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_module_trains_one_sgd_step_like_pytorch(approximate, dtype):
    def make(act):
        torch.manual_seed(5)
        return torch.nn.Sequential(torch.nn.Linear(16, 32), act, torch.nn.Linear(32, 4)).to(dtype)

    ref_act = SigmoidGELU() if approximate == "sigmoid" else torch.nn.GELU(approximate=approximate)
    models = [make(ref_act), make(fgt.GELU(approximate))]
    torch.manual_seed(6)
    x = torch.randn(64, 16, dtype=dtype) * 2
    target = torch.randn(64, 4, dtype=dtype)
    losses = []
    for m in models:
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        opt.zero_grad()
        loss = F.mse_loss(m(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    torch.testing.assert_close(losses[0], losses[1], rtol=tol, atol=tol)
    for (n, p), q in zip(models[0].named_parameters(), models[1].parameters()):
        torch.testing.assert_close(p, q, rtol=tol, atol=tol, msg=n)
    # and the step really changed the weights
    assert not torch.equal(models[1][0].weight, make(fgt.GELU(approximate))[0].weight)


def test_module_repr_and_api():
    assert repr(fgt.GELU()) == repr(torch.nn.GELU()) == "GELU(approximate='none')"
    assert repr(fgt.GELU("tanh")) == repr(torch.nn.GELU("tanh"))
    assert repr(fgt.GELU("sigmoid")) == "GELU(approximate='sigmoid')"
    m = fgt.GELU("tanh")
    assert isinstance(m, torch.nn.Module) and list(m.parameters()) == []
    x = torch.randn(3, 4)
    assert torch.equal(m(x), fgt.gelu(x, "tanh"))


# ---- errors ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", ["exact", "Tanh", "", None, 1])
def test_bad_approximate(bad):
    with pytest.raises(ValueError, match="'none', 'tanh', 'sigmoid'"):
        fgt.gelu(torch.ones(2), bad)
    with pytest.raises(ValueError, match="'none', 'tanh', 'sigmoid'"):
        fgt.GELU(bad)


def test_non_cpu_tensors_are_refused():
    x = torch.empty(3, device="meta")
    with pytest.raises(TypeError, match="CPU tensors only"):
        fgt.gelu(x)
    with pytest.raises(TypeError, match="CPU tensors only"):
        fgt.GELU()(x)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool, torch.complex64, torch.uint8], ids=str)
def test_unsupported_dtypes_are_refused(dtype):
    with pytest.raises(TypeError, match="supported: float32, float64, float16, bfloat16"):
        fgt.gelu(torch.zeros(3, dtype=dtype))


def test_non_tensors_and_sparse_are_refused():
    with pytest.raises(TypeError, match="torch.Tensor"):
        fgt.gelu(np.ones(3))
    with pytest.raises(TypeError, match="layout"):
        fgt.gelu(torch.eye(3).to_sparse())


def test_import_without_torch_says_what_to_install():
    root = Path(fastgelu.__file__).resolve().parent.parent
    code = "import sys; sys.modules['torch'] = None\nimport fastgelu.torch"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root)
    assert r.returncode != 0
    assert "ImportError" in r.stderr and 'pip install "fastgelu[torch]"' in r.stderr, r.stderr


def test_bfloat16_without_ml_dtypes_is_a_clear_type_error():
    """ml_dtypes is optional: without it a bfloat16 tensor raises a TypeError naming the extra to install,
    and the other dtypes still work (ml_dtypes hidden from the import system in a fresh process)."""
    code = ("import sys; sys.modules['ml_dtypes'] = None\n"
            "import torch, fastgelu.torch as fgt\n"
            "print(float(fgt.gelu(torch.ones(3))[0]))\n"
            "try:\n    fgt.gelu(torch.ones(3, dtype=torch.bfloat16))\n"
            "except TypeError as e:\n    print('TypeError', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    first, second = out.stdout.strip().splitlines()
    assert abs(float(first) - 0.8413447) < 1e-6
    assert second.startswith("TypeError") and 'fastgelu[bf16]' in second, out.stdout
