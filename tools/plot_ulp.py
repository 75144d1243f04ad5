"""Draw docs/ulp_error.png: float32 ULP error of the exact GELU against x, fastgelu beside PyTorch
(and NumPy+SciPy's 0.5x(1+erf) formula), measured on every 16th float32 in [-14, 6].

    python tools/plot_ulp.py [--out docs/ulp_error.png]
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.special import erf  # noqa: E402

import fastgelu  # noqa: E402
from fastgelu._reference import ref64, ulp_error  # noqa: E402


def grid():
    lo, hi = np.float32(-14).view(np.uint32), np.float32(6).view(np.uint32)
    neg = np.arange(np.uint32(0x80000000), lo, 16, dtype=np.uint32).view(np.float32)
    pos = np.arange(0, hi, 16, dtype=np.uint32).view(np.float32)
    return np.sort(np.concatenate([neg, pos]))


def binned_max(x, err, bins=800):
    edges = np.linspace(x.min(), x.max(), bins + 1)
    idx = np.clip(np.searchsorted(edges, x) - 1, 0, bins - 1)
    out = np.zeros(bins)
    np.maximum.at(out, idx, np.minimum(err, 1e9))
    return 0.5 * (edges[1:] + edges[:-1]), out


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default="docs/ulp_error.png")
    args = p.parse_args()
    x = grid()
    ref, scale = ref64("gelu", x)
    curves = {"fastgelu": fastgelu.gelu(x)}
    try:
        import torch
        curves["PyTorch F.gelu"] = torch.nn.functional.gelu(torch.from_numpy(x)).numpy()
    except ImportError:
        pass
    with np.errstate(all="ignore"):
        curves["NumPy+SciPy 0.5x(1+erf)"] = (0.5 * x * (1 + erf(x / np.float32(np.sqrt(2))))).astype(np.float32)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for name, y in curves.items():
        err = ulp_error(y, ref, scale, np.float32)
        central = np.abs(x) <= 3
        lost = (y == 0) & (ref != 0)
        print(f"{name:<26} max {err.max():.4g} ULP; on [-3, 3] {err[central].max():.4g} ULP; "
              f"returns 0 for a nonzero result from x = {x[lost].max() if lost.any() else 'never'}")
        xs, m = binned_max(x, err)
        ax.plot(xs, np.maximum(m, 0.05), label=f"{name} (max {err.max():.3g} ULP)", lw=1.2)
    ax.axhline(2, color="k", ls=":", lw=1, label="2 ULP")
    ax.set_yscale("log")
    ax.set_xlabel("x (float32)")
    ax.set_ylabel("max ULP error per bin (log)")
    ax.set_title("Exact GELU in float32: error against the true x*Phi(x)")
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
