"""``python -m grader new-exercise ID --title "..."``: write a small working exercise to edit.

New files: the stub with its spec and public tests (``exercises/``), the reference
(``poslab/encodings/ID.py``) and the hidden package (``grader/suite/ID/``: one property test with a
known mistake, its mutant, the clause table). Two tracked files gain a few lines: the catalogue
(``poslab/exercises.py``) and the spec and hints (``poslab/content/exercises.toml``). Then run
``python -m grader validate --exercise ID``. See docs/adding-an-exercise.md.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
from pathlib import Path

from grader.cli import exercise_templates as templates
from grader.cli.common import EXIT_OK, UsageError
from poslab.config import PROJECT_ROOT
from poslab.exercises import EXERCISES

ID_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,19}")  # at most 20 characters: the files stay in 120 columns
CATALOGUE_END = "\n)\n\nEXERCISE_IDS"  # the end of the EXERCISES tuple in poslab/exercises.py
LINE_LENGTH = 120  # ruff's, in pyproject.toml


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="ID", help="the exercise id, also the name the student defines (e.g. demo)")
    parser.add_argument("--title", required=True, help='its title on the Exercises page (e.g. "Demo")')


def _check(exercise_id: str, title: str, root: Path) -> None:
    if not ID_PATTERN.fullmatch(exercise_id) or keyword.iskeyword(exercise_id):
        raise UsageError(f"ID must be a lowercase Python name (letters, digits, _), got {exercise_id!r}")
    taken = {exercise.id for exercise in EXERCISES} | {name for exercise in EXERCISES for name in exercise.names}
    if exercise_id in taken:
        raise UsageError(f"{exercise_id!r} is already an exercise or a name one of them defines")
    if not title.strip() or any(bad in title for bad in ('"', "\\", "'''", "\n")):
        raise UsageError("--title must be one line without double quotes or backslashes")
    existing = [str(path.relative_to(root)) for path in _files(exercise_id, root) if path.exists()]
    if existing:
        raise UsageError(f"these files exist already: {', '.join(existing)}")


def _files(exercise_id: str, root: Path) -> dict[Path, str]:
    """Each new file and its template."""
    package = root / "grader" / "suite" / exercise_id
    return {
        root / "exercises" / f"{exercise_id}.py": templates.STUB,
        root / "exercises" / f"test_{exercise_id}.py": templates.PUBLIC_TESTS,
        root / "poslab" / "encodings" / f"{exercise_id}.py": templates.REFERENCE,
        package / "__init__.py": templates.PACKAGE,
        package / f"test_{exercise_id}.py": templates.HIDDEN_TESTS,
        package / "mutants.py": templates.MUTANTS,
        package / "clauses.md": templates.CLAUSES,
    }


def write_exercise(exercise_id: str, title: str, root: Path = PROJECT_ROOT) -> list[Path]:
    """Write the exercise's files and its two catalogue entries; returns every path written or changed."""
    _check(exercise_id, title, root)
    title = title.strip()
    spec = templates.SPEC.format(id=exercise_id, title=title)
    line = templates.CATALOGUE_LINE.format(id=exercise_id, title_literal=json.dumps(title))
    if len(line.rstrip("\n")) > LINE_LENGTH:
        raise UsageError(f"--title is too long for the catalogue's line ({LINE_LENGTH} characters)")
    catalogue = root / "poslab" / "exercises.py"
    text = catalogue.read_text(encoding="utf-8")
    if text.count(CATALOGUE_END) != 1:
        raise UsageError(f"cannot find the end of EXERCISES in {catalogue}")
    written = []
    for path, template in _files(exercise_id, root).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(id=exercise_id, title=title, spec=spec), encoding="utf-8")
        written.append(path)
    catalogue.write_text(text.replace(CATALOGUE_END, "\n" + line.rstrip("\n") + CATALOGUE_END), encoding="utf-8")
    content = root / "poslab" / "content" / "exercises.toml"
    entry = templates.TOML_ENTRY.format(id=exercise_id, spec=spec)
    content.write_text(content.read_text(encoding="utf-8").rstrip("\n") + "\n" + entry, encoding="utf-8")
    return [*written, catalogue, content]


def run(args: argparse.Namespace) -> int:
    paths = write_exercise(args.id, args.title)
    for path in paths:
        print(f"wrote {path.relative_to(PROJECT_ROOT)}")
    print(f"next: python -m grader validate --exercise {args.id}  (then edit the spec, reference and tests together)")
    print("and once its tests draw what they should: python -m grader.suite.draw_table  (the suite's drawn cases)")
    return EXIT_OK
