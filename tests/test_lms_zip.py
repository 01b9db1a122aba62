"""grader.lms.exports: LMS bulk downloads (Canvas, Moodle, Gradescope) read as they come, in memory.

Each zip is built as its LMS names it (tests/lms_builders.py): the expected students, ids, late
flags and files come from how the zip was built, never from the reader.
"""

from __future__ import annotations

import zipfile

import pytest

from grader.lms.exports import read_export, slug
from grader.lms.zipread import ExportError
from grader.settings import GraderSettings
from tests.lms_builders import (
    CanvasStudent,
    GradescopeSubmission,
    MoodleParticipant,
    canvas_zip,
    gradescope_zip,
    moodle_zip,
    write_zip,
)

ROPE = b"def apply_rope(x):\n    return x\n"
ALIBI = b"def alibi_slopes(n):\n    return n\n"


def by_id(export):
    return {item.submission_id: item for item in export.submissions}


# ---------------------------------------------------------------- Canvas


def test_canvas_one_submission_per_student_with_late_work_two_files_and_a_resubmission(tmp_path):
    students = [
        CanvasStudent("Lovelace, Ada", "101", {"rope.py": ROPE, "alibi.py": ALIBI}),  # two files
        CanvasStudent("Ångström, Zoë", "102", {"rope.py": ROPE}, late=True),
        CanvasStudent("Turing, Alan", "103", {"rope-1.py": ROPE}),  # a resubmission of rope.py
        CanvasStudent("李雷", "104", {"rope.py": ROPE}),
    ]
    export = read_export(canvas_zip(tmp_path / "submissions.zip", students))
    assert export.lms == "canvas" and export.warnings == ()
    found = by_id(export)
    assert set(found) == {"lovelaceada_101", "angstromzoe_102", "turingalan_103", "student_104"}
    ada = found["lovelaceada_101"]
    assert (ada.name, ada.lms_id, ada.late) == ("lovelaceada", "101", False)
    assert dict(ada.files) == {"rope.py": ROPE.decode(), "alibi.py": ALIBI.decode()} and ada.problems == ()
    zoe = found["angstromzoe_102"]
    assert (zoe.name, zoe.late) == ("ångströmzoë", True)  # Canvas keeps letters in any script
    assert list(found["turingalan_103"].files) == ["rope.py"]  # rope-1.py is rope.py handed in again
    assert found["student_104"].name == "李雷" and list(found["student_104"].files) == ["rope.py"]


def test_canvas_names_written_without_the_zip_utf8_flag_are_read_as_utf8(tmp_path):
    students = [
        CanvasStudent("Ångström, Zoë", "102", {"rope.py": ROPE}),
        CanvasStudent("李雷", "104", {"rope.py": ROPE}),
    ]
    export = read_export(canvas_zip(tmp_path / "submissions.zip", students, utf8_flag=False))
    assert sorted(item.name for item in export.submissions) == ["ångströmzoë", "李雷"]


def test_canvas_a_name_uploaded_twice_keeps_the_later_upload_and_says_so(tmp_path):
    path = write_zip(
        tmp_path / "submissions.zip",
        [("lovelaceada_101_9002_rope.py", b"NEW = 1\n"), ("lovelaceada_101_9001_rope-1.py", b"OLD = 1\n")],
    )
    export = read_export(path)
    assert dict(export.submissions[0].files) == {"rope.py": "NEW = 1\n"}
    assert len(export.warnings) == 1 and "lovelaceada_101_9002_rope.py is graded" in export.warnings[0]


def test_canvas_text_entries_anonymous_ids_and_no_py_file(tmp_path):
    path = write_zip(
        tmp_path / "submissions.zip",
        [
            ("hopper_LATE_105_text.html", b"<p>my answer</p>"),
            ("anon_Xy12Q_9003_rope.py", ROPE),
            ("curie_106_9004_report.pdf", b"%PDF-1.7"),
            ("curie_106_9005_notes.txt", b"notes"),
        ],
    )
    found = by_id(read_export(path))
    assert found["hopper_105"].late and found["hopper_105"].problems == (
        "The submission has no .py file to grade (it holds text.html).",
    )
    anonymous = found["student_anon-xy12q"]
    assert (anonymous.name, anonymous.lms_id, list(anonymous.files)) == ("", "anon_Xy12Q", ["rope.py"])
    assert found["curie_106"].problems == ("The submission has no .py file to grade (it holds notes.txt, report.pdf).",)


