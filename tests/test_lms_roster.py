"""poslab.roster: a class roster read as it comes (plain CSV, Canvas gradebook, Moodle participants),
and poslab.lms_csv, the reader that keeps every byte it is not asked to change."""

from __future__ import annotations

import pytest

from poslab.lms_csv import CsvFileError, format_points, parse_number, read_csv
from poslab.lms_sheets import canvas_display_name, student_key
from poslab.roster import RosterStudent, read_roster
from tests.lms_builders import CanvasStudent, canvas_gradebook

MOODLE_PARTICIPANTS = (
    "First name,Last name,ID number,Email address,Roles,Groups,Last access to course\n"
    "Ada,Lovelace,S101,Ada.Lovelace@Example.edu,Student,Group A,Now\n"
    "Zoë,Ångström,,zoe@example.edu,Student,Group B,Never\n"
    "Tim,Teacher,,tim@example.edu,Teacher,,Now\n"
    "雷,李,S103,li@example.edu,Student,Group A,Now\n"
)


def test_the_key_is_the_email_in_lower_case_else_the_lms_id():
    assert student_key(" Ada@Example.EDU ", "101") == "ada@example.edu"
    assert student_key("", "101") == "101" and student_key("not an email", "101") == "101"
    assert student_key("", "") == ""


def test_a_plain_roster_with_optional_id_and_section():
    data = (
        "name,email,id,section\nAda Lovelace,ADA@example.edu,101,A\nZoë Ångström,zoe@example.edu,,B\n李雷,,103,A\n"
    ).encode()
    roster = read_roster(data)
    assert roster.format == "plain" and roster.problems == ()
    assert roster.students == (
        RosterStudent("Ada Lovelace", "ada@example.edu", "101", "A", "ada@example.edu"),
        RosterStudent("Zoë Ångström", "zoe@example.edu", "", "B", "zoe@example.edu"),
        RosterStudent("李雷", "", "103", "A", "103"),
    )


def test_a_plain_roster_with_only_name_and_email_and_a_byte_order_mark_and_crlf():
    roster = read_roster("\ufeffName,Email\r\nAda Lovelace,ada@example.edu\r\n".encode("utf-8"))
    assert [student.key for student in roster.students] == ["ada@example.edu"] and roster.problems == ()


def test_a_canvas_gradebook_export_as_a_roster_skips_points_possible_and_the_test_student():
    students = [
        CanvasStudent("Lovelace, Ada", "101", sis_user_id="S101", sis_login_id="ada@example.edu", section="Section 2"),
        CanvasStudent("李雷", "103", sis_user_id="S103", sis_login_id="lilei"),
    ]
    roster = read_roster(canvas_gradebook(students))
    assert roster.format == "canvas" and roster.problems == ()
    assert roster.students == (
        RosterStudent("Ada Lovelace", "ada@example.edu", "101", "Section 2", "ada@example.edu"),
        RosterStudent("李雷", "", "103", "Section 1", "103"),
    )  # its login is not an email: keyed by Canvas ID


def test_a_moodle_participants_export_leaves_teachers_out():
    roster = read_roster(MOODLE_PARTICIPANTS.encode("utf-8"))
    assert roster.format == "moodle"
    assert [(student.name, student.key, student.lms_id, student.section) for student in roster.students] == [
        ("Ada Lovelace", "ada.lovelace@example.edu", "S101", "Group A"),
        ("Zoë Ångström", "zoe@example.edu", "", "Group B"),
        ("雷 李", "li@example.edu", "S103", "Group A"),
    ]
    assert roster.problems == ("1 participant(s) whose Roles name no student role were left out.",)


def test_duplicates_missing_keys_and_bad_emails_are_sentences():
    data = (
        b"name,email,id\n"
        b"Ada,ada@example.edu,\n"
        b"Ada again,ADA@example.edu,\n"
        b"Nobody,,\n"
        b"Typo,ada(at)example.edu,\n"
        b"Typo with id,bob(at)example.edu,202\n"
    )
    roster = read_roster(data)
    assert [student.key for student in roster.students] == ["ada@example.edu", "202"]
    assert roster.problems == (
        "Line 3: ada@example.edu appears again (first on line 2); the second is left out.",
        "Line 4 (Nobody) has neither an email address nor an id; left out.",
        "Line 5 (Typo): 'ada(at)example.edu' is not an email address and there is no id; left out.",
        "Line 6 (Typo with id): 'bob(at)example.edu' is not an email address; the student is keyed by the id 202.",
    )


@pytest.mark.parametrize(
    "data, message",
    [
        (
            b"student,mail\nAda,ada@example.edu\n",
            "is not in a format this app reads (its first row has student, mail). "
            "It accepts a plain CSV with the columns name,email",
        ),
        (b"", "The roster is empty"),
        ("name,email\nZoë,zoe@example.edu\n".encode("cp1252"), "The roster is not UTF-8 text"),
        (b'name,email\n"Ada,ada@example.edu\n', "a quoted cell opened on line 2 never closes"),
    ],
)
def test_an_unreadable_or_unknown_roster_is_one_sentence_naming_what_is_accepted(data, message):
    roster = read_roster(data)
    assert roster.format is None and roster.students == ()
    assert len(roster.problems) == 1 and message in roster.problems[0]
    if "format" in message:
        assert "Canvas gradebook export" in roster.problems[0] and "Moodle participants export" in roster.problems[0]


def test_canvas_names_become_first_last():
    assert canvas_display_name("Lovelace, Ada") == "Ada Lovelace"
    assert canvas_display_name("李雷") == "李雷"
    assert canvas_display_name('="=Equals, Eve"') == "Eve =Equals"  # Canvas's formula guard removed


# ---------------------------------------------------------------- the CSV reader


def test_render_changes_only_the_cells_asked_for():
    text = '\ufeffa;"b;c";d\r\n1;"multi\nline";3\r\n4;5\r\n"7";8;9'
    table = read_csv(text.encode("utf-8"), "The file")
    assert table.delimiter == ";" and table.bom
    assert [record.cells for record in table.records] == [
        ("a", "b;c", "d"),
        ("1", "multi\nline", "3"),
        ("4", "5"),
        ("7", "8", "9"),
    ]
    assert [record.line for record in table.records] == [1, 2, 4, 5]
    assert table.render({}) == text
    changed = table.render({(2, 2): "x;y", (3, 0): "70", (1, 0): '1"'})
    assert changed == ('\ufeffa;"b;c";d\r\n"1""";"multi\nline";3\r\n4;5;"x;y"\r\n"70";8;9')


def test_numbers_in_either_locale():
    assert parse_number("10.00") == 10 and parse_number("10,5") == 10.5 and parse_number(" 7 ") == 7
    assert parse_number("(read only)") is None and parse_number("") is None and parse_number("nan") is None
    assert format_points(7.5) == "7.50" and format_points(7.5, decimal_comma=True) == "7,50"
    assert format_points(-0.0) == "0.00" and format_points(1 / 3 * 10) == "3.33"


def test_binary_data_is_refused():
    with pytest.raises(CsvFileError, match="binary data"):
        read_csv(b"a,b\n\x00\x01,2\n", "The file")
