"""`fastgelu bench --instructions` (fastgelu/bench/instructions.py): the baseline comparison and the message when
Valgrind is missing. The counting itself runs in CI (.ci/run), where Valgrind is installed."""
import json

from fastgelu.__main__ import main
from fastgelu.bench import instructions


def test_a_change_beyond_one_percent_in_either_direction_is_flagged():
    base = {"a": 10.0, "b": 10.0, "c": 10.0, "d": 10.0}
    now = {"a": 10.09, "b": 9.91, "c": 10.11, "d": 9.89}
    verdicts = {name: v for name, _, _, _, v in instructions.compare(base, now)}
    assert verdicts == {"a": "ok", "b": "ok", "c": "CHANGED", "d": "CHANGED"}


def test_lines_missing_from_the_baseline_fail_and_unmeasured_lines_do_not():
    rows = instructions.compare({"old": 5.0}, {"new": 5.0})
    assert [(r[0], r[4]) for r in rows] == [("new", "NEW"), ("old", "not measured")]


def test_missing_valgrind_is_a_clear_message(monkeypatch, capsys):
    monkeypatch.setattr(instructions.shutil, "which", lambda name: None)
    assert main(["bench", "--instructions"]) == 2
    err = capsys.readouterr().err
    assert "needs Valgrind" in err and "apt-get install valgrind" in err


def test_a_changed_line_fails_the_command(monkeypatch, tmp_path, capsys):
    counts = {"avx2 float32 none fwd sigma=1": 12 << 18, "avx2 float32 none grad sigma=1": 20 << 18}
    monkeypatch.setattr(instructions.shutil, "which", lambda name: "/usr/bin/valgrind")
    monkeypatch.setattr(instructions, "measure", lambda isas: dict(counts))
    monkeypatch.setattr(instructions, "valgrind_version", lambda: "valgrind-test")
    path = tmp_path / "instructions.json"
    assert main(["bench", "--instructions", "--baseline", str(path), "--update-baseline"]) == 0
    saved = json.loads(path.read_text())
    assert saved["instructions_per_call"] == counts and saved["elements"] == instructions.ELEMENTS
    assert main(["bench", "--instructions", "--baseline", str(path)]) == 0
    counts["avx2 float32 none grad sigma=1"] = 41 << 17
    capsys.readouterr()
    assert main(["bench", "--instructions", "--baseline", str(path)]) == 1
    out = capsys.readouterr().out
    assert "avx2 float32 none grad sigma=1" in out and "CHANGED" in out and "+2.50%" in out
