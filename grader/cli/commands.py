"""The table of commands, the parser built from it, and ``main``.

A command is a module with ``add_arguments(parser)`` and ``run(args) -> int``; adding one to
``python -m grader`` is one line in ``COMMANDS``. Only the module of the command asked for is
imported (a command's module may import torch: ``--help`` and the other commands need not wait).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

from grader.cli.common import EXIT_FAULT, EXIT_INTERRUPTED, UsageError
from grader.faults import GraderFault


@dataclass(frozen=True)
class Command:
    name: str  # the word after ``python -m grader``
    module: str  # dotted name of the module with add_arguments(parser) and run(args)
    help: str  # one line in ``python -m grader --help``

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


COMMANDS: tuple[Command, ...] = (
    Command("grade", "grader.cli.grade", "grade submissions with the hidden suite"),
    Command("regrade", "grader.cli.regrade", "grade the app's stored submissions again with today's hidden suite"),
    Command("validate", "grader.cli.validate", "check the reference scores full marks and every mutant loses points"),
    Command("release", "grader.cli.release", "write a student bundle (no hidden tests, no mutants)"),
    Command(
        "gradescope",
        "grader.cli.gradescope",
        "write a Gradescope autograder zip (setup.sh, run_autograder, hidden suite)",
    ),
    Command("export", "grader.lms.cli", "fill a Canvas or Moodle grade file with the totals"),
    Command("new-exercise", "grader.cli.new_exercise", "write a small working exercise to edit"),
    Command("similarity", "grader.cli.similarity", "pairs of students whose code is unusually similar, side by side"),
    Command("mutation", "grader.mutation", "score the hidden suite on mutants of the reference (cosmic-ray)"),
    Command("backup", "grader.cli.backup", "write a backup of the app's progress database (0600)"),
    Command("restore", "grader.cli.restore", "replace the app's progress database by a backup (stop the app first)"),
)


def build_parser(commands: Sequence[Command] = COMMANDS, chosen: str | None = None) -> argparse.ArgumentParser:
    """Every command, with the options of ``chosen`` (of all of them when None)."""
    parser = argparse.ArgumentParser(prog="python -m grader", description="Position Lab's autograder.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for command in commands:
        subparser = subparsers.add_parser(command.name, help=command.help)
        if chosen is None or command.name == chosen:
            module = command.load()
            module.add_arguments(subparser)
            subparser.set_defaults(command_run=module.run)
    return parser


def chosen_command(argv: Sequence[str]) -> str:
    """The command word of ``argv`` (the top level has no option but --help), or "" when none."""
    return next((word for word in argv if not word.startswith("-")), "")


def main(argv: Sequence[str] | None = None, *, suite: str | None = None) -> int:
    """Run one command; ``suite`` ("module:attribute") stands in for the hidden suite (tests)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(chosen=chosen_command(argv))
    args = parser.parse_args(argv)
    args.stand_in_suite = suite  # a name no command's option uses
    try:
        return args.command_run(args)
    except UsageError as error:
        parser.error(str(error))  # exits 2 after printing the usage
    except GraderFault as fault:
        print(f"grader fault: {fault}", file=sys.stderr)
        return EXIT_FAULT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
