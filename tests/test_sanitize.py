"""perflab.sanitize without a GPU: the sanitizers' output parsed, a run made a row (clean
only when the tool exited 0 with no error and every check passed), the sanitized command,
and the experiments the chapters register through it."""
from __future__ import annotations

from perflab import registry, sanitize


def test_sanitizer_output_is_parsed():
    mem = "ok   x\n123 passed, 0 failed\n========= ERROR SUMMARY: 0 errors\n"
    assert sanitize.parse(mem) == {"errors": 0, "passed": 123, "failed": 0, "hazards": 0,
                                   "summary": "ERROR SUMMARY: 0 errors"}
    race = ("120 passed, 1 failed\n========= RACECHECK SUMMARY: 2 hazards displayed "
            "(1 errors, 1 warnings)\n")
    p = sanitize.parse(race)
    assert (p["errors"], p["failed"], p["hazards"]) == (1, 1, 2)
    assert sanitize.parse("garbage")["errors"] is None


def test_a_drivers_tally_is_what_the_parser_reads(capsys):
    tally = sanitize.Tally()
    tally(True, "scan single-pass n=31")
    assert tally.done() == 0
    tally(False, "rle room n=1")
    assert tally.done() == 1
    out = capsys.readouterr().out
    assert "ok   scan single-pass n=31\n" in out and "FAIL rle room n=1\n" in out
    assert (sanitize.parse(out)["passed"], sanitize.parse(out)["failed"]) == (1, 1)


def test_a_run_is_clean_only_when_everything_held():
    ok = sanitize.row_of("memcheck", 0, "5 passed, 0 failed\nERROR SUMMARY: 0 errors", 2.0, 60)
    assert ok["check"].correct and ok["metrics"]["passed"] == (5, "1")
    assert ok["metrics"]["wall_s"] == (2.0, "s")
    for rc, text in ((3, "5 passed, 0 failed\nERROR SUMMARY: 2 errors"),
                     (1, "4 passed, 1 failed\nERROR SUMMARY: 0 errors"),
                     (0, "ERROR SUMMARY: 0 errors"),            # no tally: nothing checked
                     (None, "")):                               # timed out
        assert not sanitize.row_of("memcheck", rc, text, 1.0, 60)["check"].correct, (rc, text)
    assert sanitize.row_of("racecheck", None, "", 1.0, 60)["summary"] == "timed out after 60 s"


def test_the_sanitized_process_imports_the_drive_and_exits_with_it():
    cmd = sanitize.command("racecheck", "perflab.chapters.images.sanitize:drive")
    assert cmd[1:3] == ["--tool", "racecheck"] and "--error-exitcode" in cmd
    assert cmd[-1] == ("import sys; from perflab.chapters.images.sanitize import drive; "
                       "sys.exit(drive())")


def test_the_chapters_register_their_sanitizer_runs_through_the_core():
    exps = registry.all_experiments()
    for name, chapter in (("images.sanitize", "04-images"), ("matmul.sanitize", "08-matmul"),
                          ("scan.sanitize", "03-scan")):
        e = exps[name]
        assert e.chapter == chapter and e.requires is sanitize.missing and e.kernels()
        assert e.func.__module__ == "perflab.sanitize"
