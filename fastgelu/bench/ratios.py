"""Judging two benchmark runs by same-run speed ratios (benches/, `--ratio-fail=PCT`): pure functions on the
per-round ratios each run recorded.

A round's ratio is (reference kernel's time) / (fastgelu's time), both timed back to back in the same round at
the same thread count and size, so whatever the machine does to both (a neighbour on a core, a slower clock)
cancels out to first order. To first order only: a shared VM moves between phases of seconds to minutes that
slow one kernel much more than another (docs/performance.md, "The benchmark suite", has the figures), so a case's ratio jumps
between levels with the phase, and the rounds of one pass, milliseconds apart, share one level. A pass is therefore one sample of the machine, and
a run times every case in many passes spread over its length (benches/conftest.py). A case's ratio in a run
is the geometric mean of its pass medians (the median of a pass drops a round that an interrupt hit; the mean
over passes moves smoothly with the share of passes each phase took, where a median over all rounds jumps
from one level to the other when that share crosses one half), and two runs compare by

    change = gmean(new pass medians) / gmean(old pass medians) - 1,

with Welch's t interval at LEVEL of that quotient: both runs' log pass medians as two samples, each of a
dozen or so passes, where a bootstrap's percentile interval is too narrow. A case is SLOWER only when the
whole interval lies below -PCT percent; "faster" mirrors it; a change beyond PCT that the interval does not
confirm is "noise"; within PCT, "same". A run saved as one pass (flat extra_info["ratios"]) is judged by
the medians of consecutive groups of its rounds.

Two runs minutes apart can still sit in different phases for longer than either run's passes show, so one
run's verdict SLOWER is a suspicion: benches/conftest.py re-times each case flagged SLOWER in fresh
processes spread over about a minute, and `confirm` judges those passes alone against the old run again.
The case stays SLOWER (the run fails) only when that says SLOWER too; otherwise it is "unconfirmed" and
passes. Flagged cases that could not be re-timed stay SLOWER.

    python -m fastgelu.bench.ratios OLD.json NEW.json --ratio-fail 5     # judge two saved runs again
"""
from typing import NamedTuple

import numpy as np

LEVEL = 0.99        # two-sided: the fall must lie below the interval's upper edge at the 99.5th percentile
GROUP = 3           # rounds of a run saved as one pass that count as one pass (benches/conftest.py's ROUNDS)
VERDICTS = ("SLOWER", "unconfirmed", "faster", "noise", "same", "new", "gone")


class Verdict(NamedTuple):
    case: str
    old: float        # geometric mean of the pass medians, old run (nan when the case is new)
    new: float        # the same, new run (nan when the case is gone)
    change: float     # new / old - 1
    low: float        # LEVEL interval of new / old
    high: float
    verdict: str      # one of VERDICTS


def _passes(runs):
    """A case's rounds as a list of passes (arrays); a flat list of ratios is one pass."""
    if len(runs) and isinstance(runs[0], (list, tuple, np.ndarray)):
        return [np.asarray(p, dtype=float) for p in runs if len(p)]
    return [np.asarray(runs, dtype=float)] if len(runs) else []


def samples(runs):
    """The log ratios a run is judged by: one per pass, its median round. A run saved as one pass (its rounds
    back to back) counts each GROUP consecutive rounds as a pass."""
    passes = _passes(runs)
    if len(passes) == 1 and passes[0].size >= 2 * GROUP:
        passes = np.array_split(passes[0], passes[0].size // GROUP)
    return np.log([np.median(p) for p in passes])


def interval(old, new, level=LEVEL):
    """Welch's t interval (low, high) of gmean(new) / gmean(old) over the runs' samples(); (0, inf) when a
    run has fewer than two samples."""
    from scipy import stats
    a, b = samples(old), samples(new)
    if a.size < 2 or b.size < 2:
        return 0.0, float("inf")
    d = b.mean() - a.mean()
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    if va + vb == 0:
        return float(np.exp(d)), float(np.exp(d))
    df = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1))
    half = stats.t.ppf(1 - (1 - level) / 2, df) * np.sqrt(va + vb)
    return float(np.exp(d - half)), float(np.exp(d + half))


def judge(case, old, new, pct, level=LEVEL):
    """The verdict on one case from its old and new per-round ratios (flat, or a list per pass); pct is the
    allowed fall in percent."""
    if pct < 0:
        raise ValueError(f"pct must be >= 0, got {pct}")
    s_old, s_new = samples(old) if len(old) else np.empty(0), samples(new) if len(new) else np.empty(0)
    g_old = float(np.exp(s_old.mean())) if s_old.size else float("nan")
    g_new = float(np.exp(s_new.mean())) if s_new.size else float("nan")
    if not s_old.size or not s_new.size:
        nan = float("nan")
        return Verdict(case, g_old, g_new, nan, nan, nan, "gone" if s_old.size else "new")
    change = g_new / g_old - 1
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
    return Verdict(case, g_old, g_new, change, low, high, verdict)


