"""The round trip: an LMS's bulk download graded (for real, in the sandbox), its grades written into
that LMS's own grade file, each student's total in their row.

    python -m grader grade canvas_export.zip ... --out g/
    python -m grader export canvas --grades g/ --gradebook gb.csv --assignment "Position Lab" --out import.csv

One grading run serves every test here (a module fixture): a Canvas, a Moodle and a Gradescope
download of ten students each (three classes: each export also warns about the other two's
students), graded with the small stand-in suite (tests/hostile/_support.py:
five checks of 2 points, one per exercise, PROBE_MAX = 10). Each expected total follows from how the
submission was built: the reference scores 10, each removed function costs its exercise's 2
points, a file that does not import or no .py file scores 0.
"""

from __future__ import annotations

import contextlib
import csv
import io
import shutil
from dataclasses import replace

import pytest

from grader import cli
from grader.gradebook import load_gradebook
from tests.grading_fixtures import shared_judges
from tests.hostile._support import PROBE_MAX, reference_submission, require_bwrap
from tests.lms_builders import (
    CanvasStudent,
    GradescopeSubmission,
    MoodleParticipant,
    canvas_gradebook,
    canvas_zip,
    gradescope_zip,
    moodle_worksheet,
    moodle_zip,
)

REFERENCE = reference_submission().encode()
NO_ROPE = REFERENCE + b"\ndel apply_rope\n"  # rope: 0 of 2
NO_ALIBI = REFERENCE + b"\ndel alibi_slopes\n"  # alibi: 0 of 2
NO_ROPE_NO_ALIBI = NO_ROPE + b"del alibi_slopes\n"
SYNTAX_ERROR = b"def attention(q, k, v:\n    return q\n"  # nothing imports: 0
# Two files, each lacking what the other has: full marks only if both are graded together.
TWO_FILES = {"rope.py": REFERENCE + b"\ndel alibi_slopes, alibi_bias\n", "alibi.py": NO_ROPE}
WINDOWS = b"\xef\xbb\xbf" + REFERENCE.replace(b"\n", b"\r\n")  # a BOM and CRLF: still the reference

CANVAS = [  # (student, expected total out of PROBE_MAX)
    (CanvasStudent("Lovelace, Ada", "101", {"rope.py": REFERENCE}), 10),
    (CanvasStudent("Ångström, Zoë", "102", TWO_FILES), 10),
    (CanvasStudent("李雷", "103", {"rope.py": NO_ROPE}), 8),
    (CanvasStudent("Turing, Alan", "104", {"rope.py": REFERENCE}, late=True), 10),
    (CanvasStudent("Hopper, Grace", "105", {"rope-1.py": REFERENCE}), 10),  # a resubmission
    (CanvasStudent("Curie, Marie", "106", {"rope.py": SYNTAX_ERROR}), 0),
    (CanvasStudent("Noether, Emmy", "107", {"solution.pdf": b"%PDF-1.7"}), 0),  # no .py file
    (CanvasStudent("Ramanujan, Srinivasa", "108", {"alibi.py": NO_ALIBI}), 8),
    (CanvasStudent("Lamarr, Hedy", "109", {"rope.py": NO_ROPE_NO_ALIBI}, late=True), 6),
    (CanvasStudent("Kovalevskaya, Sofia", "110", {"rope.py": WINDOWS}), 10),
]
CANVAS_ABSENT = CanvasStudent("Goodall, Jane", "111")  # in the gradebook, handed in nothing
CANVAS_IDS = {"101": "lovelaceada_101", "102": "angstromzoe_102", "103": "student_103", "104": "turingalan_104"}

MOODLE = [
    (MoodleParticipant("Ada Lovelace", "5001", "ada@moodle.example.edu", {"rope.py": REFERENCE}), 10),
    (
        MoodleParticipant(
            "Zoë Ångström",
            "5002",
            "zoe@moodle.example.edu",
            {"exercises/rope.py": TWO_FILES["rope.py"], "exercises/alibi.py": TWO_FILES["alibi.py"]},
        ),
        10,
    ),
    (MoodleParticipant("李雷", "5003", "li@moodle.example.edu", {"rope.py": NO_ROPE}), 8),
    (MoodleParticipant("Alan Turing", "5004", "alan@moodle.example.edu", {"rope.py": NO_ALIBI}), 8),
    (MoodleParticipant("Grace Hopper", "5005", "grace@moodle.example.edu", {"rope.py": NO_ROPE_NO_ALIBI}), 6),
    (MoodleParticipant("Marie Curie", "5006", "marie@moodle.example.edu", {"rope.py": SYNTAX_ERROR}), 0),
    (MoodleParticipant("Emmy Noether", "5007", "emmy@moodle.example.edu", {"notes.txt": b"see rope.py"}), 0),
    (MoodleParticipant("Hedy Lamarr", "5008", "hedy@moodle.example.edu", {"rope.py": WINDOWS}), 10),
    (MoodleParticipant("Sofia Kovalevskaya", "5009", "sofia@moodle.example.edu", {"rope.py": REFERENCE}), 10),
    (MoodleParticipant("Srinivasa Ramanujan", "5010", "srini@moodle.example.edu", {"rope.py": NO_ROPE}), 8),
]
MOODLE_ABSENT = MoodleParticipant("Jane Goodall", "5011", "jane@moodle.example.edu")