def test_stray_files_are_named_and_left_out(tmp_path):
    path = write_zip(tmp_path / "submissions.zip", [("lovelaceada_101_9001_rope.py", ROPE), ("readme.txt", b"x")])
    export = read_export(path)
    assert [item.submission_id for item in export.submissions] == ["lovelaceada_101"]
    assert export.warnings == ("readme.txt does not follow Canvas's naming (name_userid_fileid_file): left out.",)


# ---------------------------------------------------------------- unsafe and unusual entries


@pytest.mark.parametrize(
    "entry, why",
    [
        ("../lovelaceada_101_9009_rope.py", "goes up a folder (..)"),
        ("lovelaceada_101_9009_x/../../rope.py", "goes up a folder (..)"),
        ("/tmp/lovelaceada_101_9009_rope.py", "is absolute"),
        ("..\\..\\lovelaceada_101_9009_rope.py", "goes up a folder (..)"),
        ("C:/Users/lovelaceada_101_9009_rope.py", "is absolute"),
    ],
)
def test_an_entry_that_climbs_out_or_is_absolute_is_refused_by_name(tmp_path, entry, why):
    path = write_zip(tmp_path / "submissions.zip", [("turing_103_9001_rope.py", ROPE), (entry, b"STOLEN = 1\n")])
    with zipfile.ZipFile(path) as archive:
        assert entry in archive.namelist()  # the zip really holds the hostile name
    export = read_export(path)
    assert export.warnings == (f"The zip entry {entry!r} was refused: its path {why}. Nothing of it was read.",)
    assert [item.submission_id for item in export.submissions] == ["turing_103"]
    assert all("STOLEN" not in source for item in export.submissions for source in item.files.values())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["submissions.zip"]  # nothing was extracted


def test_macosx_folders_and_dot_files_are_ignored(tmp_path):
    path = write_zip(
        tmp_path / "submissions.zip",
        [
            ("lovelaceada_101_9001_rope.py", ROPE),
            ("__MACOSX/._lovelaceada_101_9001_rope.py", b"\x00\x05\x16\x07 resource fork"),
            ("__MACOSX/lovelaceada_101_9002_evil.py", b"EVIL = 1\n"),
            (".DS_Store", b"\x00\x00\x00\x01Bud1"),
        ],
    )
    export = read_export(path)
    assert export.warnings == () and [list(item.files) for item in export.submissions] == [["rope.py"]]


def test_files_that_cannot_be_graded_are_left_out_each_with_a_sentence(tmp_path):
    big = b"# padding\n" * 30_000  # 300 KB
    path = write_zip(
        tmp_path / "submissions.zip",
        [
            ("lovelaceada_101_9001_rope.py", "# Zoë\n".encode("latin-1")),
            ("lovelaceada_101_9002_alibi.py", big),
            ("lovelaceada_101_9003_attention.py", ROPE),
        ],
    )
    ada = read_export(path).submissions[0]
    assert list(ada.files) == ["attention.py"]
    assert ada.problems == ()  # nothing stops the rest of the submission from being graded
    assert ada.submission.unread == {
        "alibi.py": "alibi.py is 293 KB; a solution file must be at most 200 KB.",
        "rope.py": "rope.py is not UTF-8 text (it looks like Windows-1252 (cp1252)), so it is not a Python "
        "source file we can read. Save it as UTF-8 (any code editor can) and hand it in again.",
    }


def test_more_files_than_a_submission_may_have_is_a_problem(tmp_path):
    settings = GraderSettings(max_files=3)
    path = write_zip(
        tmp_path / "submissions.zip", [(f"lovelaceada_101_{9000 + n}_part{n}.py", b"x = 1\n") for n in range(6)]
    )
    ada = read_export(path, settings).submissions[0]
    assert "The submission has more than 3 .py files." in ada.problems


def test_a_zip_that_is_no_lms_download_or_no_zip_at_all_is_an_error(tmp_path):
    plain = write_zip(tmp_path / "mine.zip", [("rope.py", ROPE)])
    with pytest.raises(ExportError, match="not a Canvas, Moodle or Gradescope bulk download"):
        read_export(plain)
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ExportError, match="not a readable zip file"):
        read_export(broken)


def test_ids_are_ascii_folder_names():
    assert slug("Zoë Ångström") == "zoe-angstrom" and slug("李雷") == "" and slug("../..") == ""
    assert slug("a" * 100) == "a" * 40


# ---------------------------------------------------------------- Moodle


