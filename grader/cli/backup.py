"""``python -m grader backup FILE``: a copy of the app's store (``POSLAB_DB_URL``, else the SQLite
file in ``POSLAB_DATA_DIR``), taken while the app runs: SQLite's online backup, or ``pg_dump``."""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.cli.common import EXIT_OK, UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the backup to write (0600; replaced if it exists)")


def run(args: argparse.Namespace) -> int:
    from poslab.config import Settings
    from poslab.store import StoreError
    from poslab.store.backup import backup, describe

    url = Settings.from_env().db_url
    try:
        backup(url, Path(args.file))
    except StoreError as error:
        raise UsageError(str(error)) from error
    print(f"backed up the progress database {describe(url)} to {args.file}")
    return EXIT_OK
