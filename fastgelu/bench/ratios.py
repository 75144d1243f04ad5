"""Judging two benchmark runs by same-run speed ratios (benches/, `--ratio-fail=PCT`): pure functions on the
per-round ratios each run recorded.

A round's ratio is (reference kernel's time) / (fastgelu's time), both timed back to back in the same round at
the same thread count and size, so whatever the machine does to both (a neighbour on a core, a slower clock)
cancels out to first order. To first order only: a shared VM's slow phases (seconds to minutes) slow a
cache-bound kernel and a compute-bound one by different amounts, so a case's ratio itself drifts between
phases (docs/performance.md has the figures). Each run therefore times every case in
several passes spread over the run (benches/conftest.py), and the rounds of one pass are one sample of the
machine's phase. Two runs of one case are compared by the ratio of their medians over all rounds,

    change = median(new ratios) / median(old ratios) - 1,

and by a two-level bootstrap interval of that quotient: for each resample, each run's passes are drawn with
replacement and then rounds within each drawn pass (a fixed seed, so the verdict is reproducible); the
quotient of medians is taken per resample, and its central LEVEL range is the noise band. Drawing passes
first makes the band as wide as the run's own phase-to-phase spread, not just the round-to-round one. A
case is SLOWER (the run fails) only when the fall exceeds PCT percent at the interval's upper edge too: no
resampling of either run brings it within PCT. A change beyond PCT that the interval does not confirm is
"noise"; within PCT, "same". Passes that disagree, rounds that are few or scattered widen the interval, so
a noisy machine gives "noise", not a false SLOWER; only a change larger than the run's own phase spread
gives a verdict. A run saved with one pass (flat extra_info["ratios"]) is judged by its rounds alone.

    python -m fastgelu.bench.ratios OLD.json NEW.json --ratio-fail 5     # judge two saved runs again
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


def _passes(runs):
    """A case's rounds as a list of passes (arrays); a flat list of ratios is one pass."""
    if len(runs) and isinstance(runs[0], (list, tuple, np.ndarray)):
        return [np.asarray(p, dtype=float) for p in runs if len(p)]
    return [np.asarray(runs, dtype=float)] if len(runs) else []


def _flat(runs):
    return np.concatenate(_passes(runs)) if len(runs) else np.empty(0)


def _resampled_medians(passes, rng, resamples):
    """Medians of `resamples` two-level resamples: passes drawn with replacement, then as many rounds as
    the drawn pass holds from within it."""
    width = max(p.size for p in passes)
    table = np.full((len(passes), width), np.nan)
    for i, p in enumerate(passes):
        table[i, :p.size] = p
    sizes = np.array([p.size for p in passes])
    pick = rng.integers(0, len(passes), (resamples, len(passes)))
    rows = (rng.random((resamples, len(passes), width)) * sizes[pick][..., None]).astype(int)
    drawn = table[pick[..., None], rows]
    drawn[np.arange(width)[None, None, :] >= sizes[pick][..., None]] = np.nan  # a short pass: its own count
    return np.nanmedian(drawn.reshape(resamples, -1), axis=1)


def interval(old, new, level=LEVEL, resamples=RESAMPLES, seed=SEED):
    """Bootstrap interval (low, high) of median(new) / median(old); old and new are per-round ratios, flat
    (one pass) or as a list of passes."""
    rng = np.random.default_rng(seed)
    q = _resampled_medians(_passes(new), rng, resamples) / _resampled_medians(_passes(old), rng, resamples)
    tail = (1 - level) / 2
    return float(np.quantile(q, tail)), float(np.quantile(q, 1 - tail))


def judge(case, old, new, pct, level=LEVEL):
    """The verdict on one case from its old and new per-round ratios; pct is the allowed fall in percent."""
    if pct < 0:
        raise ValueError(f"pct must be >= 0, got {pct}")
    flat_old, flat_new = _flat(old), _flat(new)
    if not flat_old.size or not flat_new.size:
        m_old = float(np.median(flat_old)) if flat_old.size else float("nan")
        m_new = float(np.median(flat_new)) if flat_new.size else float("nan")
        nan = float("nan")
        return Verdict(case, m_old, m_new, nan, nan, nan, "gone" if flat_old.size else "new")
    m_old, m_new = float(np.median(flat_old)), float(np.median(flat_new))
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


def ratios_of(benchmarks):
    """{fullname: per-round ratios, a list per pass} from pytest-benchmark records (dicts as saved in its JSON:
    extra_info["ratio_passes"], or a flat extra_info["ratios"] as one pass); records without ratios are left
    out."""
    out = {}
    for b in benchmarks:
        info = b.get("extra_info") or {}
        passes = info.get("ratio_passes") or ([info["ratios"]] if info.get("ratios") else [])
        passes = [[float(x) for x in p] for p in passes if p]
        if passes:
            out[b["fullname"]] = passes
    return out


def threads_differ(old_records, new_records, cases):
    """None, or why two runs cannot be compared: some case of `cases` was timed at another thread count
    (extra_info["threads"]; a ratio at 2 threads against one at 1 says nothing about the kernel)."""
    def threads(records):
        return {b["fullname"]: (b.get("extra_info") or {}).get("threads") for b in records}
    t_old, t_new = threads(old_records), threads(new_records)
    for case in sorted(cases):
        was, now = t_old.get(case), t_new.get(case)
        if was != now:
            was = "no thread count (a run before --bench-threads)" if was is None else f"{was} thread(s)"
            return (f"{case}: the saved run recorded {was}, this one {now}: compare runs taken with the same "
                    "--bench-threads")
    return None


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
    p = argparse.ArgumentParser(prog="python -m fastgelu.bench.ratios", description="judge two saved benches/ runs")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--ratio-fail", type=float, default=5.0, metavar="PCT")
    args = p.parse_args(argv)
    runs, records = [], []
    for path in (args.old, args.new):
        with open(path) as f:
            records.append(json.load(f)["benchmarks"])
        runs.append(ratios_of(records[-1]))
    error = threads_differ(records[0], records[1], set(runs[0]) & set(runs[1]))
    if error:
        print(f"ratio check not made: {error}")
        return 2
    verdicts = compare(runs[0], runs[1], args.ratio_fail)
    print("\n".join(report(verdicts, args.ratio_fail)))
    return 1 if failed(verdicts) else 0


if __name__ == "__main__":
    raise SystemExit(main())
