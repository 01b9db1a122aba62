"""``python -m grader release DIR``: the student bundle (``grader/release.py`` says what goes in)."""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.cli.common import EXIT_OK, UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="an empty or new folder")


def run(args: argparse.Namespace) -> int:
    from grader.release import ReleaseError, build_bundle

    try:
        copied = build_bundle(Path(args.dir))
    except ReleaseError as error:
        raise UsageError(str(error)) from error
    print(f"wrote a student bundle of {len(copied)} files to {args.dir}")
    return EXIT_OK
