"""Mutants of the reference, made by cosmic-ray's operators and written out as standalone sources.

cosmic-ray mutates files in place and runs a test command; here its operators are applied to the
text of ``grader.mutants.reference_source()`` (``cosmic_ray.mutating.mutate_code``), one occurrence
at a time, so that each mutant is a whole one-file submission the grader can grade like any other.

Which exercise a mutant belongs to follows the code: an exercise owns the top-level functions and
classes its names reach (``attention`` reaches ``require`` and ``_broadcasts_to``), so a mutant of a
shared helper belongs to every exercise that calls it. Three kinds of mutation are left out:
those inside annotations (the source has ``from __future__ import annotations``: they are never
evaluated), those in code that no exercise reaches, and those inside f-strings (the wording of an
error message; what a message must name is checked on the error the spec asks for). A mutant that
does not compile, or repeats another's source, is dropped too.
"""

from __future__ import annotations

import ast
import difflib
import warnings
from dataclasses import dataclass
from functools import cache

from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code
from cosmic_ray.plugins import get_operator, operator_names

from poslab.exercises import EXERCISES

# Every core operator but the two that need arguments and draw random numbers (VariableReplacer,
# VariableInserter: a mutant must be the same in every run).
EXCLUDED_OPERATORS = ("core/VariableReplacer", "core/VariableInserter")


def default_operators() -> tuple[str, ...]:
    return tuple(name for name in operator_names() if name.startswith("core/") and name not in EXCLUDED_OPERATORS)


@dataclass(frozen=True)
class GeneratedMutant:
    """One mutation of the reference: where it is, what it changed, and whose it is."""

    operator: str
    occurrence: int  # among this operator's positions in the reference, in cosmic-ray's order
    line: int  # 1-based line of the reference source
    function: str  # qualified name of the enclosing definition, e.g. LearnedPositionalEmbedding.forward
    original: str  # the changed line before ...
    mutated: str  # ... and after (stripped)
    exercises: tuple[str, ...]  # every exercise whose names reach the function
    source: str  # the whole mutated submission

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies the mutation across edits elsewhere in the reference."""
        return self.function, " ".join(self.original.split()), " ".join(self.mutated.split())

    @property
    def ident(self) -> str:
        """A file-name-safe id, unique in one run: line, occurrence and operator."""
        return f"m{self.line:04d}_{self.occurrence:03d}_{self.operator.split('/')[-1]}"

    def describe(self) -> str:
        return f"{self.function} (line {self.line}): {self.original}  ->  {self.mutated}  [{self.operator}]"


@dataclass(frozen=True)
class Definition:
    name: str  # qualified
    top: str  # the top-level definition it belongs to
    first: int
    last: int


def _definitions(tree: ast.Module) -> list[Definition]:
    found = []

    def visit(node: ast.AST, prefix: str, top: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                found.append(Definition(name, top or child.name, first, child.end_lineno))
                visit(child, name + ".", top or child.name)

    visit(tree, "", None)
    return found


def _reach(tree: ast.Module) -> dict[str, set[str]]:
    """Top-level name -> the exercises whose names reach it through references."""
    top_level = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    uses = {
        name: {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in top_level} - {name}
        for name, node in top_level.items()
    }
    reached: dict[str, set[str]] = {name: set() for name in top_level}
    for exercise in EXERCISES:
        todo = [name for name in exercise.names if name in top_level]
        seen: set[str] = set()
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo += sorted(uses[name])
        for name in seen:
            reached[name].add(exercise.id)
    return reached


def _unseen_spans(tree: ast.Module) -> set[tuple[int, int, int, int]]:
    """(line, col, end line, end col) of every annotation (code that never runs) and f-string (the
    text of an error message, whose wording no spec fixes)."""
    spans = set()
    for node in ast.walk(tree):
        parts = [node] if isinstance(node, ast.JoinedStr) else []
        if isinstance(node, ast.arg) and node.annotation is not None:
            parts.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            parts.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            parts.append(node.annotation)
        spans.update((p.lineno, p.col_offset, p.end_lineno, p.end_col_offset) for p in parts)
    return spans


def _inside(position: tuple[int, int], span: tuple[int, int, int, int]) -> bool:
    line, col = position
    return (span[0], span[1]) <= (line, col) < (span[2], span[3])


def _changed_lines(original: str, mutated: str) -> tuple[int, str, str]:
    """First changed line (1-based) and the changed text before and after, each stripped."""
    before, after = original.splitlines(), mutated.splitlines()
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag != "equal":
            old = " ".join(line.strip() for line in before[a0:a1])
            new = " ".join(line.strip() for line in after[b0:b1])
            return a0 + 1, old, new
    return 0, "", ""


def _positions(tree, operator) -> list[tuple[int, int]]:
    """Start position of each occurrence, in the order cosmic-ray counts occurrences."""
    return [start for node in ast_nodes(tree) for start, _ in operator.mutation_positions(node)]


def generate(
    source: str, operators: tuple[str, ...] | None = None, exercises: tuple[str, ...] | None = None
) -> tuple[GeneratedMutant, ...]:
    """Every mutant of ``source`` that some exercise can see (one of ``exercises``, when given), in
    source order. Naming the exercises saves the others' mutating: all of them take half a minute."""
    return _generate(source, tuple(operators or default_operators()), tuple(exercises or ()))


@cache
def _generate(source: str, operators: tuple[str, ...], exercises: tuple[str, ...]) -> tuple[GeneratedMutant, ...]:
    tree = ast.parse(source)
    definitions = _definitions(tree)
    reach = _reach(tree)
    unseen = _unseen_spans(tree)
    lines = source.splitlines(keepends=True)
    mutants = []
    wanted = set(exercises) if exercises else {exercise.id for exercise in EXERCISES}
    # Each top-level definition is mutated on its own text (parsing the whole file per mutant
    # cost a minute), then put back in place.
    for top in (d for d in definitions if d.name == d.top and reach.get(d.top, set()) & wanted):
        exercises = tuple(e.id for e in EXERCISES if e.id in reach[top.top])
        head, snippet = "".join(lines[: top.first - 1]), "".join(lines[top.first - 1 : top.last])
        tail = "".join(lines[top.last :])
        parsed = get_ast(snippet)
        for name in operators:
            operator = get_operator(name)()
            for occurrence, (line, col) in enumerate(_positions(parsed, operator)):
                start = (line + top.first - 1, col)
                if any(_inside(start, span) for span in unseen):
                    continue
                mutated = mutate_code(snippet, operator, occurrence)
                if mutated is None or mutated == snippet:
                    continue
                owner = [d for d in definitions if d.first <= start[0] <= d.last][-1]
                mutants.append(_mutant(name, occurrence, owner.name, exercises, source, head + mutated + tail))
    unique = {m.source: m for m in mutants if m is not None}
    return tuple(sorted(unique.values(), key=lambda m: (m.line, m.operator, m.occurrence)))


def _mutant(
    operator: str, occurrence: int, function: str, exercises: tuple[str, ...], source: str, mutated: str
) -> GeneratedMutant | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)  # `x is 0` and the like: still a mutant
            compile(mutated, "<mutant>", "exec")
    except SyntaxError:
        return None
    line, old, new = _changed_lines(source, mutated)
    return GeneratedMutant(operator, occurrence, line, function, old, new, exercises, mutated)
