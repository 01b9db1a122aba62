"""What a student hands in, and the rules it must meet before anything runs it.

One set of rules for every way in: the CLI and ``grader.api`` load files, folders and
``{name: source}`` maps with ``load_submission`` (problems are kept in ``Submission.problems``
and the submission is graded as not importable), and the app checks an upload or a paste with
``source_from_upload`` / ``source_from_paste`` before grading it (``SubmissionRejected`` says what
to fix). Both use the same size limit per file and the same sentences where they overlap.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from grader.settings import GraderSettings

MAX_FILE_BYTES = 200 * 1024  # a solution is one short file; anything bigger is a wrong file
FILENAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.py$")
BYTE_ORDER_MARK = "\ufeff"  # some Windows editors start a file with it; harmless, so dropped


class SubmissionRejected(ValueError):
    """What the student handed in cannot be graded as it is; the message says how to fix it."""


class SourceFiles(dict[str, str]):
    """File name -> source text, read-only: a submission's files as handed in, never changed after.

    A ``dict``, so JSON (the store, the sandbox's wire) and Dask take it as it is, with no copy.
    """

    def _read_only(self, *args: object, **kwargs: object) -> None:
        raise TypeError("a submission's files are read-only")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _read_only

    def __reduce__(self) -> tuple:
        return SourceFiles, (dict(self),)


@dataclass(frozen=True)
class Submission:
    """One submission, the one value that goes from the hand-in to the sandbox (frozen, files read-only)."""

    submission_id: str
    files: SourceFiles  # file name -> source text; any mapping given is taken as SourceFiles
    problems: tuple[str, ...] = ()  # why it cannot be imported at all (no .py file, too many, too large)
    # Files left out, each with why (not UTF-8, too large, not importable by name): only the
    # exercises they carry are lost; the other files are graded.
    unread: SourceFiles = field(default_factory=SourceFiles)

    def __post_init__(self) -> None:
        if not isinstance(self.files, SourceFiles):
            object.__setattr__(self, "files", SourceFiles(self.files))
        if not isinstance(self.unread, SourceFiles):
            object.__setattr__(self, "unread", SourceFiles(self.unread))
        object.__setattr__(self, "problems", tuple(self.problems))

    @property
    def content_hash(self) -> str:
        digest = hashlib.sha256()
        for name in sorted(self.files):
            digest.update(name.encode() + b"\0" + self.files[name].encode() + b"\0")
        for name in sorted(self.unread):  # none: the hash is as it always was
            digest.update(b"unread\0" + name.encode() + b"\0" + self.unread[name].encode() + b"\0")
        return digest.hexdigest()


# ---------------------------------------------------------------- the rules, one sentence each


def size_problem(what: str, size: int) -> str | None:
    if size <= MAX_FILE_BYTES:
        return None
    return f"{what} is {size / 1024:,.0f} KB; a solution file must be at most {MAX_FILE_BYTES // 1024} KB."


def _text_problem(what: str, text: str) -> str | None:
    if "\x00" in text:
        return f"{what} contains binary data (NUL bytes): hand in the .py source file itself."
    return None


def likely_encoding(data: bytes) -> str:
    """A guess at the encoding of bytes that are not UTF-8, for the message that says so."""
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    try:
        data.decode("cp1252")
    except UnicodeDecodeError:
        return "Latin-1 (ISO-8859-1)"  # bytes cp1252 leaves undefined: an older 8-bit encoding
    return "Windows-1252 (cp1252)"


def decode_source(what: str, data: bytes | str) -> str:
    """The source text of one file: UTF-8, no NUL bytes, without a byte-order mark.

    ``what`` names the file in the message (``"That file"`` when the name is the student's own
    text: messages are drawn as Markdown, so an uploaded name is never repeated).
    """
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise SubmissionRejected(
                f"{what} is not UTF-8 text (it looks like {likely_encoding(data)}), so it is not a Python "
                "source file we can read. "
                "Save it as UTF-8 (any code editor can) and hand it in again."
            ) from None
    problem = _text_problem(what, data)
    if problem:
        raise SubmissionRejected(problem)
    return data.removeprefix(BYTE_ORDER_MARK)


def _not_empty(source: str) -> str:
    if not source.strip():
        raise SubmissionRejected(
            "The submission is empty: write your code in the editor, or choose the .py file that has it."
        )
    return source


def _within_size(what: str, size: int, advice: str) -> None:
    problem = size_problem(what, size)
    if problem:
        raise SubmissionRejected(f"{problem} {advice}")


def source_from_upload(filename: str, data: bytes) -> str:
    """The text of an uploaded solution, or SubmissionRejected saying what is wrong with it."""
    if not filename.lower().endswith(".py"):
        # The name is not repeated: it is the student's text, and messages are drawn as Markdown.
        raise SubmissionRejected(
            "That is not a Python file (its name does not end in .py): upload the .py file you edited, "
            "for example rope.py."
        )
    _within_size("That file", len(data), "Upload only your exercise's .py file.")
    return _not_empty(decode_source("That file", data))


def source_from_paste(text: str | None) -> str:
    """Pasted code, with the same size rule as an upload (NUL characters are dropped, not refused)."""
    source = (text or "").replace("\x00", "")
    _within_size("The pasted code", len(source.encode("utf-8")), "Paste only your exercise's code.")
    return _not_empty(source.removeprefix(BYTE_ORDER_MARK))


# ---------------------------------------------------------------- loading a submission


def submission_id_for(path: str | Path) -> str:
    """A file's stem, a folder's name, or for a folder named ``exercises`` its parent's name."""
    path = Path(path).resolve()
    if path.is_dir():
        return path.parent.name if path.name == "exercises" else path.name
    return path.stem


def is_submitted_file(name: str) -> bool:
    return name.endswith(".py") and not name.startswith("test_") and name != "conftest.py"


def load_submission(
    source: str | Path | Mapping[str, str], submission_id: str | None = None, settings: GraderSettings | None = None
) -> Submission:
    """Read a file, a folder of .py files (test_*.py and conftest.py left out) or a name->source map."""
    settings = settings or GraderSettings.from_env()
    if isinstance(source, Mapping):
        raw = {str(name): text for name, text in source.items() if is_submitted_file(str(name))}
        return _checked(submission_id or "submission", raw, settings)
    path = Path(source)
    submission_id = submission_id or submission_id_for(path)
    if path.is_dir():
        paths = sorted(p for p in path.iterdir() if p.is_file() and is_submitted_file(p.name))
    elif path.is_file():
        paths = [path]
    else:
        raise FileNotFoundError(f"{path} is neither a file nor a folder")
    raw: dict[str, str | bytes] = {}
    for file in paths[: settings.max_files + 1]:
        data = file.read_bytes()
        raw[file.name] = data[: settings.max_submission_bytes + 1]
    return _checked(submission_id, raw, settings)


def _checked(submission_id: str, raw: Mapping[str, str | bytes], settings: GraderSettings) -> Submission:
    problems, files, unread = [], {}, {}
    for name, content in sorted(raw.items()):
        if not FILENAME.match(name):
            unread[name] = f"{name} is not a name Python can import (letters, digits and _ only, ending in .py)."
            continue
        size = len(content) if isinstance(content, bytes) else len(content.encode())
        try:
            text = decode_source(name, content)
        except SubmissionRejected as error:
            unread[name] = str(error)
            continue
        problem = size_problem(name, size)
        if problem:
            unread[name] = problem
        else:
            files[name] = text
    if not raw:
        problems.append("The submission has no .py file to grade.")
    if len(raw) > settings.max_files:
        problems.append(f"The submission has more than {settings.max_files} .py files.")
    if sum(len(text.encode()) for text in files.values()) > settings.max_submission_bytes:
        problems.append(f"The submission is larger than {settings.max_submission_bytes // 1024} KiB.")
    return Submission(submission_id, SourceFiles(files), tuple(problems), SourceFiles(unread))
