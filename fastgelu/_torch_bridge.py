"""The NumPy API (fastgelu.gelu, gelu_mul, ...) called with PyTorch tensors: the ufunc runs on arrays over the
tensors' own memory and a tensor comes back, as torch's own __array_wrap__ would give (that hook predates NumPy
2's signature and NumPy warns when it is called). Never imports torch: a caller can only hold a tensor once
torch is imported."""
import sys

import numpy as np


def is_tensor(a):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(a, torch.Tensor)


def any_tensor(*values):
    """Whether any of values (arrays, scalars, None; an out tuple's members count one by one) is a tensor."""
    if "torch" not in sys.modules:
        return False
    return any(is_tensor(v) for a in values for v in (a if isinstance(a, tuple) else (a,)))


def _array(a):
    return np.asarray(a) if is_tensor(a) else a


def call(run, args, out):
    """run(*arrays, out=outs) with every tensor among args and out (None, one array or tensor, or a tuple of
    them and None) as an array over its memory. Returns out when given, else run's result, as tensors when
    args[0] is one."""
    outs = tuple(_array(o) for o in out) if isinstance(out, tuple) else _array(out)
    res = run(*(_array(a) for a in args), out=outs)
    if out is not None:
        return out
    if not is_tensor(args[0]):
        return res
    torch = sys.modules["torch"]
    if isinstance(res, tuple):
        return tuple(torch.from_numpy(np.asarray(r)) for r in res)
    return torch.from_numpy(np.asarray(res))
