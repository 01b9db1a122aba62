"""``python -m grader restore FILE``: replace the app's store by a backup that ``backup`` wrote.

Stop the app first (README): a running app keeps its connections and its own idea of the store.
A backup from a newer Position Lab (a schema revision unknown here) is refused; an older one is
upgraded when the app next starts.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.cli.common import EXIT_OK, UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a backup written by `python -m grader backup`")


def run(args: argparse.Namespace) -> int:
    from poslab.config import Settings
    from poslab.store import StoreError
    from poslab.store.backup import describe, restore

    url = Settings.from_env().db_url
    try:
        revision, saved = restore(url, Path(args.file))
    except StoreError as error:
        raise UsageError(str(error)) from error
    print(f"restored the progress database {describe(url)} from {args.file} (schema revision {revision})")
    if saved is not None:
        print(f"the database it replaced was saved to {saved}")
    return EXIT_OK
