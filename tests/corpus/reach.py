"""Which exercises a change to a correct file can reach, read from the two files' syntax trees.

A corpus bug is a correct file with one mistake. An exercise whose functions and classes, and all they
name (followed through the file's top-level definitions and variables), include nothing the mistake
changed runs the base file's code unchanged; the base gets full marks on it (``test_corpus.py``), so
only the reached exercises need grading to show that the mistake costs points nowhere else.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from poslab.exercises import Exercise

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# Names that reach code by a computed name or text: with any of them in the file, everything may be reached.
DYNAMIC = {"globals", "vars", "locals", "eval", "exec", "__import__", "importlib", "modules", "getattr", "__dict__"}


def names_in(node: ast.AST) -> set[str]:
    """Every identifier, attribute and string constant in ``node``: all it could name."""
    found = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            found.add(child.id)
        elif isinstance(child, ast.Attribute):
            found.add(child.attr)
        elif isinstance(child, ast.Constant) and isinstance(child.value, str):
            found.add(child.value)
        elif isinstance(child, ast.alias):
            found.add((child.asname or child.name).split(".")[0])
    return found


def bound_names(statement: ast.stmt) -> set[str]:
    """The top-level names ``statement`` binds."""
    if isinstance(statement, DEFINITIONS):
        return {statement.name}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    return {node.id for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


def changed_statements(base: list[ast.stmt], changed: list[ast.stmt]) -> list[int] | None:
    """Indexes of the top-level statements that differ; None when the statements do not pair up."""
    if len(base) != len(changed):
        return None
    differ = [index for index, (old, new) in enumerate(zip(base, changed)) if ast.dump(old) != ast.dump(new)]
    if any(bound_names(base[index]) != bound_names(changed[index]) for index in differ):
        return None
    return differ


def reached(body: list[ast.stmt], start: Iterable[str]) -> set[int]:
    """Indexes of the top-level statements that the names in ``start`` lead to, followed transitively."""
    binders: dict[str, list[int]] = {}
    for index, statement in enumerate(body):
        for name in bound_names(statement):
            binders.setdefault(name, []).append(index)
    seen: set[int] = set()
    frontier = [index for name in start for index in binders.get(name, [])]
    while frontier:
        index = frontier.pop()
        if index in seen:
            continue
        seen.add(index)
        frontier += [other for name in names_in(body[index]) for other in binders.get(name, [])]
    return seen


def exercises_reached(base: str, changed: str, exercises: Iterable[Exercise]) -> list[str] | None:
    """The exercises whose code the change reaches; None when that cannot be told (every exercise may be)."""
    old, new = ast.parse(base).body, ast.parse(changed).body
    differ = changed_statements(old, new)
    if differ is None or any(names_in(body_node) & DYNAMIC for body_node in (*old, *new)):
        return None
    # Run at import, a changed statement that is not a definition, or a decorated one, reaches every exercise.
    for index in differ:
        for statement in (old[index], new[index]):
            if not isinstance(statement, DEFINITIONS) or statement.decorator_list:
                return None
    # The file's variables the changed code names: one exercise's calls may leave them changed for another's.
    named = {name for index in differ for statement in (old[index], new[index]) for name in names_in(statement)}
    touched = set(differ) | {
        index
        for index, statement in enumerate(old)
        if not isinstance(statement, (*DEFINITIONS, ast.Import, ast.ImportFrom)) and bound_names(statement) & named
    }
    return [
        exercise.id for exercise in exercises if touched & (reached(old, exercise.names) | reached(new, exercise.names))
    ]
