"""Spreadsheets from an LMS as they come, read so that they can be written back unchanged.

A Canvas gradebook export, a Moodle grading worksheet or participants list, or a plain roster:
UTF-8 with or without a byte-order mark, comma-, semicolon- or tab-separated (Canvas and Moodle
follow the user's locale), CRLF or LF line endings. ``read_csv`` keeps every cell's raw text
(quotes included) and every record's line ending, so ``CsvTable.render`` rewrites only the cells
it is asked to and leaves every other byte of the file as exported. Bad input raises
``CsvFileError`` with a sentence that says what is wrong and how to get a good file.

Shapes::

    CsvTable(bom, delimiter, records)      records[0] is the header
    CsvRecord(line, cells, raw, end)       cells: values; raw: the text between delimiters
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

MAX_CSV_BYTES = 20 * 1024 * 1024  # a class of thousands is a few MB
BYTE_ORDER_MARK = "\ufeff"
DELIMITERS = (",", ";", "\t")
UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")


class CsvFileError(ValueError):
    """The file cannot be read as the LMS spreadsheet expected; the message says why."""


@dataclass(frozen=True)
class CsvRecord:
    line: int  # the line of the file where the record starts (1-based)
    cells: tuple[str, ...]  # values, quotes removed
    raw: tuple[str, ...]  # each cell's text as written, quotes included
    end: str  # "\r\n", "\n", "\r" or "" (the last record of a file without a final newline)

    @property
    def blank(self) -> bool:
        return not any(cell.strip() for cell in self.cells)

    def cell(self, index: int | None) -> str:
        """The stripped value of column ``index`` ("" when the record is shorter or there is no column)."""
        return self.cells[index].strip() if index is not None and index < len(self.cells) else ""


@dataclass(frozen=True)
class CsvTable:
    bom: bool
    delimiter: str
    records: tuple[CsvRecord, ...]  # the header first

    @property
    def header(self) -> tuple[str, ...]:
        return tuple(cell.strip().removeprefix(BYTE_ORDER_MARK) for cell in self.records[0].cells)

    def column(self, *names: str) -> int | None:
        """The index of the first header cell equal to one of ``names`` (case and spaces ignored)."""
        wanted = {" ".join(name.split()).casefold() for name in names}
        return next(
            (index for index, cell in enumerate(self.header) if " ".join(cell.split()).casefold() in wanted), None
        )

    def render(self, changes: Mapping[tuple[int, int], str]) -> str:
        """The file's text with the cells ``{(record index, column): value}`` replaced, nothing else."""
        out = [BYTE_ORDER_MARK] if self.bom else []
        for index, record in enumerate(self.records):
            raw = list(record.raw)
            for (row, column), value in changes.items():
                if row != index:
                    continue
                raw += [""] * (column + 1 - len(raw))  # a short record gets its missing cells
                was_quoted = record.raw[column].startswith('"') if column < len(record.raw) else False
                raw[column] = quote(value, self.delimiter, was_quoted)
            out.append(self.delimiter.join(raw) + record.end)
        return "".join(out)


def quote(value: str, delimiter: str, always: bool = False) -> str:
    """A cell's text: quoted when it must be (or when its cell was quoted before)."""
    if always or any(char in value for char in (delimiter, '"', "\r", "\n")):
        return '"' + value.replace('"', '""') + '"'
    return value


