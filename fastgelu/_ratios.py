"""Judging two benchmark runs by same-run speed ratios (benches/, `--ratio-fail=PCT`): pure functions on the
per-round ratios each run recorded.

A round's ratio is (reference kernel's time) / (fastgelu's time), both timed back to back in the same round at
the same thread count and size, so whatever the machine does to both (a neighbour on a core, a slower clock)
cancels out to first order. Two runs of one case are compared by the ratio of their medians,

    change = median(new ratios) / median(old ratios) - 1,

and by a bootstrap interval of that quotient: both runs' rounds are resampled with replacement (a fixed seed,
so the verdict is reproducible), the quotient of medians is taken per resample, and its central LEVEL range
is the noise band. A case is SLOWER (the run fails) only when the fall exceeds PCT percent at the interval's
upper edge too: no resampling of either run's rounds brings it within PCT. ("Below 1" alone is not enough:
the interval knows each run's own noise, not the drift between two runs on a shared machine; on a 2-core VM
at load 12-15 it left a -12% fall of a 64M case with an interval of -20%..-3%.) A change beyond PCT that the
interval does not confirm is "noise"; within PCT, "same". Rounds that are few or scattered widen the
interval, so a noisy machine gives "noise", not a false SLOWER.

    python -m fastgelu._ratios OLD.json NEW.json --ratio-fail 5     # judge two saved runs again
"""
from typing import NamedTuple

import numpy as np

LEVEL = 0.99        # two-sided: the fall must lie below the interval's 99.5th percentile
RESAMPLES = 2000
SEED = 20261127


class Verdict(NamedTuple):
    case: str
    old: float        # median ratio, old run (nan when the case is new)
    new: float        # median ratio, new run (nan when the case is gone)
    change: float     # new / old - 1
    low: float        # bootstrap interval of new / old
    high: float
    verdict: str      # "SLOWER", "faster", "noise", "same", "new", "gone"


def interval(old, new, level=LEVEL, resamples=RESAMPLES, seed=SEED):
    """Bootstrap interval (low, high) of median(new) / median(old), each run's rounds resampled."""
    old, new = np.asarray(old, dtype=float), np.asarray(new, dtype=float)
    rng = np.random.default_rng(seed)
    mo = np.median(old[rng.integers(0, old.size, (resamples, old.size))], axis=1)
    mn = np.median(new[rng.integers(0, new.size, (resamples, new.size))], axis=1)
    q = mn / mo
    tail = (1 - level) / 2
    return float(np.quantile(q, tail)), float(np.quantile(q, 1 - tail))


def judge(case, old, new, pct, level=LEVEL):
    """The verdict on one case from its old and new per-round ratios; pct is the allowed fall in percent."""
    if pct < 0:
        raise ValueError(f"pct must be >= 0, got {pct}")
    if not old or not new:
        m_old = float(np.median(old)) if old else float("nan")
        m_new = float(np.median(new)) if new else float("nan")
        nan = float("nan")
        return Verdict(case, m_old, m_new, nan, nan, nan, "gone" if old else "new")
    m_old, m_new = float(np.median(old)), float(np.median(new))
    change = m_new / m_old - 1
    low, high = interval(old, new, level)
    limit = pct / 100
    if high < 1 - limit:
        verdict = "SLOWER"
    elif low > 1 + limit:
        verdict = "faster"
    elif abs(change) > limit:
        verdict = "noise"
    else:
        verdict = "same"
    return Verdict(case, m_old, m_new, change, low, high, verdict)


def compare(old_runs, new_runs, pct, level=LEVEL):
    """Verdicts for every case in either run; old_runs and new_runs map case name -> per-round ratios."""
    return [judge(c, old_runs.get(c, []), new_runs.get(c, []), pct, level)
            for c in sorted(set(old_runs) | set(new_runs))]


def failed(verdicts):
    return [v.case for v in verdicts if v.verdict == "SLOWER"]


def ratios_of(benchmarks, key="ratios"):
    """{fullname: per-round ratios} from pytest-benchmark records (dicts as saved in its JSON, with the ratios
    under extra_info[key]); records without ratios are left out."""
    out = {}
    for b in benchmarks:
        r = (b.get("extra_info") or {}).get(key)
        if r:
            out[b["fullname"]] = [float(x) for x in r]
    return out


def report(verdicts, pct, level=LEVEL):
    """Text lines: per case old ratio, new ratio, change, interval and verdict, then a summary line."""
    rows = [("case", "old", "new", "change", f"{level:.0%} interval", "verdict")]
    for v in verdicts:
        rows.append((v.case, f"{v.old:.3f}", f"{v.new:.3f}", f"{v.change:+.1%}",
                     f"{v.low - 1:+.1%} .. {v.high - 1:+.1%}", v.verdict))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(f"{c:<{w}}" if i == 0 else f"{c:>{w}}" for i, (c, w) in enumerate(zip(r, widths)))
             for r in rows]
    bad = failed(verdicts)
    counts = {k: sum(v.verdict == k for v in verdicts) for k in ("SLOWER", "faster", "noise", "same", "new", "gone")}
    lines.append(f"ratio check (a fall > {pct:g}% over the whole {level:.0%} bootstrap interval fails): "
                 + ", ".join(f"{n} {k}" for k, n in counts.items() if n)
                 + (f"; FAILED: {', '.join(bad)}" if bad else "; passed"))
    return lines


def main(argv=None):
    import argparse
    import json
    p = argparse.ArgumentParser(prog="python -m fastgelu._ratios", description="judge two saved benches/ runs")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--ratio-fail", type=float, default=5.0, metavar="PCT")
    args = p.parse_args(argv)
    runs = []
    for path in (args.old, args.new):
        with open(path) as f:
            runs.append(ratios_of(json.load(f)["benchmarks"]))
    verdicts = compare(runs[0], runs[1], args.ratio_fail)
    print("\n".join(report(verdicts, args.ratio_fail)))
    return 1 if failed(verdicts) else 0


if __name__ == "__main__":
    raise SystemExit(main())
