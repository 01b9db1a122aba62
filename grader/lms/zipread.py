"""An LMS bulk download read in memory, entry by entry: nothing is extracted to disk.

Every entry's path is checked before anything of it is read: an absolute path or one with a
``..`` part is refused with a sentence that names it, and nothing of it is read. macOS's
``__MACOSX/`` folder and dot files (``.DS_Store``) are ignored. Names are decoded as the zip says;
a name stored as UTF-8 without the zip's UTF-8 flag (rubyzip, which Canvas uses, writes them so)
is decoded as UTF-8 rather than as CP437. A folder that wraps the whole download (a re-zipped
export, or Gradescope's ``assignment_<id>_export/``) is looked through.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

MAX_ENTRIES = 50_000  # a class of hundreds with dozens of files each; more is not a bulk download
UTF8_FLAG = 0x800
DRIVE = re.compile(r"^[A-Za-z]:")


class ExportError(ValueError):
    """The file cannot be read as an LMS bulk download; the message says why."""


class DamagedArchive(ExportError):
    """An entry's data is corrupt (bad checksum, cut short): the whole download is suspect."""


@dataclass(frozen=True)
class Entry:
    parts: tuple[str, ...]  # the path's parts below the download's root
    info: zipfile.ZipInfo

    @property
    def path(self) -> str:
        return "/".join(self.parts)

    @property
    def basename(self) -> str:
        return self.parts[-1]


def entry_name(info: zipfile.ZipInfo) -> str:
    """The entry's name; UTF-8 bytes stored without the UTF-8 flag are read as UTF-8."""
    if info.flag_bits & UTF8_FLAG:
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return info.filename


def refusal(name: str) -> str | None:
    """Why an entry's path is refused, in a sentence, or None when it is a plain relative path."""
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or DRIVE.match(name):
        why = "its path is absolute"
    elif ".." in parts:
        why = "its path goes up a folder (..)"
    elif "\x00" in name:
        why = "its name contains a NUL character"
    else:
        return None
    return f"The zip entry {name!r} was refused: {why}. Nothing of it was read."


def ignored(parts: tuple[str, ...]) -> bool:
    return any(part == "__MACOSX" or part.startswith(".") for part in parts)


def open_zip(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as error:
        raise ExportError(
            f"{path.name} is not a readable zip file ({error}): it is damaged, cut short, or not a zip; "
            "download it from the LMS again."
        ) from None


def list_entries(archive: zipfile.ZipFile) -> tuple[list[Entry], list[str]]:
    """The files of the download (checked, ignored ones left out) and the refusals, in sentences."""
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        raise ExportError(
            f"The zip has {len(infos):,} entries, more than the {MAX_ENTRIES:,} a class's "
            "bulk download could have: is it the right file?"
        )
    entries, refusals = [], []
    for info in infos:
        name = entry_name(info)
        problem = refusal(name)
        if problem:
            refusals.append(problem)
            continue
        parts = tuple(part for part in name.replace("\\", "/").split("/") if part not in ("", "."))
        if info.is_dir() or not parts or ignored(parts):
            continue
        entries.append(Entry(parts, info))
    return _below_common_root(entries), refusals


def _below_common_root(entries: list[Entry]) -> list[Entry]:
    """Strip one folder that holds every entry, if its name is not itself a submission's folder."""
    tops = {entry.parts[0] for entry in entries}
    if len(tops) != 1 or any(len(entry.parts) < 2 for entry in entries):
        return entries
    top = next(iter(tops))
    if "_assignsubmission_" in top or re.fullmatch(r"submission_\d+", top):
        return entries
    return [Entry(entry.parts[1:], entry.info) for entry in entries]


def read_entry(archive: zipfile.ZipFile, entry: Entry, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the entry (more than ``limit`` means it is too large).

    Raises ExportError with a sentence when the entry cannot be read (encrypted, corrupt).
    """
    try:
        with archive.open(entry.info) as stream:
            return stream.read(limit + 1)
    except RuntimeError:
        raise ExportError(f"{entry.basename} is encrypted in the zip and could not be read.") from None
    except NotImplementedError as error:
        raise ExportError(f"{entry.basename} could not be read from the zip ({error}).") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as error:
        raise DamagedArchive(f"{entry.path} could not be read from it ({error}).") from None
