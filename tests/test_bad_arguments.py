"""Bad arguments: TypeError/ValueError naming the argument; `out` untouched whenever a call fails.

Shared helpers: tests/hostile_common.py. Values are compared bit for bit against the same computation on a
fresh contiguous copy."""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import fastgelu
from fastgelu import ufuncs

from hostile_common import (
    APPROX, ENTRIES, ENTRY_IDS, ENTRY_UFUNC, FWD_OF, GRAD, NAMES, UF, assert_same, assert_untouched, dy_sample,
    sample, sentinel, ucall)


# ======================================================================================================
# 1. Bad arguments
# ======================================================================================================

class _Opaque:
    pass


class _BogusDtype:
    """Duck-typed objects whose .dtype NumPy cannot interpret (as some array libraries' dtypes are)."""
    def __init__(self, dtype):
        self.dtype = dtype


BAD = {
    "complex128 array": np.ones(3, np.complex128),
    "complex64 array": np.array([1 + 1j, 2], np.complex64),
    "complex scalar": 1 + 2j,
    "numpy complex scalar": np.complex64(1),
    "0-d complex": np.array(1j),
    "list with complex": [1.0, 2j],
    "object array of floats": np.array([1.0, 2.0], dtype=object),
    "object array with None": np.array([1.0, None]),
    "list with None": [1.0, None, 3.0],
    "str": "text",
    "numeric str": "1.5",
    "str array": np.array(["1", "2"]),
    "list of str": ["a", "b"],
    "numpy str": np.str_("2.0"),
    "None": None,
    "bytes": b"\x00\x01\x02\x03",
    "bytes array": np.array([b"ab", b"cd"]),
    "dict": {"a": 1.0},
    "empty dict": {},
    "set": {1.0, 2.0},
    "ragged list": [[1.0, 2.0], [3.0]],
    "ragged nested": [1.0, [2.0, 3.0]],
    "ragged 3-level": [[[1.0], [2.0, 3.0]], [[4.0]]],
    "ragged arrays": [np.ones(2), np.ones(3)],
    "ragged tuple": ((1.0, 2.0), (3.0,)),
    "datetime64": np.array(["2020-01-01", "2021-06-30"], dtype="M8[D]"),
    "timedelta64": np.array([1, 2], dtype="m8[s]"),
    "structured": np.zeros(3, dtype=[("a", "f8"), ("b", "f4")]),
    "void": np.zeros(2, dtype="V8"),
    "object()": _Opaque(),
    "Decimal": Decimal("1.5"),
    "Fraction": Fraction(1, 3),
    "list of dicts": [{}, {}],
    "bogus .dtype string": _BogusDtype("not a dtype"),
    "bogus .dtype object": _BogusDtype(object()),
}
BAD_IDS = list(BAD)
RAGGED = {k for k in BAD if k.startswith("ragged")}


@pytest.mark.parametrize("approximate", APPROX)
@pytest.mark.parametrize("bad", BAD_IDS)
def test_gelu_bad_x_is_type_error_naming_x(bad, approximate):
    with pytest.raises(TypeError, match=r"^gelu: x "):
        fastgelu.gelu(BAD[bad], approximate=approximate)


@pytest.mark.parametrize("approximate", APPROX)
@pytest.mark.parametrize("bad", BAD_IDS)
def test_gelu_grad_bad_x_is_type_error_naming_x(bad, approximate):
    with pytest.raises(TypeError, match=r"^gelu_grad: x "):
        fastgelu.gelu_grad(BAD[bad], approximate=approximate)
    with pytest.raises(TypeError, match=r"^gelu_grad: x "):
        fastgelu.gelu_grad(BAD[bad], np.ones(3), approximate=approximate)


@pytest.mark.parametrize("approximate", APPROX)
@pytest.mark.parametrize("bad", [b for b in BAD_IDS if b != "None"])  # None means "no grad_output"
def test_gelu_grad_bad_grad_output_is_type_error_naming_it(bad, approximate):
    with pytest.raises(TypeError, match=r"^gelu_grad: grad_output "):
        fastgelu.gelu_grad(np.ones(3), BAD[bad], approximate=approximate)
    with pytest.raises(TypeError, match=r"^gelu_grad: grad_output "):
        fastgelu.gelu_grad(np.ones((2, 3), np.float32), grad_output=BAD[bad], approximate=approximate)


