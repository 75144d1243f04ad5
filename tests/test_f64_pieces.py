"""The float64 exact kernels run per chunk of 32 inputs only the pieces present (central |x| <= 1.25 or 1,
middle up to 4, tail beyond): the central loop for every lane, the other lanes queued by piece (one at a
time, or on AVX-512 a forward chunk's many compressed at once) and computed in batches of 32, or (many middle
inputs, no tail) every lane through central and middle with a select.
Every input must get the same bits whichever way its chunk went, and stay within 4 ULP of mpmath at and
around the piece boundaries, in every ISA build."""
import numpy as np
import pytest

from fastgelu._reference import ref_mp, ulp_error

NAMES = ["gelu", "gelu_grad"]
SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, -2.2e-308, 1e300, -1e300, 38.5, -38.5, -40.0]


def call(uf, name, x, **kw):
    if name == "gelu_grad":
        return uf[name](x, np.ones_like(x), **kw)
    return uf[name](x, **kw)


def boundary_inputs():
    """+-1, +-1.25 (forward) and +-4 and their neighbours up to 8 ulps away, plus small windows around them."""
    out = []
    for b in (1.0, 1.25, 4.0):
        near = [b]
        for direction in (0.0, np.inf):
            v = b
            for _ in range(8):
                v = np.nextafter(v, direction)
                near.append(v)
        near = np.array(near)
        window = np.linspace(b - 1e-3, b + 1e-3, 101)
        out += [near, -near, window, -window]
    return np.concatenate(out)


def mixed_chunks(rng, count=90):
    """Chunks of 32 holding every mix of central, middle and tail inputs (0 to 32 non-central lanes, so
    both the queued and the select path run), with IEEE specials spread over them."""
    chunks = []
    for c in range(count):
        x = rng.uniform(-1, 1, 32)
        n_far = c % 33
        far = rng.choice(32, size=n_far, replace=False)
        n_tail = 0 if c % 3 == 0 else rng.integers(0, n_far + 1)
        a = rng.uniform(1, 4, n_far)
        a[:n_tail] = rng.uniform(4, 39, n_tail)
        x[far] = rng.choice([-1, 1], n_far) * a
        chunks.append(x)
    x = np.concatenate(chunks)
    x[rng.choice(x.size, len(SPECIALS), replace=False)] = SPECIALS
    return x


@pytest.mark.parametrize("inputs", ["piece boundaries", "mixed chunks"])
@pytest.mark.parametrize("name", NAMES)
def test_within_4_ulp(uf, name, rng, inputs):
    pytest.importorskip("mpmath")
    x = boundary_inputs() if inputs == "piece boundaries" else mixed_chunks(rng, 40)
    ref, scale = ref_mp(name, x)
    err = ulp_error(call(uf, name, x), ref, scale, np.float64)
    i = int(np.argmax(err))
    assert err[i] <= 4, f"{name} on {inputs}: {err[i]:.3f} ULP at x = {x[i]!r}"


@pytest.mark.parametrize("name", NAMES)
def test_same_bits_whichever_path(uf, name, rng):
    """Each input as part of mixed chunks, alone in a chunk of 32 equal inputs (the select path for a
    middle input, a full batch for a tail one), alone in a call (a padded chunk, flushed at the end), in
    place, strided, and at lengths that leave a ragged end and partly filled queues."""
    x = mixed_chunks(rng)
    y = call(uf, name, x)
    with np.errstate(invalid="ignore"):
        alone = np.array([call(uf, name, np.full(32, v))[0] for v in x])
        single = np.array([call(uf, name, x[i:i + 1])[0] for i in range(x.size)])
    np.testing.assert_array_equal(y, alone)
    np.testing.assert_array_equal(y, single)
    inplace = x.copy()
    assert call(uf, name, inplace, out=inplace) is inplace
    np.testing.assert_array_equal(inplace, y)
    np.testing.assert_array_equal(call(uf, name, np.repeat(x, 2)[::2]), y)
    for n in (33, 95, 1001):
        np.testing.assert_array_equal(call(uf, name, x[:n]), y[:n])


def test_gradient_in_place_over_dy_with_queued_lanes(uf, rng):
    x = mixed_chunks(rng)
    dy = rng.standard_normal(x.size)
    want = uf["gelu_grad"](x, dy)
    np.testing.assert_array_equal(want, uf["gelu_grad"](x, np.ones_like(x)) * dy)
    out = dy.copy()
    assert uf["gelu_grad"](x, out, out=out) is out
    np.testing.assert_array_equal(out, want)
    xx = x.copy()
    assert uf["gelu_grad"](xx, dy, out=xx) is xx
    np.testing.assert_array_equal(xx, want)


@pytest.mark.parametrize("name", NAMES)
def test_no_floating_point_exceptions_from_unused_pieces(uf, name, rng):
    x = mixed_chunks(rng)
    with np.errstate(all="raise"):
        call(uf, name, x)
        call(uf, name, x[::3])
