"""One bad file costs only its own exercise; a bad archive is refused by name, with a non-zero exit.

Reading only (no grading here): which files are left out and why, the Canvas late mark in any case,
truncated and corrupt zips. The grading of a submission with a left-out file is in
tests/test_assignments_acceptance.py.
"""

from __future__ import annotations

import zipfile

import pytest

from grader import cli
from grader.lms.exports import read_export
from grader.lms.zipread import ExportError
from grader.submissions import load_submission
from tests.lms_builders import CanvasStudent, canvas_zip, write_zip

ROPE = b"def apply_rope(x):\n    return x\n"
CP1252 = "# Größe – “quoted”\ndef alibi_slopes(n):\n    return n\n".encode("cp1252")


@pytest.mark.parametrize("mark", ["LATE", "late", "Late"])
def test_the_canvas_late_mark_in_any_case_is_late_and_leaves_the_id_whole(tmp_path, mark):
    path = write_zip(tmp_path / "s.zip", [(f"lovelaceada_{mark}_101_9001_rope.py", ROPE)])
    (ada,) = read_export(path).submissions
    assert (ada.name, ada.lms_id, ada.late, ada.submission_id) == ("lovelaceada", "101", True, "lovelaceada_101")


def test_a_student_named_late_is_not_late(tmp_path):
    (late,) = read_export(write_zip(tmp_path / "s.zip", [("late_101_9001_rope.py", ROPE)])).submissions
    assert (late.name, late.lms_id, late.late) == ("late", "101", False)


def test_a_cp1252_file_is_left_out_by_name_and_encoding_and_its_neighbour_is_kept(tmp_path):
    path = canvas_zip(
        tmp_path / "s.zip", [CanvasStudent("Lovelace, Ada", "101", {"rope.py": ROPE, "alibi.py": CP1252})]
    )
    (ada,) = read_export(path).submissions
    assert dict(ada.files) == {"rope.py": ROPE.decode()}
    assert ada.problems == ()
    assert list(ada.submission.unread) == ["alibi.py"]
    assert ada.submission.unread["alibi.py"].startswith(
        "alibi.py is not UTF-8 text (it looks like Windows-1252 (cp1252))"
    )


def test_a_utf16_file_with_its_bom_is_named_as_utf16_and_a_utf8_bom_file_is_read(tmp_path):
    (tmp_path / "rope.py").write_bytes("def apply_rope(x):\n    return x\n".encode("utf-16"))
    (tmp_path / "alibi.py").write_bytes(b"\xef\xbb\xbf" + ROPE)  # UTF-8 with a BOM is UTF-8
    submission = load_submission(tmp_path)
    assert "it looks like UTF-16" in submission.unread["rope.py"]
    assert submission.files["alibi.py"] == ROPE.decode()


def test_the_hash_changes_when_a_left_out_file_is_fixed(tmp_path):
    (tmp_path / "rope.py").write_bytes(ROPE)
    (tmp_path / "alibi.py").write_bytes(CP1252)
    before = load_submission(tmp_path).content_hash
    (tmp_path / "alibi.py").write_bytes(CP1252.decode("cp1252").encode("utf-8"))
    assert load_submission(tmp_path).content_hash != before


def test_a_zip_with_a_corrupt_entry_is_refused_whole_by_name(tmp_path):
    path = write_zip(tmp_path / "canvas.zip", [("lovelaceada_101_9001_rope.py", ROPE * 50)])
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.infolist()[0]
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + 5] ^= 0xFF  # the compressed data, not the directory: the zip still opens
    path.write_bytes(bytes(data))
    with pytest.raises(ExportError, match=r"^canvas\.zip is damaged: lovelaceada_101_9001_rope\.py could not be read"):
        read_export(path)


@pytest.mark.parametrize(
    ("name", "content", "sentence"),
    [
        ("truncated.zip", None, "truncated.zip is not a readable zip archive: it is damaged or cut short"),
        ("notes.pdf", b"%PDF-1.7", "notes.pdf is neither a .py file, a folder of them, nor an LMS bulk download"),
    ],
)
def test_grade_refuses_a_truncated_zip_or_a_stray_file_by_name_and_exits_2(tmp_path, capsys, name, content, sentence):
    whole = canvas_zip(tmp_path / "whole.zip", [CanvasStudent("Lovelace, Ada", "101", {"rope.py": ROPE})])
    path = tmp_path / name
    path.write_bytes(content if content is not None else whole.read_bytes()[:-30])  # the directory cut off
    with pytest.raises(SystemExit) as stopped:
        cli.main(["grade", str(path), "--out", str(tmp_path / "out")])
    assert stopped.value.code == 2
    assert sentence in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_grade_by_assignment_without_the_assignments_file_says_what_to_set(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("POSLAB_ASSIGNMENTS", raising=False)
    (tmp_path / "rope.py").write_bytes(ROPE)
    with pytest.raises(SystemExit) as stopped:
        cli.main(["grade", str(tmp_path / "rope.py"), "--assignment", "hw1", "--out", str(tmp_path / "out")])
    assert stopped.value.code == 2
    assert "--assignment hw1 needs the assignments file: set POSLAB_ASSIGNMENTS" in capsys.readouterr().err