@pytest.mark.parametrize("bad", ["complex128 array", "object array of floats", "str", "None", "dict",
                                 "ragged list", "bytes", "datetime64"])
@pytest.mark.parametrize("entry", ENTRY_IDS[6:])
def test_wrapper_bad_input_leaves_out_untouched(entry, bad):
    out = sentinel(3, np.float64)
    before = out.copy()
    with pytest.raises(TypeError):
        if entry.endswith("+dy"):  # the bad value as grad_output
            ENTRIES[entry](np.ones(3), BAD[bad] if bad != "None" else {"x": 1}, out=out)
        else:
            ENTRIES[entry](BAD[bad], None, out=out)
    assert_untouched(out, before, "out after a failed call")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", BAD_IDS)
def test_raw_ufunc_bad_input_raises(name, bad):
    """The raw ufuncs refuse the same values (NumPy's own messages name the ufunc), and write nothing."""
    u = UF[name]
    err = (TypeError, ValueError) if bad in RAGGED else TypeError
    out = sentinel(3, np.float64)
    before = out.copy()
    positions = [0] if u.nin == 1 else [0, 1]
    for pos in positions:
        args = [np.ones(3)] * u.nin
        args[pos] = BAD[bad]
        with pytest.raises(err) as info:
            u(*args, out=out)
        if err is TypeError:
            assert name in str(info.value), str(info.value)
        assert_untouched(out, before, f"out after {name} failed")


@pytest.mark.parametrize("approximate", APPROX)
def test_longdouble_is_a_clear_type_error_naming_the_argument(approximate):
    """A real type without a loop (long double) must not be silently downcast; the error names it."""
    if np.dtype(np.longdouble) == np.dtype(np.float64):
        pytest.skip("long double is double here")
    ld = np.ones(3, np.longdouble)
    with pytest.raises(TypeError, match=r"^gelu: x "):
        fastgelu.gelu(ld, approximate=approximate)
    with pytest.raises(TypeError, match=r"^gelu_grad: grad_output "):
        fastgelu.gelu_grad(np.ones(3), ld, approximate=approximate)


@pytest.mark.parametrize("approximate", APPROX)
def test_torch_tensor_computes_or_is_type_error_naming_x(approximate):
    """A torch tensor has a .dtype NumPy does not know: compute it (it converts with __array__) or refuse
    it with a TypeError that names the argument -- not NumPy's 'Cannot interpret ...' from deep inside."""
    torch = pytest.importorskip("torch")
    t = torch.linspace(-4, 4, 50)
    want = ucall(FWD_OF[approximate], t.numpy())
    for call, arg in ((lambda v: fastgelu.gelu(v, approximate=approximate), "gelu: x "),
                      (lambda v: fastgelu.gelu_grad(np.linspace(-4, 4, 50, dtype=np.float32), v,
                                                    approximate=approximate), "gelu_grad: grad_output ")):
        try:
            res = call(t)
        except TypeError as e:
            assert str(e).startswith(arg), str(e)
        else:
            if arg.startswith("gelu:"):
                assert_same(np.asarray(res), want, "gelu of a torch tensor")


# ---- out of the wrong dtype / shape / writability -----------------------------------------------------

BAD_OUT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64, np.bool_]


