"""``python -m grader similarity DIR --exercise rope --out report.html``, run in this process: one
line per flagged pair and no other line naming two students, exit codes, skipped folders, a file
that is not UTF-8, and a report that is self-contained and escapes the students' code."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from grader.cli import main
from tests.similarity_material import CORPUS, disguised_copy, exercise_share

HOSTILE = "</pre><script>alert(1)</script>"


def rope_of(name: str) -> str:
    return exercise_share((CORPUS / "correct" / f"{name}.py").read_text(encoding="utf-8"), "rope")


@pytest.fixture
def class_dir(tmp_path: Path) -> Path:
    """ann and bob (a disguised copy of ann's, with a hostile comment), cy on her own, dee without
    a rope.py, eve's file in Latin-1."""
    ann = rope_of("c06_pytorch_tutorial")
    files = {
        "ann": ann,
        "bob": disguised_copy(ann, "rope") + f"\n# {HOSTILE} see https://example.com/x\n",
        "cy": rope_of("c08_neox_rotary_mpt_alibi"),
    }
    for student, code in files.items():
        (tmp_path / student).mkdir()
        (tmp_path / student / "rope.py").write_text(code, encoding="utf-8")
    (tmp_path / "dee").mkdir()
    (tmp_path / "dee" / "notes.txt").write_text("no code\n", encoding="utf-8")
    (tmp_path / "eve").mkdir()
    (tmp_path / "eve" / "rope.py").write_bytes(
        "# café\n".encode("latin-1") + rope_of("c12_fairseq_embedding_subclass").encode()
    )
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, list[str], str]:
    try:
        code = main(["similarity", *argv])
    except SystemExit as stop:  # a usage error: argparse exits
        code = stop.code
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


STUDENTS = ("ann", "bob", "cy", "dee", "eve")


def named(line: str) -> set[str]:
    return set(STUDENTS) & set(re.findall(r"\w+", line))


def test_one_line_per_flagged_pair_and_no_other_line_names_two_students(capsys, class_dir, tmp_path):
    out = tmp_path / "report.html"
    code, lines, _ = run(capsys, str(class_dir), "--exercise", "rope", "--out", str(out))
    assert code == 0
    pair_lines = [line for line in lines if len(named(line)) == 2]
    assert len(pair_lines) == 1 and named(pair_lines[0]) == {"ann", "bob"} and "score 1.00" in pair_lines[0]
    assert all(len(named(line)) <= 1 for line in lines if line not in pair_lines)
    assert any(named(line) == {"dee"} and "skipped" in line for line in lines)
    assert any(named(line) == {"eve"} and "not UTF-8" in line for line in lines)
    assert any(line.startswith("4 students' rope.py compared; 1 pair flagged") for line in lines)


def test_no_flagged_pair_still_exits_0(capsys, class_dir):
    (class_dir / "bob" / "rope.py").unlink()
    code, lines, _ = run(capsys, str(class_dir), "--exercise", "rope")
    assert code == 0 and not [line for line in lines if len(named(line)) == 2]
    assert any("0 pairs flagged" in line for line in lines)


@pytest.mark.parametrize(
    "argv, says",
    [
        (["{missing}", "--exercise", "rope"], "is not a folder"),
        (["{dir}", "--exercise", "ropes"], "unknown exercise 'ropes'"),
        (["{dir}", "--exercise", "alibi"], "no student folder in"),
    ],
)
def test_bad_usage_exits_2_with_a_sentence(capsys, class_dir, tmp_path, argv, says):
    filled = [item.format(missing=tmp_path / "nowhere", dir=class_dir) for item in argv]
    code, _, err = run(capsys, *filled)
    assert code == 2 and says in err


class References(HTMLParser):
    """Every tag of the report, and every attribute that could load or link to something."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.links: list[tuple[str, str, str]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.links += [(tag, name, value or "") for name, value in attrs if name in ("src", "href", "srcset", "action")]

    def handle_data(self, data):
        self.text.append(data)


def test_the_report_is_self_contained_and_escapes_student_code(capsys, class_dir, tmp_path):
    out = tmp_path / "report.html"
    run(capsys, str(class_dir), "--exercise", "rope", "--out", str(out))
    report = out.read_text(encoding="utf-8")
    parsed = References()
    parsed.feed(report)
    assert "script" not in parsed.tags and "link" not in parsed.tags and "img" not in parsed.tags
    assert all(tag == "a" and value.startswith("#") for tag, _, value in parsed.links), parsed.links
    assert "http://" not in report and "https://" not in report and "@import" not in report and "url(" not in report
    assert HOSTILE not in report
    assert any(HOSTILE in text for text in parsed.text)  # shown as text, as the student wrote it
    assert parsed.tags.count("mark") >= 2 and parsed.tags.count("pre") == 2  # one pair, two sides
