"""The hidden suite's drawn cases, fixed in ``drawn_cases.json`` beside this module.

Drawing every test's cases with Hypothesis takes about a second of CPU in each process that judges
(a judge of the app or of a cluster, ``python -m grader grade``, each Gradescope run). The draws are
the same in every process (``draw.py``), so they are drawn once, here, and written down; a process
reads them back in milliseconds. The table holds the suite's fingerprint (``suite_hash``: its sources,
the references and Hypothesis' version): a table written for another suite is not used, and every
draw is made by Hypothesis as before. ``tests/test_draw_table.py`` fails while the table is stale;

    python -m grader.suite.draw_table

writes it again. Cases are written as JSON (never pickle); only dataclasses and enums of ``grader``, and torch's
dtypes, are built back from it.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from grader.suite_files import suite_hash

TABLE_FILE = Path(__file__).with_name("drawn_cases.json")
BUILDABLE_MODULES = "grader."  # the only modules whose dataclasses and enums a table may name


class TableError(ValueError):
    """The table names something it may not, or is not JSON of the shape written here."""


def encode(value: Any) -> Any:
    """A case as JSON: tuples, lists and dicts tagged so that they come back as they were."""
    if value is None or isinstance(value, (bool, int, float, str)) and not isinstance(value, enum.Enum):
        return value
    if isinstance(value, enum.Enum):
        return {"enum": _class_name(type(value)), "value": encode(value.value)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {field.name: encode(getattr(value, field.name)) for field in dataclasses.fields(value)}
        return {"dataclass": _class_name(type(value)), "fields": fields}
    if isinstance(value, tuple):
        return {"tuple": [encode(item) for item in value]}
    if isinstance(value, list):
        return {"list": [encode(item) for item in value]}
    if isinstance(value, dict):
        return {"dict": [[encode(key), encode(item)] for key, item in value.items()]}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    raise TypeError(f"a drawn case holds a {type(value).__name__}, which the draw table cannot write")


def decode(data: Any) -> Any:
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise TableError(f"not a value the draw table writes: {data!r:.80}")
    if "tuple" in data:
        return tuple(decode(item) for item in data["tuple"])
    if "list" in data:
        return [decode(item) for item in data["list"]]
    if "dict" in data:
        return {decode(key): decode(item) for key, item in data["dict"]}
    if "dtype" in data:
        dtype = getattr(torch, str(data["dtype"]), None)
        if not isinstance(dtype, torch.dtype):
            raise TableError(f"not a torch dtype: {data['dtype']!r:.40}")
        return dtype
    if "enum" in data:
        return _class(data["enum"], enum.Enum)(decode(data["value"]))
    if "dataclass" in data:
        cls = _class(data["dataclass"], None)
        if not dataclasses.is_dataclass(cls):
            raise TableError(f"{data['dataclass']} is not a dataclass")
        return cls(**{name: decode(item) for name, item in data["fields"].items()})
    raise TableError(f"not a value the draw table writes: {data!r:.80}")


def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _class(name: str, base: type | None) -> type:
    module, _, qualname = name.partition(":")
    if not module.startswith(BUILDABLE_MODULES) or not qualname or "." in qualname:
        raise TableError(f"the draw table names {name!r}, outside {BUILDABLE_MODULES}")
    cls = getattr(importlib.import_module(module), qualname, None)
    if not isinstance(cls, type) or (base is not None and not issubclass(cls, base)):
        raise TableError(f"the draw table names {name!r}, which is not a case class")
    return cls


@functools.cache
def fixed_draws() -> dict[str, tuple]:
    """The written table's cases by draw key, if it was written for this suite; else nothing."""
    return read_table(TABLE_FILE, suite_hash())


def read_table(path: Path, wanted_hash: str) -> dict[str, tuple]:
    """The cases of the table at ``path`` if it was written for the suite ``wanted_hash``; else nothing
    (each draw is then made by Hypothesis; ``tests/test_draw_table.py`` reports the table)."""
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(table, dict) or table.get("suite_hash") != wanted_hash:
        return {}
    try:
        return {key: decode(cases) for key, cases in table["draws"].items()}
    except (TableError, TypeError, KeyError, AttributeError):
        return {}


def suite_draws() -> Iterator[tuple[str, Any, int]]:
    """(key, strategy, count) of every draw the hidden suite makes."""
    from grader.suite import collect

    for case in collect():
        yield from getattr(case.func, "draws", ())


def hypothesis_table() -> dict[str, tuple]:
    """Every draw of the suite made by Hypothesis now, ignoring the written table."""
    from grader.suite.draw import hypothesis_draw

    return {key: hypothesis_draw(key, strategy, count) for key, strategy, count in suite_draws()}


def write_table(path: Path = TABLE_FILE) -> int:
    draws = hypothesis_table()
    # One draw a line: a changed domain shows in a diff as the lines of its own draws.
    lines = [
        f"  {json.dumps(key)}: {json.dumps(encode(cases), separators=(',', ':'))}"
        for key, cases in sorted(draws.items())
    ]
    path.write_text(
        f'{{\n "suite_hash": "{suite_hash()}",\n "draws": {{\n' + ",\n".join(lines) + "\n }\n}\n", encoding="utf-8"
    )
    return len(draws)


if __name__ == "__main__":
    print(f"wrote {write_table()} draws to {TABLE_FILE}")
