"""A PostgreSQL store's backup (``pg_dump``, custom format) and restore (``pg_restore`` into ``psql``).

The connection comes from the store's URL: its host, port, user and database as arguments, its
password as ``PGPASSWORD`` and its ``options`` (``-csearch_path=...``) as ``PGOPTIONS``; a store
kept in a schema of its own (``search_path``) is dumped alone. The restore drops the store's
tables and loads the backup in one transaction: it happens entirely, or not at all.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import sqlalchemy as sa

from . import revisions
from .errors import StoreError
from .schema import metadata

_TOOLS_FOLDERS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)  # Debian's, newest first
_SEARCH_PATH = re.compile(r"-c\s*search_path=([A-Za-z_][A-Za-z0-9_]*)")
# Tables of earlier revisions a restored backup may hold, besides those of the head.
_OLDER_TABLES = ("practice_runs", revisions.LEGACY_TABLE, "alembic_version")


def _tool(name: str) -> str:
    found = shutil.which(name) or next((str(f / name) for f in _TOOLS_FOLDERS if (f / name).is_file()), None)
    if found is None:
        raise StoreError(f"{name} was not found: install PostgreSQL's client programs (postgresql-client).")
    return found


def _connection(url: str) -> tuple[list[str], dict[str, str], str | None]:
    """Arguments, environment and schema (from search_path) for the client programs."""
    parsed = sa.make_url(url)
    arguments = [f"--host={parsed.host or 'localhost'}", f"--port={parsed.port or 5432}"]
    if parsed.username:
        arguments.append(f"--username={parsed.username}")
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
    if parsed.password:
        environment["PGPASSWORD"] = parsed.password
    options = parsed.query.get("options")
    options = " ".join(options) if isinstance(options, tuple) else options
    if options:
        environment["PGOPTIONS"] = options
    if isinstance(parsed.query.get("sslmode"), str):
        environment["PGSSLMODE"] = parsed.query["sslmode"]
    match = _SEARCH_PATH.search(options or "")
    return arguments, environment, match.group(1) if match else None


def _run(command: list[str], environment: dict[str, str], stdin: str | None = None) -> str:
    done = subprocess.run(command, env=environment, input=stdin, capture_output=True, text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise StoreError(f"{Path(command[0]).name} failed: {lines[-1] if lines else f'exit {done.returncode}'}")
    return done.stdout


def dump(url: str, target: Path) -> None:
    arguments, environment, schema = _connection(url)
    only = [f"--schema={schema}"] if schema else []
    database = sa.make_url(url).database or ""
    _run(
        [_tool("pg_dump"), "--format=custom", "--no-owner", "--no-privileges", *only, *arguments,
         f"--file={target}", f"--dbname={database}"],
        environment,
    )  # fmt: skip


def revision_of(source: Path) -> str | None:
    """The backup's revision, read from its ``alembic_version`` (or, before Alembic, ``schema_version``) rows."""
    listing = _run([_tool("pg_restore"), "--list", str(source)], {**os.environ, "PGOPTIONS": ""})
    for table, read in (("alembic_version", str), (revisions.LEGACY_TABLE, int)):
        if re.search(rf"TABLE DATA \S+ {table} ", listing) is None:
            continue
        data = _run([_tool("pg_restore"), "--data-only", f"--table={table}", "--file=-", str(source)], dict(os.environ))
        rows = re.search(r"^COPY .*? FROM stdin;\n(.*?)^\\\.$", data, flags=re.S | re.M)
        values = [line.split("\t")[0] for line in (rows.group(1).splitlines() if rows else []) if line]
        if not values:
            return None
        if read is int:
            return revisions.legacy_revision(max(int(value) for value in values))
        return values[0]
    if "TABLE DATA" not in listing and "TABLE " not in listing:
        return None
    raise StoreError(f"{source} holds no record of the store's schema revision: it is not a backup of the store.")


def restore(url: str, source: Path) -> None:
    arguments, environment, schema = _connection(url)
    only = [f"--schema={schema}"] if schema else []
    script = _run(
        [_tool("pg_restore"), "--no-owner", "--no-privileges", *only, "--file=-", str(source)], dict(os.environ)
    )
    tables = [*(table.name for table in reversed(metadata.sorted_tables)), *_OLDER_TABLES]
    drops = "".join(f"DROP TABLE IF EXISTS {name} CASCADE;\n" for name in tables)  # fixed names, no input
    database = sa.make_url(url).database or ""
    _run(
        [_tool("psql"), "--no-psqlrc", "--quiet", "--single-transaction", "--set=ON_ERROR_STOP=1", *arguments,
         f"--dbname={database}", "--file=-"],
        environment,
        stdin=drops + script,
    )  # fmt: skip
