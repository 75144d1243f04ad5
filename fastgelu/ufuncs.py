"""The raw NumPy ufuncs: gelu, gelu_tanh, gelu_sigmoid (x) and gelu_grad, gelu_tanh_grad,
gelu_sigmoid_grad (x, dy), the gated gelu_mul, gelu_tanh_mul, gelu_sigmoid_mul (gate, up) -> gelu(gate)*up
and gelu_mul_grad, gelu_tanh_mul_grad, gelu_sigmoid_mul_grad (gate, up, dy) -> (dy*up*gelu'(gate), dy*gelu(gate)),
with loops for float16, float32, float64 and (with ml_dtypes) bfloat16. They take every ufunc keyword (out,
where, casting, dtype, ...) and dispatch through __array_ufunc__ (dask, xarray)."""
from ._dispatch import BFLOAT16
from ._dispatch import load as _load
from ._lists import KINDS as _KINDS, VARIANTS as _VARIANTS, ufunc_name as _name

ISA, _kernels = _load()

__all__ = [_name(v, kind[0]) for kind in _KINDS for v in _VARIANTS]
globals().update({name: _kernels.UFUNCS[name] for name in __all__})