@pytest.mark.parametrize("layout", ["folders", "folders_", "flat"])
def test_moodle_a_folder_per_participant_in_each_layout(tmp_path, layout):
    people = [
        MoodleParticipant("Ada Lovelace", "5001", "ada@example.edu", {"rope.py": ROPE, "alibi.py": ALIBI}),
        MoodleParticipant("Zoë Ångström", "5002", "zoe@example.edu", {"rope.py": ROPE}),
        MoodleParticipant("李雷", "5003", "li@example.edu", {"rope.py": ROPE}),
    ]
    export = read_export(moodle_zip(tmp_path / "download.zip", people, layout))
    assert export.lms == "moodle" and export.warnings == ()
    found = by_id(export)
    assert set(found) == {"ada-lovelace_5001", "zoe-angstrom_5002", "student_5003"}
    assert (found["zoe-angstrom_5002"].name, found["zoe-angstrom_5002"].lms_id) == ("Zoë Ångström", "5002")
    assert sorted(found["ada-lovelace_5001"].files) == ["alibi.py", "rope.py"]
    assert not any(item.late for item in export.submissions)  # Moodle's download does not say


def test_moodle_subfolders_online_text_and_blind_marking(tmp_path):
    path = write_zip(
        tmp_path / "download.zip",
        [
            ("Ada Lovelace_5001_assignsubmission_file/exercises/rope.py", ROPE),
            ("Ada Lovelace_5001_assignsubmission_onlinetext/onlinetext.html", b"<p>see my files</p>"),
            ("Participant_5009_assignsubmission_file/rope.py", ROPE),
            ("__MACOSX/Ada Lovelace_5001_assignsubmission_file/._rope.py", b"junk"),
        ],
    )
    found = by_id(read_export(path))
    assert list(found["ada-lovelace_5001"].files) == ["rope.py"] and found["ada-lovelace_5001"].problems == ()
    assert found["participant_5009"].lms_id == "5009"


# ---------------------------------------------------------------- Gradescope


def test_gradescope_folders_keyed_by_the_metadata_with_a_group_and_an_sid_only_student(tmp_path):
    submissions = [
        GradescopeSubmission("409194023", [("Ada Lovelace", "123456789", "Ada@Example.edu")], {"rope.py": ROPE}),
        GradescopeSubmission(
            "409194024",
            [("Zoë Ångström", "2", "zoe@example.edu"), ("李雷", "3", "li@example.edu")],
            {"exercises/rope.py": ROPE, "exercises/alibi.py": ALIBI},
        ),
        GradescopeSubmission("409194025", [("Alan Turing", "S-4", "")], {"rope.py": ROPE}),
        GradescopeSubmission("409194026", [("Grace Hopper", "5", "grace@example.edu")], {}),  # nothing handed in
    ]
    export = read_export(
        gradescope_zip(tmp_path / "export.zip", submissions, extra=[("assignment_8046601_export/.DS_Store", b"x")])
    )
    assert export.lms == "gradescope" and export.warnings == ()
    found = by_id(export)
    assert set(found) == {
        "ada-lovelace_ada-example-edu",
        "zoe-angstrom_zoe-example-edu",
        "student_li-example-edu",
        "alan-turing_s-4",
        "grace-hopper_grace-example-edu",
    }
    assert found["ada-lovelace_ada-example-edu"].lms_id == "ada@example.edu"  # the key: the email, lower case
    assert found["alan-turing_s-4"].lms_id == "S-4"  # no email: the SID
    for member in ("zoe-angstrom_zoe-example-edu", "student_li-example-edu"):  # the group's files, for each
        assert sorted(found[member].files) == ["alibi.py", "rope.py"]
    assert found["grace-hopper_grace-example-edu"].problems == ("The submission has no .py file to grade.",)


def test_gradescope_a_folder_missing_from_the_metadata_is_graded_under_its_folder_name(tmp_path):
    path = gradescope_zip(
        tmp_path / "export.zip",
        [GradescopeSubmission("1", [("Ada", "1", "ada@example.edu")], {"rope.py": ROPE})],
        extra=[("assignment_8046601_export/submission_2/rope.py", ROPE)],
    )
    export = read_export(path)
    assert "submission_2/ has no submitter" in export.warnings[0]
    assert by_id(export)["student_submission-2"].lms_id == ""


def test_gradescope_unreadable_metadata_is_an_error(tmp_path):
    path = write_zip(
        tmp_path / "export.zip",
        [("submission_metadata.yml", b"submission_1: [unclosed"), ("submission_1/rope.py", ROPE)],
    )
    with pytest.raises(ExportError, match="not readable YAML"):
        read_export(path)
    python_object = b"submission_1: !!python/object/apply:os.system ['echo owned']\n"
    path = write_zip(tmp_path / "hostile.zip", [("submission_metadata.yml", python_object)])
    with pytest.raises(ExportError, match="not readable YAML"):  # safe_load constructs no Python objects
        read_export(path)
