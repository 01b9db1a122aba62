"""Grades back to the LMS: ``python -m grader export canvas|moodle`` and grader.lms.fill.

The LMS files are built as Canvas and Moodle write them (tests/lms_builders.py); the grades are a
gradebook.csv written here, so every expected cell follows from the numbers in this file.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from grader import cli
from grader.lms.fill import StudentGrade, fill_canvas, fill_moodle
from poslab.lms_csv import CsvFileError
from tests.lms_builders import CanvasStudent, MoodleParticipant, canvas_gradebook, moodle_worksheet

CLASS = [
    CanvasStudent("Lovelace, Ada", "101", sis_user_id="S101", sis_login_id="ada@example.edu"),
    CanvasStudent("Ångström, Zoë", "102", sis_user_id="S102", sis_login_id="zoe@example.edu"),
    CanvasStudent("李雷", "103", sis_user_id="S103", sis_login_id="lilei"),
    CanvasStudent("Turing, Alan", "104", sis_user_id="S104", sis_login_id="alan@example.edu"),
]
HEADER = "id,name,lms_id,late,status,attention,sinusoidal,learned,rope,alibi,t5,total,max\n"


def grades_folder(tmp_path: Path, rows: list[tuple[str, str, str, float]], maximum: float = 10) -> Path:
    """A grading folder: rows of (id, name, lms_id, total) out of ``maximum``."""
    folder = tmp_path / "grades"
    folder.mkdir(exist_ok=True)
    lines = [
        f"{sid},{name},{lms_id},false,graded,0,0,0,0,0,0,{total:g},{maximum:g}\n" for sid, name, lms_id, total in rows
    ]
    (folder / "gradebook.csv").write_text(HEADER + "".join(lines), encoding="utf-8")
    return folder


def table(data: bytes | str) -> list[list[str]]:
    text = data.decode("utf-8-sig") if isinstance(data, bytes) else data.removeprefix("\ufeff")
    return list(csv.reader(io.StringIO(text, newline="")))


def assignment_cells(data, column: str = "Position Lab (4242)") -> dict[str, str]:
    rows = table(data)
    index = rows[0].index(column)
    return {row[1]: row[index] for row in rows[1:] if row[1]}  # by Canvas ID


def export(*args: str) -> int:
    return cli.main(["export", *args])


# ---------------------------------------------------------------- Canvas


def test_canvas_column_filled_by_user_id_and_scaled_to_points_possible_everything_else_as_exported(tmp_path, capsys):
    source = tmp_path / "gb.csv"
    source.write_bytes(canvas_gradebook(CLASS))
    grades = grades_folder(
        tmp_path,
        [
            ("lovelaceada_101", "lovelaceada", "101", 8),
            ("angstromzoe_102", "ångströmzoë", "102", 10),
            ("student_103", "李雷", "103", 0),
        ],
    )
    out = tmp_path / "out" / "import.csv"
    assert (
        export(
            "canvas",
            "--grades",
            str(grades),
            "--gradebook",
            str(source),
            "--assignment",
            "Position Lab",
            "--out",
            str(out),
        )
        == 0
    )
    written = out.read_bytes()
    # 8/10, 10/10 and 0/10 scaled to the column's 100 points; Turing handed in nothing: left blank, not 0.
    assert assignment_cells(written) == {"101": "80.00", "102": "100.00", "103": "0.00", "104": "", "999": ""}
    expected = source.read_bytes().replace(
        b",S101,ada@example.edu,Section 1,,,", b",S101,ada@example.edu,Section 1,,80.00,"
    )
    expected = expected.replace(b",S102,zoe@example.edu,Section 1,,,", b",S102,zoe@example.edu,Section 1,,100.00,")
    expected = expected.replace(b",S103,lilei,Section 1,,,", b",S103,lilei,Section 1,,0.00,")
    assert written == expected  # BOM, CRLF, names, every other cell: byte for byte
    captured = capsys.readouterr()
    assert "The grader's maximum is 10 points and the column's Points Possible is 100" in captured.err
    assert "'Position Lab (4242)' filled for 3 student(s); 1 without a grade left as exported" in captured.out


def test_canvas_missing_zero_gives_0_to_students_without_a_grade_but_not_the_test_student():
    filled = fill_canvas(
        canvas_gradebook(CLASS, points="10.00"), [StudentGrade("101", "a", 7.5, 10)], "Position", missing_zero=True
    )
    assert assignment_cells(filled.text) == {"101": "7.50", "102": "0.00", "103": "0.00", "104": "0.00", "999": ""}
    # 10 points possible, grader's maximum 10: nothing scaled; the three without a grade named
    assert filled.warnings == (
        "In the gradebook with no submission graded (given 0): Zoë Ångström, 李雷, Alan Turing.",
    )


def test_canvas_matches_emails_sis_ids_and_refuses_an_ambiguous_key():
    students = CLASS + [CanvasStudent("Hopper, Grace", "105", sis_user_id="101", sis_login_id="grace@example.edu")]
    grades = [
        StudentGrade("ZOE@example.edu", "zoe", 5, 10),  # an email: SIS Login ID, any case
        StudentGrade("S104", "alan", 6, 10),  # a SIS User ID
        StudentGrade("101", "ada-or-grace", 7, 10),  # Ada's ID and Grace's SIS User ID
        StudentGrade("nobody@example.edu", "ghost", 9, 10),
        StudentGrade("", "plain-file", 3, 10),
    ]
    filled = fill_canvas(canvas_gradebook(students, points="10.00"), grades, "Position Lab")
    cells = assignment_cells(filled.text)
    assert (cells["102"], cells["104"], cells["101"], cells["105"]) == ("5.00", "6.00", "", "")
    assert filled.warnings == (
        "ada-or-grace (101) matches 2 students of the gradebook: none is filled in for it.",
        "ghost (nobody@example.edu) is in the grades but not in the gradebook.",
        "plain-file has no LMS id (graded from a file or folder, not an LMS download): not filled in.",
        "In the gradebook with no submission graded (left as exported): Ada Lovelace, 李雷, Grace Hopper.",
    )


def test_canvas_two_grades_for_one_student_leave_the_cell_as_exported():
    filled = fill_canvas(
        canvas_gradebook(CLASS, scores={"101": "55.00"}),
        [StudentGrade("101", "ada-1", 5, 10), StudentGrade("ada@example.edu", "ada-2", 6, 10)],
        "Position Lab",
    )
    assert assignment_cells(filled.text)["101"] == "55.00"
    assert (
        "ada-2 and ada-1 are the same student of the gradebook (ada@example.edu): left as exported." in filled.warnings
    )


def test_canvas_semicolons_decimal_commas_lf_and_no_bom_are_kept():
    source = canvas_gradebook(CLASS, points="20,00", bom=False, newline="\n", delimiter=";")
    filled = fill_canvas(source, [StudentGrade("102", "zoe", 7.5, 10)], "Position Lab")
    assert not filled.text.startswith("\ufeff") and "\r" not in filled.text
    zoe_line = next(line for line in filled.text.splitlines() if line.startswith("Ångström, Zoë;"))
    assert zoe_line.split(";")[6] == "15,00"  # 7.5 of 10 is 15 of 20, written as the file writes numbers
    assert filled.text.replace("15,00", "", 1) == source.decode("utf-8")


@pytest.mark.parametrize(
    "assignment, message",
    [
        ("Position", None),
        ("position lab", None),  # case does not matter
        (
            "Homework",
            "No assignment column of the Canvas gradebook starts with 'Homework'; its assignments are: "
            "'Position Lab (4242)', 'Quiz 1 (4243)'.",
        ),
        ("Student", "No assignment column"),  # not an assignment: no points possible
        ("Current Score", "No assignment column"),  # read only
    ],
)
def test_canvas_assignment_column_is_the_one_whose_header_starts_with_the_text(assignment, message):
    data = canvas_gradebook(CLASS)
    if message is None:
        assert fill_canvas(data, [], assignment).column == "Position Lab (4242)"
    else:
        with pytest.raises(CsvFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
            fill_canvas(data, [], assignment)


def test_canvas_several_matching_columns_is_an_error_and_nothing_is_written(tmp_path, capsys):
    source = tmp_path / "gb.csv"
    source.write_bytes(canvas_gradebook(CLASS).replace(b"Quiz 1 (4243)", b"Position Lab retake (4243)"))
    out = tmp_path / "import.csv"
    assert (
        export(
            "canvas",
            "--grades",
            str(grades_folder(tmp_path, [])),
            "--gradebook",
            str(source),
            "--assignment",
            "Position Lab",
            "--out",
            str(out),
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "2 assignment columns start with 'Position Lab'" in err and "Nothing was written" in err
    assert not out.exists()


BAD_CANVAS_FILES = {
    "empty": (b"", "is empty"),
    "latin-1": (
        "Student,ID,SIS Login ID,Section,Position Lab (1)\n    Points Possible,,,,10\n"
        '"Ångström, Zoë",102,zoe,A,\n'.encode("latin-1"),
        "is not UTF-8 text",
    ),
    "utf-16": ("Student,ID\n".encode("utf-16"), "is UTF-16 text"),
    "no ID column": (
        b"Student,Section,Position Lab (1)\n    Points Possible,,10\n",
        "is not a Canvas gradebook export",
    ),
    "no points possible row": (
        b"Student,ID,SIS Login ID,Section,Position Lab (1)\nAda,101,ada,A,\n",
        "has no '    Points Possible' row",
    ),
    "an unclosed quote": (
        b'Student,ID,SIS Login ID,Section,Position Lab (1)\n    Points Possible,,,,10\n"Lovelace, Ada,101,ada,A,\n',
        "a quoted cell opened on line 3 never closes",
    ),
    "text after a quote": (
        b'Student,ID,SIS Login ID,Section,Position Lab (1)\n    Points Possible,,,,10\n"Lovelace" Ada,101,ada,A,\n',
        "on line 3, text follows a quoted cell's closing quote",
    ),
}


@pytest.mark.parametrize("case", BAD_CANVAS_FILES)
def test_a_malformed_canvas_export_is_a_sentence_exit_2_and_nothing_written(tmp_path, capsys, case):
    data, message = BAD_CANVAS_FILES[case]
    source = tmp_path / "gb.csv"
    source.write_bytes(data)
    out = tmp_path / "out" / "import.csv"
    grades = grades_folder(tmp_path, [("a", "", "101", 1)])
    assert (
        export(
            "canvas",
            "--grades",
            str(grades),
            "--gradebook",
            str(source),
            "--assignment",
            "Position Lab",
            "--out",
            str(out),
        )
        == 2
    )
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_bad_grades_folders_and_overwriting_the_export_are_refused(tmp_path, capsys):
    source = tmp_path / "gb.csv"
    source.write_bytes(canvas_gradebook(CLASS))
    out = tmp_path / "import.csv"
    base = ["export", "canvas", "--gradebook", str(source), "--assignment", "Position Lab"]
    assert cli.main([*base, "--grades", str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    assert "has no gradebook.csv" in capsys.readouterr().err
    old = tmp_path / "old"
    old.mkdir()
    (old / "gradebook.csv").write_text("id,status,rope,total,max\nann,graded,1,1,4\n")  # before the LMS columns
    assert cli.main([*base, "--grades", str(old), "--out", str(out)]) == 2
    assert "lacks the column(s) lms_id" in capsys.readouterr().err
    grades = grades_folder(tmp_path, [("a", "", "101", 1)])
    before = source.read_bytes()
    assert cli.main([*base, "--grades", str(grades), "--out", str(source)]) == 2
    assert "--out is the exported file itself" in capsys.readouterr().err and source.read_bytes() == before
    assert (
        cli.main([*base[:3], str(tmp_path / "missing.csv"), *base[4:], "--grades", str(grades), "--out", str(out)]) == 2
    )
    assert "cannot be read" in capsys.readouterr().err and not out.exists()


# ---------------------------------------------------------------- Moodle


PEOPLE = [
    MoodleParticipant("Ada Lovelace", "5001", "ada@example.edu", {"rope.py": b""}),
    MoodleParticipant("Zoë Ångström", "5002", "zoe@example.edu", {"rope.py": b""}),
    MoodleParticipant("李雷", "5003", "li@example.edu"),
    MoodleParticipant("Alan Turing", "5004", "alan@example.edu", {"rope.py": b""}),
]


def grade_cells(data) -> dict[str, str]:
    rows = table(data)
    return {row[0]: row[rows[0].index("Grade")] for row in rows[1:]}


def test_moodle_grade_column_filled_by_participant_or_email_scaled_to_maximum_grade(tmp_path, capsys):
    source = tmp_path / "worksheet.csv"
    source.write_bytes(moodle_worksheet(PEOPLE, maximum="100.00", locked=("5004",)))
    grades = grades_folder(
        tmp_path,
        [
            ("ada-lovelace_5001", "Ada Lovelace", "5001", 6),
            ("zoe", "Zoë Ångström", "zoe@example.edu", 10),
            ("alan-turing_5004", "Alan Turing", "5004", 9),
        ],
    )
    out = tmp_path / "import.csv"
    assert export("moodle", "--grades", str(grades), "--gradebook", str(source), "--out", str(out)) == 0
    assert grade_cells(out.read_bytes()) == {
        "Participant 5001": "60.00",
        "Participant 5002": "100.00",
        "Participant 5003": "",
        "Participant 5004": "",
    }
    err = capsys.readouterr().err
    assert "Alan Turing: 'Grade can be changed' is No" in err and "scaled to 100" in err
    assert "alan-turing_5004" not in err  # a locked row is not "not in the gradebook"
    untouched = [line for line in source.read_text(encoding="utf-8").splitlines() if "5003" in line or "5004" in line]
    assert all(line in out.read_text(encoding="utf-8") for line in untouched)


def test_moodle_missing_zero_and_unscaled_maximum():
    filled = fill_moodle(moodle_worksheet(PEOPLE), [StudentGrade("5002", "zoe", 7, 10)], missing_zero=True)
    assert grade_cells(filled.text) == {
        "Participant 5001": "0.00",
        "Participant 5002": "7.00",
        "Participant 5003": "0.00",
        "Participant 5004": "0.00",
    }
    assert filled.written == (("zoe", "7.00"),)
    assert filled.warnings == (
        "In the gradebook with no submission graded (given 0): Ada Lovelace, 李雷, Alan Turing.",
    )


@pytest.mark.parametrize(
    "data, message",
    [
        (
            b'Identifier,Full name,Email address,Status,Grade,Scale\nParticipant 1,Ada,a@b.cd,x,,"A\nB"\n',
            "graded on a scale",
        ),
        (b"Identifier,Full name,Grade\nParticipant 1,Ada,\n", "lacks the column(s) Maximum Grade"),
        (
            b"First name,Last name,Email address\nAda,Lovelace,ada@example.edu\n",
            "lacks the column(s) Identifier, Grade, Maximum Grade",
        ),
        (b"\n\n", "is empty"),
    ],
)
def test_a_malformed_moodle_worksheet_says_what_is_wrong(data, message):
    with pytest.raises(CsvFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        fill_moodle(data, [])