def decode(data: bytes, what: str) -> tuple[str, bool]:
    """The text of ``data`` and whether it began with a byte-order mark; CsvFileError if unreadable."""
    if len(data) > MAX_CSV_BYTES:
        raise CsvFileError(
            f"{what} is {len(data) / 1e6:.0f} MB; an LMS spreadsheet of a class is far "
            f"smaller (at most {MAX_CSV_BYTES // (1024 * 1024)} MB are read)."
        )
    if data.startswith(UTF16_MARKS):
        raise CsvFileError(
            f"{what} is UTF-16 text (a spreadsheet's 'Unicode text'); export it again from the "
            "LMS, or save it as 'CSV UTF-8'."
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CsvFileError(
            f"{what} is not UTF-8 text (byte {error.start} cannot be read): export it again from "
            "the LMS, or save it from your spreadsheet program as 'CSV UTF-8'."
        ) from None
    if "\x00" in text:
        raise CsvFileError(f"{what} contains binary data: it is not a CSV file.")
    bom = text.startswith(BYTE_ORDER_MARK)
    text = text.removeprefix(BYTE_ORDER_MARK)
    if not text.strip():
        raise CsvFileError(f"{what} is empty: export it again from the LMS.")
    return text, bom


def sniff_delimiter(text: str) -> str:
    """The most frequent of comma, semicolon and tab on the first line outside quotes (comma on a tie)."""
    first = re.sub(r'"[^"]*"', "", text.split("\n", 1)[0])
    counts = {delimiter: first.count(delimiter) for delimiter in DELIMITERS}
    best = max(DELIMITERS, key=lambda delimiter: counts[delimiter])
    return best if counts[best] else ","


def read_csv(data: bytes, what: str) -> CsvTable:
    """Parse an LMS spreadsheet; ``what`` names it in messages ("The Canvas gradebook")."""
    text, bom = decode(data, what)
    delimiter = sniff_delimiter(text)
    return CsvTable(bom, delimiter, tuple(_records(text, delimiter, what)))


def _records(text: str, delimiter: str, what: str) -> list[CsvRecord]:
    unquoted = re.compile(f"[^{re.escape(delimiter)}\\r\\n]*")
    records: list[CsvRecord] = []
    cells: list[str] = []
    raws: list[str] = []
    position, size, line, record_start = 0, len(text), 1, 0
    while True:
        if position < size and text[position] == '"':
            end, value = _quoted_cell(text, position, delimiter, what, line + text.count("\n", record_start, position))
        else:
            end = unquoted.match(text, position).end()
            value = text[position:end]
        cells.append(value)
        raws.append(text[position:end])
        if end < size and text[end] == delimiter:
            position = end + 1
            continue
        newline = "\r\n" if text.startswith("\r\n", end) else text[end : end + 1]
        records.append(CsvRecord(line, tuple(cells), tuple(raws), newline))
        line += text.count("\n", record_start, end + len(newline)) + (newline == "\r")
        cells, raws = [], []
        position = record_start = end + len(newline)
        if position >= size:
            return records


def _quoted_cell(text: str, start: int, delimiter: str, what: str, line: int) -> tuple[int, str]:
    """(index just after the closing quote, the value) of the quoted cell opening at ``start``."""
    parts, position = [], start + 1
    while True:
        closing = text.find('"', position)
        if closing < 0:
            raise CsvFileError(
                f"{what} is not a well-formed CSV file: a quoted cell opened on line {line} never closes."
            )
        parts.append(text[position:closing])
        if text.startswith('""', closing):
            parts.append('"')
            position = closing + 2
            continue
        after = closing + 1
        if after < len(text) and text[after] not in (delimiter, "\r", "\n"):
            raise CsvFileError(
                f"{what} is not a well-formed CSV file: on line {line}, text follows a quoted cell's closing quote."
            )
        return after, "".join(parts)


def parse_number(text: str) -> float | None:
    """'10', '10.00' or '10,00' (a comma locale) as a number; None when the cell is not one."""
    cleaned = text.strip().replace("\u00a0", "").replace(" ", "")
    if cleaned.count(",") == 1 and "." not in cleaned:
        cleaned = cleaned.replace(",", ".")
    try:
        number = float(cleaned)
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None


def format_points(value: float, decimal_comma: bool = False) -> str:
    """Points with two decimals, as Canvas and Moodle write them ('7.50', or '7,50' in a comma locale)."""
    text = f"{round(value, 2) + 0.0:.2f}"
    return text.replace(".", ",") if decimal_comma else text
