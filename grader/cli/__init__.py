"""The instructor's command line: ``python -m grader grade | validate | release | gradescope``.

Exit codes: 0 when the command did its job (whatever the scores), 2 for bad usage, 3 when the
grader itself failed (no worker could start, a worker broke), 1 when ``validate`` finds the suite
too weak (the reference not at full marks, or a mutant not losing points).

One module per command. A command module has ``add_arguments(parser)`` and ``run(args) -> int``
(an exit code); it reports bad usage by raising ``UsageError``. It is added to the command line
by one line in ``COMMANDS`` (``grader/cli/commands.py``). ``main(argv, suite=...)`` lets tests
grade with a stand-in suite ("module:attribute") instead of the hidden one.
"""

from grader.cli.commands import COMMANDS, Command, build_parser, main
from grader.cli.common import (
    EXIT_FAULT,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_WEAK_SUITE,
    ProgressBar,
    UsageError,
    atomic_write,
    format_table,
)

__all__ = [
    "COMMANDS",
    "Command",
    "build_parser",
    "main",
    "EXIT_FAULT",
    "EXIT_OK",
    "EXIT_USAGE",
    "EXIT_WEAK_SUITE",
    "ProgressBar",
    "UsageError",
    "atomic_write",
    "format_table",
    "grade_in_parallel",
    "grade_with_service",
]


def __getattr__(name: str):
    """``grade_in_parallel`` and ``grade_with_service`` import the judge (torch): only when asked for."""
    if name in ("grade_in_parallel", "grade_with_service"):
        from grader.cli import grading

        return getattr(grading, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
