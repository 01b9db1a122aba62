"""Issue 30's acceptance: a course of two assignments, a Canvas and a Moodle download graded once,
and every total sent back to the LMS checked against arithmetic done by hand.

Graded with the stand-in suite (tests/hostile/_support.py: 2 points per exercise), so a submission's
fraction of an exercise is 1 or 0. The assignments (COURSE):

* encodings: rope 6 + alibi 4 = 10 points, due 1 March 2026 12:00 UTC, 10 % off per started day
  late, at most 30 %; Alan (Canvas 104) has 3 more days, Alan (Moodle 5004) 2 more days.
* basics: attention 5 + sinusoidal 3 + learned 2 = 10 points, due 2 March 2026 09:00 Paris time,
  late work in full until 4 March 09:00, then nothing.

Canvas's download gives no times, only its LATE mark (in either case): a marked file costs one
day's penalty. Moodle's worksheet gives "Last modified (submission)", read in the assignment's zone.
"""

from __future__ import annotations

import contextlib
import csv
import io

import pytest

from grader import cli
from tests.grading_fixtures import shared_judges
from tests.hostile._support import reference_submission, require_bwrap
from tests.lms_builders import (
    CanvasStudent,
    MoodleParticipant,
    canvas_gradebook,
    canvas_zip,
    moodle_worksheet,
    moodle_zip,
)

PROBE_SUITE = "tests.hostile._support:ProbeSuite"
REFERENCE = reference_submission().encode()
NO_ROPE = REFERENCE + b"\ndel apply_rope\n"
NO_ALIBI = REFERENCE + b"\ndel alibi_slopes\n"
# A correct file without ALiBi, beside an alibi.py saved in cp1252: only ALiBi is lost.
CP1252_PAIR = {
    "rope.py": REFERENCE + b"\ndel alibi_slopes, alibi_bias\n",
    "alibi.py": "# Größe – “slopes”\ndef alibi_slopes(n_heads):\n    return []\n".encode("cp1252"),
}

COURSE = """
[[assignment]]
id = "encodings"
title = "Encodings 1"
due = 2026-03-01T12:00:00Z
late = { policy = "penalty", percent = 10, per = "day", cap = 30 }
exercises = { rope = 6, alibi = 4 }

[[assignment.extension]]
student = "104"
days = 3

[[assignment.extension]]
student = "5004"
days = 2

[[assignment]]
id = "basics"
title = "Basics"
timezone = "Europe/Paris"
due = 2026-03-02T09:00:00
late = { policy = "until", until = 2026-03-04T09:00:00 }
exercises = { attention = 5, sinusoidal = 3, learned = 2 }
"""

CANVAS = [
    CanvasStudent("Lovelace, Ada", "101", {"rope.py": REFERENCE}),
    CanvasStudent("Ångström, Zoë", "102", {"rope.py": REFERENCE}, late=True),
    CanvasStudent("Li, Lei", "103", {"rope.py": REFERENCE}, late=True, late_mark="late"),
    CanvasStudent("Turing, Alan", "104", {"rope.py": REFERENCE}, late=True),  # an extension on file
    CanvasStudent("Hopper, Grace", "105", {"rope.py": NO_ROPE}),
    CanvasStudent("Curie, Marie", "106", CP1252_PAIR),
    CanvasStudent("Lamarr, Hedy", "109", {"rope.py": NO_ALIBI}, late=True),
]
CANVAS_ABSENT = CanvasStudent("Noether, Emmy", "107")  # in the gradebook, handed in nothing
CANVAS_STRANGER = CanvasStudent("Kovalevskaya, Sofia", "110", {"rope.py": REFERENCE})  # not in the gradebook

MOODLE = [
    MoodleParticipant("Ada Lovelace", "5001", "ada@example.edu", {"rope.py": REFERENCE}),
    MoodleParticipant("Zoë Ångström", "5002", "zoe@example.edu", {"rope.py": REFERENCE}),
    MoodleParticipant("Lei Li", "5003", "li@example.edu", {"rope.py": REFERENCE}),
    MoodleParticipant("Alan Turing", "5004", "alan@example.edu", {"rope.py": REFERENCE}),
    MoodleParticipant("Grace Hopper", "5005", "grace@example.edu", {"rope.py": NO_ROPE}),
    MoodleParticipant("Marie Curie", "5006", "marie@example.edu", CP1252_PAIR),
    MoodleParticipant("Hedy Lamarr", "5007", "hedy@example.edu", {"rope.py": REFERENCE}),
]
MOODLE_ABSENT = MoodleParticipant("Emmy Noether", "5008", "emmy@example.edu")
MOODLE_STRANGER = MoodleParticipant("Sofia Kovalevskaya", "5009", "sofia@example.edu", {"rope.py": REFERENCE})