@pytest.mark.parametrize("out_dtype", BAD_OUT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("entry", ENTRY_IDS)
def test_out_of_integer_dtype_is_error_and_untouched(entry, out_dtype):
    for dtype in (np.float32, np.float64):
        x = sample(dtype, 50)
        out = sentinel(50, out_dtype)
        before = out.copy()
        with pytest.raises(TypeError, match="[Cc]annot cast|casting"):
            ENTRIES[entry](x, dy_sample(dtype, 50), out=out)
        assert_untouched(out, before, f"{out_dtype} out after failed call")
        # the same with the out tuple form and with where=
        with pytest.raises(TypeError):
            ENTRIES[entry](x, dy_sample(dtype, 50), out=(out,), where=x > 0)
        assert_untouched(out, before, f"{out_dtype} out after failed call")


@pytest.mark.parametrize("entry", ENTRY_IDS)
def test_out_needing_unsafe_cast_under_strict_casting_is_error_and_untouched(entry):
    cases = [(np.float64, np.float32, "safe"), (np.float64, np.float32, "equiv"), (np.float64, np.float32, "no"),
             (np.float64, np.float16, "safe"), (np.float64, np.int64, "same_kind"),
             (np.float32, np.float64, "no"), (np.float32, np.float16, "safe"), (np.float32, np.int32, "same_kind")]
    for in_dtype, out_dtype, casting in cases:
        x = sample(in_dtype, 40)
        dy = dy_sample(in_dtype, 40)
        out = sentinel(40, out_dtype)
        before = out.copy()
        try:
            ENTRIES[entry](x, dy, out=out, casting=casting)
        except TypeError:
            pass
        else:
            pytest.fail(f"{np.dtype(in_dtype)} into {np.dtype(out_dtype)} out with casting={casting!r} was "
                        "accepted")
        assert_untouched(out, before, f"out after failed casting={casting}")


@pytest.mark.parametrize("out_dtype", [np.complex128, np.complex64, object], ids=["c16", "c8", "object"])
@pytest.mark.parametrize("entry", ENTRY_IDS)
def test_out_of_non_float_dtype_never_half_written(entry, out_dtype):
    """Complex/object outs are legal NumPy casts: either refused with out untouched, or fully correct."""
    x = sample(np.float64, 30)
    dy = dy_sample(np.float64, 30)
    out = sentinel(30, out_dtype)
    before = out.copy()
    try:
        with np.errstate(all="ignore"):  # float64 -> complex64 may overflow in NumPy's cast: legal
            res = ENTRIES[entry](x, dy, out=out)
    except TypeError:
        assert all(a is b or a == b or (a != a and b != b) for a, b in zip(out.tolist(), before.tolist()))
        return
    assert res is out
    with np.errstate(all="ignore"):
        want = ENTRIES[entry](x, dy).astype(out_dtype)
    if out.dtype == object:
        out, want = out.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(out, want)


BAD_SHAPES = [(5,), (4,), (4, 1), (1, 5), (5, 4), (0,), (), (4, 5, 1), (2, 4, 4), (4, 6), (3, 5)]


@pytest.mark.parametrize("out_shape", BAD_SHAPES, ids=str)
@pytest.mark.parametrize("entry", ENTRY_IDS)
def test_out_of_wrong_shape_is_error_and_untouched(entry, out_shape):
    x = sample(np.float32, 20).reshape(4, 5)
    dy = dy_sample(np.float32, 20).reshape(4, 5)
    out = sentinel(out_shape, np.float32)
    before = out.copy()
    with pytest.raises(ValueError):
        ENTRIES[entry](x, dy, out=out)
    assert_untouched(out, before, f"out {out_shape} after failed call")


@pytest.mark.parametrize("entry", [e for e in ENTRY_IDS if ENTRY_UFUNC[e] in GRAD and
                                   (e.startswith("ufuncs") or e.endswith("+dy"))])
@pytest.mark.parametrize("dy_shape", [(3,), (5, 4), (4, 5, 2), (2, 1, 6)], ids=str)
def test_non_broadcastable_grad_output_is_error_and_out_untouched(entry, dy_shape):
    x = sample(np.float64, 20).reshape(4, 5)
    out = sentinel((4, 5), np.float64)
    before = out.copy()
    with pytest.raises(ValueError, match="broadcast"):
        ENTRIES[entry](x, np.ones(dy_shape), out=out)
    assert_untouched(out, before, "out after failed broadcast")


def _readonly_outs(tmp_path, n=24, dtype=np.float64):
    """Read-only arrays of several origins, each with a writable twin to compare against."""
    flagged = sentinel(n, dtype)
    flagged.flags.writeable = False
    base = sentinel(2 * n, dtype, seed=6)
    view = base[::2]
    view.flags.writeable = False
    bcast = np.broadcast_to(np.float64(3.5).astype(dtype), (n,))
    frozen = np.frombuffer(bytes(sentinel(n, dtype).tobytes()), dtype=dtype)
    path = tmp_path / "ro.bin"
    sentinel(n, dtype, seed=7).tofile(path)
    ro_map = np.memmap(path, dtype=dtype, mode="r", shape=(n,))
    return {"flag": flagged, "view": view, "broadcast_to": bcast, "frombuffer(bytes)": frozen,
            "memmap r": ro_map}


@pytest.mark.parametrize("entry", ENTRY_IDS)
def test_read_only_out_is_value_error_and_untouched(entry, tmp_path):
    x = sample(np.float64, 24)
    dy = dy_sample(np.float64, 24)
    for kind, out in _readonly_outs(tmp_path).items():
        before = np.array(out, copy=True)
        with pytest.raises(ValueError, match="read-only"):
            ENTRIES[entry](x, dy, out=out)
        with pytest.raises(ValueError, match="read-only"):
            ENTRIES[entry](x, dy, out=out, where=x > 0)
        assert_untouched(out, before, f"read-only out ({kind})")


@pytest.mark.parametrize("entry", ENTRY_IDS)
def test_in_place_on_read_only_x_is_value_error_and_x_untouched(entry):
    x = sample(np.float32, 1000)
    x.flags.writeable = False
    before = x.copy()
    with pytest.raises(ValueError, match="read-only"):
        ENTRIES[entry](x, np.ones_like(x), out=x)
    assert_untouched(x, before, "read-only x")
    # computing from it without out= is fine and leaves it alone
    assert_same(ENTRIES[entry](x, np.ones_like(x)), ucall(ENTRY_UFUNC[entry], before))
    assert_untouched(x, before, "read-only x")


@pytest.mark.parametrize("entry", ENTRY_IDS)
def test_out_that_is_not_an_array_is_type_error(entry):
    x = np.linspace(-3, 3, 4)
    for bad_out in ([0.0] * 4, (0.0,) * 4, "out", 3.0, {"a": 1}):
        with pytest.raises((TypeError, ValueError)):
            ENTRIES[entry](x, np.ones(4), out=bad_out)
    keep = np.zeros(4)
    with pytest.raises(ValueError):  # two outputs for a one-output function
        ENTRIES[entry](x, np.ones(4), out=(keep, np.zeros(4)))
    assert not keep.any()


BAD_APPROX = ["exact", "Tanh", "TANH", "None", " none", "tanh ", "", "erf", "gelu", "sigmoid\x00", None, 0, 1,
              2, True, False, 1.5, float("nan"), b"tanh", ["tanh"], ("none",), {"tanh": 1}, {"sigmoid"},
              np.array("tanh"), object()]


@pytest.mark.parametrize("bad", BAD_APPROX, ids=lambda v: repr(v)[:20])
def test_bad_approximate_is_value_error_naming_the_choices_and_out_untouched(bad):
    x = sample(np.float64, 10)
    out = sentinel(10, np.float64)
    before = out.copy()
    calls = [lambda: fastgelu.gelu(x, approximate=bad, out=out),
             lambda: fastgelu.gelu(x, bad, out=out),
             lambda: fastgelu.gelu_grad(x, approximate=bad, out=out),
             lambda: fastgelu.gelu_grad(x, np.ones(10), bad, out=out),
             lambda: fastgelu.gelu_grad(x, grad_output=np.ones(10), approximate=bad, out=out)]
    for call in calls:
        with pytest.raises(ValueError) as info:
            call()
        msg = str(info.value)
        assert "'none'" in msg and "'tanh'" in msg and "'sigmoid'" in msg, msg
        assert_untouched(out, before, "out after bad approximate")


def test_numpy_string_approximate_is_accepted():
    x = sample(np.float64, 100)
    for a in APPROX:
        assert_same(fastgelu.gelu(x, approximate=np.str_(a)), ucall(FWD_OF[a], x))


@pytest.mark.parametrize("name", NAMES)
def test_raw_ufunc_bad_keywords_are_errors_and_out_untouched(name):
    u = UF[name]
    x = sample(np.float64, 16)
    args = (x,) if u.nin == 1 else (x, np.ones(16))
    out = sentinel(16, np.float64)
    before = out.copy()
    bad_calls = [
        (ValueError, dict(casting="bogus")),
        (TypeError, dict(dtype=np.int32)),
        (TypeError, dict(dtype=np.complex128)),
        (TypeError, dict(dtype=object)),
        (TypeError, dict(signature="ii->i" if u.nin == 2 else "i->i")),
        (TypeError, dict(not_a_keyword=1)),
        (ValueError, dict(order="Z")),
        (ValueError, dict(where=np.ones(5, bool))),
    ]
    for err, kw in bad_calls:
        with pytest.raises(err):
            u(*args, out=out, **kw)
        assert_untouched(out, before, f"out after {name}(**{kw})")
    with pytest.raises(TypeError):
        u(*args, out, out)  # too many positional outputs
    with pytest.raises(TypeError):
        u()
    assert_untouched(out, before, "out after bad positional call")


@pytest.mark.parametrize("entry", ENTRY_IDS[6:])
def test_wrapper_bad_keywords_are_type_errors_and_out_untouched(entry):
    x = sample(np.float64, 8)
    out = sentinel(8, np.float64)
    before = out.copy()
    with pytest.raises(TypeError):
        ENTRIES[entry](x, np.ones(8), out=out, not_a_keyword=True)
    with pytest.raises(TypeError):
        ENTRIES[entry](x, np.ones(8), out=out, dtype=np.int64)
    assert_untouched(out, before, "out after bad keyword")
    with pytest.raises(TypeError):
        fastgelu.gelu(x, "none", out)  # out is keyword-only
    with pytest.raises(TypeError):
        fastgelu.gelu_grad(x, np.ones(8), "none", out)
    assert_untouched(out, before, "out after bad positional")


BAD_BIAS = [(TypeError, BAD[k], k) for k in ["complex128 array", "str", "dict", "ragged list",
                                              "object array of floats", "datetime64"]]
BAD_BIAS += [(ValueError, np.ones(shape, np.float32), f"shape {shape}") for shape in [(3,), (5,), (4, 1), (3, 4), ()]]


@pytest.mark.parametrize("error, bias", [b[:2] for b in BAD_BIAS], ids=[b[2] for b in BAD_BIAS])
@pytest.mark.parametrize("func", ["gelu", "gelu_grad"])
def test_bad_bias_raises_naming_bias_and_out_untouched(func, error, bias):
    """A bias of a wrong type is a TypeError, of a wrong shape (x is 3 x 4) a ValueError; out unwritten."""
    x = sample(np.float32, 12).reshape(3, 4)
    out = sentinel((3, 4), np.float32)
    before = out.copy()
    with pytest.raises(error, match=rf"^{func}: bias "):
        getattr(fastgelu, func)(x, bias=bias, out=out)
    assert_untouched(out, before, "out after a bad bias")


@pytest.mark.parametrize("func", ["gelu", "gelu_grad"])
def test_bias_with_read_only_or_wrong_out_is_error_and_untouched(func, tmp_path):
    f = getattr(fastgelu, func)
    x = sample(np.float32, 24).reshape(4, 6)
    b = np.linspace(-1, 1, 6).astype(np.float32)
    for kind, out in _readonly_outs(tmp_path, 24, np.float32).items():
        out = out.reshape(4, 6)
        assert not out.flags.writeable
        before = np.array(out, copy=True)
        with pytest.raises(ValueError, match="read-only"):
            f(x, bias=b, out=out)
        assert_untouched(out, before, f"read-only out ({kind}) with bias")
    out = sentinel((4, 6), np.int32)
    before = out.copy()
    with pytest.raises(TypeError):
        f(x, bias=b, out=out)
    assert_untouched(out, before, "int32 out with bias")
    out = sentinel((4, 5), np.float32)
    before = out.copy()
    with pytest.raises(ValueError):
        f(x, bias=b, out=out)
    assert_untouched(out, before, "wrong-shape out with bias")
