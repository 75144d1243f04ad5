"""`python -m fastgelu check`: the accuracy self-test on a dense sample, every function and dtype."""
import numpy as np

from . import ufuncs
from ._reference import NAMES, dense_sample, ref64, ref_mp, special_failures, ulp_error

BOUND = {np.float32: 2.0, np.float64: 4.0}


def measure(name, dtype, n=200_000, ufuncs_by_name=None):
    """(max ULP, worst input) of one function on the dense sample of `dtype`."""
    uf = (ufuncs_by_name or {k: getattr(ufuncs, k) for k in NAMES})[name]
    x = dense_sample(dtype, n)
    x = x[np.isfinite(x)]
    if dtype == np.float64:  # mpmath reference: a smaller, still dense sample
        x = x[:: max(1, x.size // 4000)]
        ref, scale = ref_mp(name, x)
    else:
        ref, scale = ref64(name, x)
    with np.errstate(all="raise"):
        y = uf(x, np.ones_like(x)) if name.endswith("_grad") else uf(x)
    err = ulp_error(y, ref, scale, dtype)
    i = int(np.argmax(err))
    return float(err[i]), float(x[i])


def run(out=print):
    """Print the table; return True when every bound holds."""
    ok = True
    out(f"{'function':<20}{'dtype':<9}{'max ULP':>9}  {'bound':>5}  worst x")
    for dtype in (np.float32, np.float64):
        for name in NAMES:
            try:
                err, worst = measure(name, dtype)
            except ImportError:
                out(f"{name:<20}{np.dtype(dtype).name:<9}{'-':>9}  (needs mpmath: pip install mpmath)")
                continue
            flag = "" if err <= BOUND[dtype] else "  FAIL"
            ok &= not flag
            out(f"{name:<20}{np.dtype(dtype).name:<9}{err:>9.3f}  {BOUND[dtype]:>5.0f}  {worst!r}{flag}")
        bad = special_failures({k: getattr(ufuncs, k) for k in NAMES}, dtype)
        ok &= not bad
        out(f"IEEE specials ({np.dtype(dtype).name}): " + ("all right" if not bad else "; ".join(bad)))
    return ok