ENCODINGS_TIMES = {  # UTC, the zone of encodings' due date
    "5001": "Sunday, 1 March 2026, 11:00 AM",
    "5002": "Monday, 2 March 2026, 1:00 PM",
    "5003": "Tuesday, 10 March 2026, 9:00 AM",
    "5004": "Tuesday, 3 March 2026, 10:00 AM",
    "5005": "Sunday, 1 March 2026, 9:00 AM",
    "5006": "Sunday, 1 March 2026, 10:00 AM",
    "5007": "Sunday, 1 March 2026, 12:30 PM",
}
BASICS_TIMES = {  # Paris time
    "5001": "Monday, 2 March 2026, 8:00 AM",
    "5002": "Tuesday, 3 March 2026, 9:00 AM",
    "5003": "Thursday, 5 March 2026, 9:00 AM",
    "5004": "Tuesday, 3 March 2026, 10:00 AM",
    "5005": "Monday, 2 March 2026, 8:59 AM",
    "5006": "Monday, 2 March 2026, 7:00 AM",
    "5007": "Wednesday, 4 March 2026, 9:30 AM",
}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    (root / "course.toml").write_text(COURSE, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("POSLAB_ASSIGNMENTS", str(root / "course.toml"))
        yield root


@pytest.fixture(scope="module")
def graded(course):
    """Both downloads graded once, counted for encodings."""
    require_bwrap()
    canvas_zip(course / "canvas.zip", [*CANVAS, CANVAS_STRANGER])
    moodle_zip(course / "moodle.zip", [*MOODLE, MOODLE_STRANGER])
    out, stdout = course / "g", io.StringIO()
    command = ["grade", str(course / "canvas.zip"), str(course / "moodle.zip"), "--out", str(out)]
    with contextlib.redirect_stdout(stdout), shared_judges() as scheduler:
        code = cli.main(
            [*command, "--assignment", "encodings", "--timeout", "20", "--scheduler", scheduler], suite=PROBE_SUITE
        )
    assert code == 0
    return {"out": out, "stdout": stdout.getvalue()}


def export(course, graded, capsys, lms: str, assignment: str, gradebook: bytes) -> tuple[bytes, str]:
    (course / f"{lms}-{assignment}.csv").write_bytes(gradebook)
    out = course / f"{lms}-{assignment}-filled.csv"
    code = cli.main(
        ["export", lms, "--grades", str(graded["out"]), "--gradebook", str(course / f"{lms}-{assignment}.csv")]
        + ["--assignment", assignment, "--out", str(out)]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return out.read_bytes(), captured.out + captured.err


def cells(data: bytes, header: str, key: str) -> dict[str, str]:
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    return {row[key]: row[header] for row in rows if row[key] and "Possible" not in row[key]}


def test_canvas_totals_by_hand(course, graded, capsys):
    book = canvas_gradebook([*CANVAS, CANVAS_ABSENT], points="20.00", assignment="Encodings 1 (4242)")
    filled, said = export(course, graded, capsys, "canvas", "encodings", book)
    # rope 6 + alibi 4 = 10, scaled to Canvas's 20 points possible (x 2); a LATE mark: one day, 10 % off.
    assert cells(filled, "Encodings 1 (4242)", "ID") == {
        "101": "20.00",  # on time: 10 x 2
        "102": "18.00",  # LATE: 10 x 0.9 = 9, x 2
        "103": "18.00",  # late (lower case): 10 x 0.9 = 9, x 2
        "104": "20.00",  # LATE, but 3 more days on file and no time: on time, 10 x 2
        "105": "8.00",  # rope 0 + alibi 4 = 4, x 2
        "106": "12.00",  # rope 6 + alibi 0 (its cp1252 file not read) = 6, x 2
        "109": "10.80",  # LATE: (rope 6 + alibi 0) x 0.9 = 5.4, x 2
        "107": "",  # no submission: left as exported
        "999": "",  # the test student
    }
    assert "Noether" in said and "Emmy" in said  # in the gradebook with no submission, by name
    assert "kovalevskayasofia_110 (110) is in the grades but not in the gradebook" in said


def test_moodle_totals_for_both_assignments_by_hand(course, graded, capsys):
    book = moodle_worksheet([*MOODLE, MOODLE_ABSENT], maximum="10.00", modified=ENCODINGS_TIMES)
    filled, said = export(course, graded, capsys, "moodle", "encodings", book)
    assert cells(filled, "Grade", "Identifier") == {
        "Participant 5001": "10.00",  # 11:00, on time: 6 + 4
        "Participant 5002": "8.00",  # 25 h late: 2 started days, 20 % off: 10 x 0.8
        "Participant 5003": "7.00",  # 8 days 21 h late: 9 days x 10 % = 90 %, capped at 30 %: 10 x 0.7
        "Participant 5004": "10.00",  # 3 March 10:00, before the extended 3 March 12:00
        "Participant 5005": "4.00",  # on time, rope 0 + alibi 4
        "Participant 5006": "6.00",  # on time, rope 6 + alibi 0 (cp1252)
        "Participant 5007": "9.00",  # 30 min late: 1 started day, 10 % off: 10 x 0.9
        "Participant 5008": "",  # no submission
    }
    feedback = cells(filled, "Feedback comments", "Identifier")
    assert feedback["Participant 5003"].startswith("Encodings 1: 7/10: rope 6 pts: late best 6 (9 days late, 30% off")
    assert feedback["Participant 5003"].endswith("Late.") and feedback["Participant 5001"].startswith(
        "Encodings 1: 10/10"
    )
    assert "Participant 5003: Encodings 1: 7/10" not in said and "lei-li_5003: Encodings 1: 7/10" in said  # late: said
    assert "Emmy Noether" in said and "sofia-kovalevskaya_5009 (5009) is in the grades but not in the gradebook" in said

    book = moodle_worksheet([*MOODLE, MOODLE_ABSENT], maximum="10.00", modified=BASICS_TIMES)
    filled, _ = export(course, graded, capsys, "moodle", "basics", book)
    # attention 5 + sinusoidal 3 + learned 2 = 10; late work in full until 4 March 09:00 Paris, then 0.
    assert cells(filled, "Grade", "Identifier") == {
        "Participant 5001": "10.00",  # on time
        "Participant 5002": "10.00",  # late, before the second date
        "Participant 5003": "0.00",  # 5 March: after the second date
        "Participant 5004": "10.00",  # late, before the second date (no extension for basics)
        "Participant 5005": "10.00",  # 08:59, on time; its missing rope is not in basics
        "Participant 5006": "10.00",  # on time; its cp1252 alibi.py is not in basics
        "Participant 5007": "0.00",  # 4 March 09:30: after the second date
        "Participant 5008": "",
    }


def test_the_gradebook_keeps_its_columns_and_says_what_was_counted(graded):
    with open(graded["out"] / "gradebook.csv", encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = {row["id"]: row for row in reader}
    header = reader.fieldnames
    exercises = ["attention", "sinusoidal", "learned", "rope", "alibi", "t5", "decode", "extend"]
    assert header[:15] == ["id", "name", "lms_id", "late", "status", *exercises, "total", "max"]
    assert header[15:] == ["assignment", "due", "submitted_at", "lms_late", "counted", "problems"]
    hedy = rows["lamarrhedy_109"]
    # rope: 2/2 of 6 points, late: 6 x 0.9 = 5.4; alibi: 0; exercises outside encodings: blank
    assert (hedy["late"], hedy["rope"], hedy["alibi"], hedy["attention"], hedy["total"], hedy["max"]) == (
        "true",
        "5.4",
        "0",
        "",
        "5.4",
        "10",
    )
    assert "late best 6 (the LMS gives no time: one day, 10% off) = 5.4" in hedy["counted"]
    assert rows["lovelaceada_101"]["late"] == "false" and rows["lovelaceada_101"]["total"] == "10"
    marie = rows["curiemarie_106"]
    assert (marie["rope"], marie["alibi"], marie["total"]) == ("6", "0", "6")
    assert "alibi.py is not UTF-8 text (it looks like Windows-1252 (cp1252))" in marie["problems"]
    assert rows["turingalan_104"]["late"] == "true"  # Canvas's own mark is reported...
    assert rows["turingalan_104"]["total"] == "10"  # ...and the extension on file counts it on time
    assert "lamarrhedy_109: 5.4/10" in graded["stdout"]


def test_a_truncated_download_beside_a_good_one_is_refused_and_nothing_is_graded(course, capsys):
    whole = canvas_zip(course / "whole.zip", CANVAS[:1])
    (course / "truncated.zip").write_bytes(whole.read_bytes()[:-40])
    with pytest.raises(SystemExit) as stopped:
        cli.main(["grade", str(whole), str(course / "truncated.zip"), "--out", str(course / "nothing")])
    assert stopped.value.code == 2
    assert "truncated.zip is not a readable zip archive" in capsys.readouterr().err
    assert not (course / "nothing").exists()