GRADESCOPE = [  # one submission per folder; a group of two; an SID without an email
    (GradescopeSubmission("90001", [("Ada Lovelace", "1001", "Ada@GS.Example.edu")], {"rope.py": REFERENCE}), 10),
    (
        GradescopeSubmission(
            "90002",
            [("Zoë Ångström", "1002", "zoe@gs.example.edu"), ("李雷", "1003", "li@gs.example.edu")],
            {"exercises/rope.py": NO_ROPE},
        ),
        8,
    ),
    (GradescopeSubmission("90003", [("Alan Turing", "1004", "alan@gs.example.edu")], TWO_FILES), 10),
    (GradescopeSubmission("90004", [("Grace Hopper", "1005", "grace@gs.example.edu")], {"rope.py": NO_ALIBI}), 8),
    (GradescopeSubmission("90005", [("Marie Curie", "1006", "marie@gs.example.edu")], {"rope.py": SYNTAX_ERROR}), 0),
    (GradescopeSubmission("90006", [("Emmy Noether", "1007", "")], {"rope.py": NO_ROPE_NO_ALIBI}), 6),
    (GradescopeSubmission("90007", [("Hedy Lamarr", "1008", "hedy@gs.example.edu")], {"rope.py": WINDOWS}), 10),
    (
        GradescopeSubmission("90008", [("Sofia Kovalevskaya", "1009", "sofia@gs.example.edu")], {"rope.py": REFERENCE}),
        10,
    ),
    (
        GradescopeSubmission(
            "90009",
            [("Srinivasa Ramanujan", "1010", "srini@gs.example.edu")],
            {"rope.py": REFERENCE, "test_rope.py": b"raise SystemExit(1)\n"},
        ),
        10,
    ),  # tests: ignored
]
# The Gradescope course's Canvas gradebook: SIS Login ID is the email, SIS User ID the Gradescope SID.
GS_PEOPLE = [person for item, _ in GRADESCOPE for person in item.submitters] + [("Jane Goodall", "1011", "j@x.org")]
GS_CANVAS = [
    CanvasStudent(name, str(700 + n), sis_user_id=sid, sis_login_id=email or f"user{n}")
    for n, (name, sid, email) in enumerate(GS_PEOPLE)
]
GS_EXPECTED = {email.lower() or sid: total for item, total in GRADESCOPE for _, sid, email in item.submitters}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The three downloads graded once: {"root", "out", "stderr"}."""
    require_bwrap()
    root = tmp_path_factory.mktemp("lms")
    canvas_zip(
        root / "canvas_export.zip",
        [student for student, _ in CANVAS],
        extra=[
            ("__MACOSX/._lovelaceada_101_9001_rope.py", b"\x00\x05\x16\x07"),
            ("../lovelaceada_101_9999_rope.py", b"raise SystemExit('escaped')\n"),
        ],
    )
    moodle_zip(root / "moodle_export.zip", [person for person, _ in MOODLE])
    gradescope_zip(root / "gradescope_export.zip", [item for item, _ in GRADESCOPE])
    out, stderr = root / "g", io.StringIO()
    with contextlib.redirect_stderr(stderr), shared_judges() as scheduler:
        code = cli.main(
            [
                "grade",
                *(str(root / f"{lms}_export.zip") for lms in ("canvas", "moodle", "gradescope")),
                "--out",
                str(out),
                "--timeout",
                "20",
                "--scheduler",
                scheduler,
            ],
            suite=PROBE_SUITE,
        )
    assert code == 0, stderr.getvalue()[-3000:]
    return {"root": root, "out": out, "stderr": stderr.getvalue()}


PROBE_SUITE = "tests.hostile._support:ProbeSuite"  # 2 points per exercise: totals follow from what was built


def gradebook_rows(out) -> dict[str, dict[str, str]]:
    with open(out / "gradebook.csv", encoding="utf-8", newline="") as handle:
        return {row["id"]: row for row in csv.DictReader(handle)}


def column(data: bytes, header: str, key: int) -> dict[str, str]:
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    index = rows[0].index(header)
    return {row[key]: row[index] for row in rows[1:] if row[key]}


def test_each_student_of_a_download_is_one_gradebook_row_with_name_lms_id_and_late(graded):
    rows = gradebook_rows(graded["out"])
    assert len(rows) == len(CANVAS) + len(MOODLE) + len(GS_EXPECTED)
    assert list(next(iter(rows.values())))[:5] == ["id", "name", "lms_id", "late", "status"]
    for lms_id, submission_id in CANVAS_IDS.items():
        assert rows[submission_id]["lms_id"] == lms_id
    assert rows["angstromzoe_102"]["name"] == "ångströmzoë" and rows["student_103"]["name"] == "李雷"
    assert [rows[sid]["late"] for sid in ("lovelaceada_101", "turingalan_104", "lamarrhedy_109")] == [
        "false",
        "true",
        "true",
    ]
    assert rows["student_5003"]["name"] == "李雷" and rows["zoe-angstrom_5002"]["lms_id"] == "5002"
    assert rows["ada-lovelace_ada-gs-example-edu"]["lms_id"] == "ada@gs.example.edu"
    assert rows["curiemarie_106"]["status"] == "import_failed" and rows["noetheremmy_107"]["total"] == "0"
    err = graded["stderr"]
    assert "canvas_export.zip: a Canvas bulk download of 10 student(s)." in err
    assert "The zip entry '../lovelaceada_101_9999_rope.py' was refused" in err
    assert not (graded["root"].parent / "lovelaceada_101_9999_rope.py").exists()


def test_canvas_round_trip_puts_each_total_in_its_row(graded, tmp_path, capsys):
    students = [
        replace(student, sis_user_id=f"S{student.user_id}", sis_login_id=f"{student.user_id}@example.edu")
        for student in [student for student, _ in CANVAS] + [CANVAS_ABSENT]
    ]
    gradebook = tmp_path / "gb.csv"
    gradebook.write_bytes(canvas_gradebook(students, points="100.00"))
    out = tmp_path / "import.csv"
    assert (
        cli.main(
            [
                "export",
                "canvas",
                "--grades",
                str(graded["out"]),
                "--gradebook",
                str(gradebook),
                "--assignment",
                "Position Lab",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    expected = {student.user_id: f"{total * 100 / PROBE_MAX:.2f}" for student, total in CANVAS}
    expected |= {CANVAS_ABSENT.user_id: "", "999": ""}  # no submission: blank, never 0; the Test Student
    assert column(out.read_bytes(), "Position Lab (4242)", 1) == expected
    captured = capsys.readouterr()
    assert "filled for 10 student(s); 1 without a grade left as exported" in captured.out
    assert "scaled to 100" in captured.err


def test_moodle_round_trip_puts_each_total_in_its_row(graded, tmp_path, capsys):
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_bytes(moodle_worksheet([person for person, _ in MOODLE] + [MOODLE_ABSENT], maximum="10.00"))
    out = tmp_path / "import.csv"
    assert (
        cli.main(["export", "moodle", "--grades", str(graded["out"]), "--gradebook", str(worksheet), "--out", str(out)])
        == 0
    )
    expected = {f"Participant {person.participant_id}": f"{total:.2f}" for person, total in MOODLE}
    expected[f"Participant {MOODLE_ABSENT.participant_id}"] = ""
    assert column(out.read_bytes(), "Grade", 0) == expected
    captured = capsys.readouterr()
    assert "filled for 10 student(s)" in captured.out and "scaled" not in captured.err  # 10 of 10: as is
    assert "same student" not in captured.err  # the other downloads' students are simply not in this class


def test_gradescope_round_trip_into_the_courses_canvas_gradebook(graded, tmp_path, capsys):
    gradebook = tmp_path / "gb.csv"
    gradebook.write_bytes(canvas_gradebook(GS_CANVAS, points="50.00"))
    out = tmp_path / "import.csv"
    assert (
        cli.main(
            [
                "export",
                "canvas",
                "--grades",
                str(graded["out"]),
                "--gradebook",
                str(gradebook),
                "--assignment",
                "Position",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    filled = column(out.read_bytes(), "Position Lab (4242)", 1)
    for student in GS_CANVAS:
        key = student.sis_login_id if "@" in student.sis_login_id else student.sis_user_id
        expected = GS_EXPECTED.get(key.lower())
        assert filled[student.user_id] == ("" if expected is None else f"{expected * 50 / PROBE_MAX:.2f}"), student
    assert "filled for 10 student(s); 1 without a grade" in capsys.readouterr().out


def test_a_rerun_keeps_every_unchanged_result_and_the_same_gradebook(graded, tmp_path, monkeypatch, capsys):
    out = tmp_path / "g"
    shutil.copytree(graded["out"], out)
    before = (out / "gradebook.csv").read_text(encoding="utf-8")
    root = graded["root"]
    assert (
        cli.main(
            [
                "grade",
                *(str(root / f"{lms}_export.zip") for lms in ("canvas", "moodle", "gradescope")),
                "--out",
                str(out),
            ],
            suite=PROBE_SUITE,
        )
        == 0
    )
    assert f"{len(gradebook_rows(out))} submission(s) unchanged since the last run" in capsys.readouterr().err
    assert (out / "gradebook.csv").read_text(encoding="utf-8") == before


def test_the_instructor_pages_gradebook_reader_keeps_names_and_ids_as_text(graded):
    book = load_gradebook(graded["out"])
    table = book.table.set_index("id")
    assert book.problems == ()
    assert table.loc["student_103", "name"] == "李雷" and table.loc["student_103", "lms_id"] == "103"
    assert table.loc["student_103", "percent"] == pytest.approx(80.0)