def compare(old_runs, new_runs, pct, level=LEVEL):
    """Verdicts for every case in either run; old_runs and new_runs map case name -> per-round ratios."""
    return [judge(c, old_runs.get(c, []), new_runs.get(c, []), pct, level)
            for c in sorted(set(old_runs) | set(new_runs))]


def flagged(verdicts):
    """The cases a confirmation must re-time: those judged SLOWER."""
    return [v.case for v in verdicts if v.verdict == "SLOWER"]


def confirm(verdicts, old_runs, confirm_runs, pct, level=LEVEL):
    """The confirmation's own verdicts: each flagged case that confirm_runs holds (case -> per-round ratios
    of the re-timing), judged from those alone against the old run."""
    return [judge(c, old_runs.get(c, []), confirm_runs[c], pct, level)
            for c in flagged(verdicts) if len(confirm_runs.get(c, []))]


def settle(verdicts, confirmations):
    """The final verdicts: a flagged case stays SLOWER when its confirmation says SLOWER too, or when it has
    none (it could not be re-timed); with a confirmation that does not, it is "unconfirmed"."""
    by_case = {c.case: c for c in confirmations}
    return [v._replace(verdict="unconfirmed")
            if v.verdict == "SLOWER" and v.case in by_case and by_case[v.case].verdict != "SLOWER" else v
            for v in verdicts]


def failed(verdicts):
    return [v.case for v in verdicts if v.verdict == "SLOWER"]


def ratios_of(benchmarks, field="ratio_passes"):
    """{fullname: per-round ratios, a list per pass} from pytest-benchmark records (dicts as saved in its JSON:
    extra_info[field], for "ratio_passes" also a flat extra_info["ratios"] as one pass); records without them
    are left out. field="ratio_confirmation": the passes that re-timed a flagged case."""
    out = {}
    for b in benchmarks:
        info = b.get("extra_info") or {}
        passes = info.get(field) or ([info["ratios"]] if field == "ratio_passes" and info.get("ratios") else [])
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


def _table(verdicts, level, last="verdict", column=None):
    rows = [("case", "old", "new", "change", f"{level:.0%} interval", last)]
    for v in verdicts:
        rows.append((v.case, f"{v.old:.3f}", f"{v.new:.3f}", f"{v.change:+.1%}",
                     f"{v.low - 1:+.1%} .. {v.high - 1:+.1%}", column(v) if column else v.verdict))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(f"{c:<{w}}" if i == 0 else f"{c:>{w}}" for i, (c, w) in enumerate(zip(r, widths)))
            for r in rows]


def report(verdicts, pct, level=LEVEL, confirmations=None, how=""):
    """Text lines: per case the old and new ratio, change, interval and verdict of this run; then, for the
    cases it flagged, the confirmation's row (how: how they were re-timed) and whether it stands; then a
    summary line of the final verdicts."""
    lines = _table(verdicts, level)
    final = settle(verdicts, confirmations or [])
    if flagged(verdicts):
        lines.append(f"confirmation of the {len(flagged(verdicts))} case(s) flagged SLOWER"
                     + (f", {how}" if how else "") + ":")
        if confirmations:
            lines += _table(confirmations, level, last="confirmation",
                            column=lambda c: f"{c.verdict}: " + ("stands" if c.verdict == "SLOWER" else
                                                                  "unconfirmed"))
        missing = set(flagged(verdicts)) - {c.case for c in confirmations or []}
        if missing:
            lines.append(f"not re-timed, so they stay SLOWER: {', '.join(sorted(missing))}")
    bad = failed(final)
    counts = {k: sum(v.verdict == k for v in final) for k in VERDICTS}
    lines.append(f"ratio check (a fall > {pct:g}% over the whole {level:.0%} interval, confirmed in fresh "
                 "processes, fails): " + ", ".join(f"{n} {k}" for k, n in counts.items() if n)
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
    records = []
    for path in (args.old, args.new):
        with open(path) as f:
            records.append(json.load(f)["benchmarks"])
    old_runs, new_runs = ratios_of(records[0]), ratios_of(records[1])
    error = threads_differ(records[0], records[1], set(old_runs) & set(new_runs))
    if error:
        print(f"ratio check not made: {error}")
        return 2
    verdicts = compare(old_runs, new_runs, args.ratio_fail)
    confirmations = confirm(verdicts, old_runs, ratios_of(records[1], "ratio_confirmation"), args.ratio_fail)
    print("\n".join(report(verdicts, args.ratio_fail, confirmations=confirmations,
                           how="from the confirmation passes saved with the new run")))
    return 1 if failed(settle(verdicts, confirmations)) else 0


if __name__ == "__main__":
    raise SystemExit(main())
