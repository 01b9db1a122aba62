"""Material for the similarity tests, from the fairness corpus (tests/corpus/): each correct file's
share of one exercise as a student would hand it in (its imports, the exercise's names and the
helpers they use), and a disguised copy of such a share made here: every identifier renamed, its
comments replaced, its top-level helpers in another order."""

from __future__ import annotations

import ast
import builtins
import io
import tokenize
from pathlib import Path

from poslab.exercises import get_exercise

CORPUS = Path(__file__).parent / "corpus"
CORRECT_FOLDERS = (CORPUS / "correct", CORPUS / "batch3" / "correct", CORPUS / "batch4" / "correct")


def correct_files() -> list[Path]:
    return sorted(path for folder in CORRECT_FOLDERS for path in folder.glob("*.py"))


def _top_level_definitions(tree: ast.Module) -> dict[str, ast.stmt]:
    found: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            found[node.name] = node
        elif isinstance(node, ast.Assign):
            found.update({target.id: node for target in node.targets if isinstance(target, ast.Name)})
    return found


def exercise_share(source: str, exercise_id: str) -> str | None:
    """The file's imports and the exercise's names with every top-level helper they use, in file
    order; None when the file defines none of the exercise's names."""
    tree = ast.parse(source)
    definitions = _top_level_definitions(tree)
    wanted = [name for name in get_exercise(exercise_id).names if name in definitions]
    if not wanted:
        return None
    kept: dict[int, ast.stmt] = {}
    pending = list(wanted)
    while pending:
        node = definitions.get(pending.pop())
        if node is None or id(node) in kept:
            continue
        kept[id(node)] = node
        pending += [used.id for used in ast.walk(node) if isinstance(used, ast.Name)]
    imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    body = sorted(kept.values(), key=lambda node: node.lineno)
    head = "\n".join(ast.get_source_segment(source, node) for node in imports)
    return head + "\n\n\n" + "\n\n\n".join(ast.get_source_segment(source, node) for node in body) + "\n"


def _own_names(tree: ast.Module, keep: set[str]) -> list[str]:
    """Every name the code binds itself (top-level functions and classes, arguments, variables)."""
    imported = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    bound: dict[str, None] = {node.name: None for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)}
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            bound[node.arg] = None
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound[node.id] = None
    skip = keep | imported | set(dir(builtins)) | {"self", "cls"}
    return [name for name in bound if name not in skip]


def _renamed(source: str, renames: dict[str, str]) -> str:
    """``source`` with each name token of ``renames`` (but attributes) renamed and every comment replaced,
    its layout kept."""
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []  # (row, start, end, text)
    previous = None
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        row, column = token.start
        if token.type == tokenize.NAME and token.string in renames and previous != ".":
            edits.append((row, column, token.end[1], renames[token.string]))
        elif token.type == tokenize.COMMENT:
            edits.append((row, column, token.end[1], "# see the notes from the lab session"))
        previous = token.string
    for row, begin, end, text in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:begin] + text + line[end:]
    return "".join(lines)


def disguised_copy(share: str, exercise_id: str) -> str:
    """``share`` with every identifier it binds renamed (but the names the exercise asks for), its
    comments replaced by others, a comment above each top-level definition and those in reverse order."""
    tree = ast.parse(share)
    keep = set(get_exercise(exercise_id).names)
    renames = {name: f"my_{index}_{name[::-1]}" for index, name in enumerate(_own_names(tree, keep))}
    renamed = _renamed(share, renames)
    tree = ast.parse(renamed)
    imports = [
        ast.get_source_segment(renamed, node) for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    others = [node for node in tree.body if not isinstance(node, ast.Import | ast.ImportFrom)]
    lines = renamed.splitlines()
    blocks = ["\n".join(lines[_first_line(node) - 1 : node.end_lineno]) for node in others]
    blocks = [f"# part {index} of my solution\n{block}" for index, block in enumerate(reversed(blocks))]
    return "\n".join(imports) + "\n\n\n" + "\n\n\n".join(blocks) + "\n"


def _first_line(node: ast.stmt) -> int:
    """Where a statement starts, its decorators included."""
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(decorator.lineno for decorator in decorators)])
