"""Write the Gradescope autograder zip (the command ``python -m grader gradescope OUT.zip`` is in ``grader/cli/``).

The zip holds, at its root, ``setup.sh`` (Gradescope runs it once, as root, when it builds the
image), ``run_autograder`` (run per submission), ``requirements.txt`` (the pinned lines of the
project's requirements that judging imports), ``grader-settings.env`` (the grader's settings at
build time, exported by ``run_autograder``), and the modules judging imports. Those are found by
import analysis: starting from ``grader.gradescope.run`` and every module of the hidden suite,
each ``import`` in the source (also inside functions) is followed through ``grader`` and
``poslab``. Data files come along when an included module names them (``exercises.toml``). The
mutants, the CLI, the app and the tests are not imported by judging, so they stay out.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import shlex
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from grader.settings import GraderSettings
from grader.suite_files import INSTRUCTOR_MODULES
from poslab.config import PROJECT_ROOT

LOCAL_PACKAGES = ("grader", "poslab")
RUNNER = "grader.gradescope.run"
# Packages whose modules are found at run time, not imported by name: the hidden suite
# (``grader.suite.collect``), the references (``poslab.encodings``, from the catalogue) and the
# worker's code, sent to it as source (``grader.sandboxed``).
GLOBBED_PACKAGES = ("grader.suite", "poslab.encodings", "grader.sandboxed")
TEMPLATES = Path(__file__).resolve().parent / "templates"
SETTINGS_FILE = "grader-settings.env"
EXECUTABLES = ("setup.sh", "run_autograder")
CPU_WHEELS = "https://download.pytorch.org/whl/cpu"
ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # fixed, so that the same tree gives the same zip


class PackageError(Exception):
    """The package cannot be built as asked (an import the requirements do not pin, ...)."""


@dataclass(frozen=True)
class JudgeParts:
    """What judging needs: project files (relative paths) and the third-party modules it imports."""

    files: tuple[str, ...]
    third_party: tuple[str, ...]


# ---------------------------------------------------------------- import analysis


def module_file(name: str, root: Path = PROJECT_ROOT) -> Path | None:
    base = root.joinpath(*name.split("."))
    for candidate in (base.parent / f"{base.name}.py", base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_names(name: str, path: Path) -> set[str]:
    """Every module name ``path`` may import, absolute; ``from x import y`` also yields ``x.y``
    (a submodule if there is one). Imports inside functions count: they run when judging does.
    Imports under ``if TYPE_CHECKING:`` do not: they never run."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in running_nodes(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                module = ".".join(parts + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names if alias.name != "*")
    return found


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def running_nodes(tree: ast.AST):
    """Every node of ``tree`` except the bodies of ``if TYPE_CHECKING:`` (their ``else`` runs)."""
    pending = [tree]
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, ast.If) and is_type_checking(node.test):
            pending += node.orelse
        else:
            pending += ast.iter_child_nodes(node)


def string_constants(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def package_modules(package: str, root: Path = PROJECT_ROOT) -> list[str]:
    folder = root.joinpath(*package.split("."))
    return sorted(
        ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        for path in folder.rglob("*.py")
        if "__pycache__" not in path.parts
    )


def judge_parts(root: Path = PROJECT_ROOT) -> JudgeParts:
    """The closure of the imports of the runner and of the globbed packages inside the project."""
    globbed = (name for package in GLOBBED_PACKAGES for name in package_modules(package, root))
    pending = [RUNNER, *(name for name in globbed if name.rpartition(".")[2] not in INSTRUCTOR_MODULES)]
    seen: dict[str, Path] = {}
    third_party: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        top = name.split(".")[0]
        if top not in LOCAL_PACKAGES:
            if top and top != "__future__" and top not in sys.stdlib_module_names:
                third_party.add(top)
            continue
        path = module_file(name, root)
        if path is None:
            continue  # ``from grader.x import function``: a name, not a module
        seen[name] = path
        parents = name.split(".")
        pending += [".".join(parents[:depth]) for depth in range(1, len(parents))]  # their __init__ runs
        pending += sorted(imported_names(name, path) - seen.keys())
    files = {path.relative_to(root).as_posix() for path in seen.values()}
    files |= data_files(root, seen.values())
    return JudgeParts(tuple(sorted(files)), tuple(sorted(third_party)))


def data_files(root: Path, modules) -> set[str]:
    """Non-Python files of the project that an included module names (by file name)."""
    named = set().union(*(string_constants(path) for path in modules))
    found = set()
    for package in LOCAL_PACKAGES:
        for path in (root / package).rglob("*"):
            if (
                path.is_file()
                and path.suffix not in (".py", ".pyc")
                and "__pycache__" not in path.parts
                and path.name in named
            ):
                found.add(path.relative_to(root).as_posix())
    return found


# ---------------------------------------------------------------- requirements


def normalized(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def pinned_requirements(third_party: tuple[str, ...], requirements: Path) -> dict[str, str]:
    """The requirements.txt line of each distribution that provides a module judging imports."""
    providers = importlib.metadata.packages_distributions()
    lines = {}
    for raw in requirements.read_text(encoding="utf-8").splitlines():
        line = raw.split("#")[0].strip()
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", line)
        if match and not line.startswith("-"):
            lines[normalized(match.group())] = line
    chosen = {}
    for module in third_party:
        distributions = [normalized(name) for name in providers.get(module, [module])]
        pinned = [name for name in distributions if name in lines]
        if not pinned:
            raise PackageError(
                f"judging imports {module!r}, which {requirements.name} does not pin; "
                f"add it there so that setup.sh installs it"
            )
        chosen[pinned[0]] = lines[pinned[0]]
    return dict(sorted(chosen.items()))


# ---------------------------------------------------------------- the zip


def settings_env(settings: GraderSettings) -> str:
    values = {
        "POSLAB_GRADER_TIMEOUT": f"{settings.timeout:g}",
        "POSLAB_GRADER_ISOLATION": settings.isolation,
        "POSLAB_GRADER_MEMORY_MB": str(settings.memory_bytes >> 20),
        "POSLAB_GRADER_UID_BASE": str(settings.uid_base),
    }
    lines = [
        "# The grader's settings when this package was built (python -m grader gradescope).",
        "# run_autograder exports them; edit here to change them without rebuilding.",
    ]
    return "\n".join(lines + [f"{name}={shlex.quote(value)}" for name, value in values.items()]) + "\n"


def setup_script(requirements: dict[str, str]) -> str:
    torch_line = requirements.get("torch")
    if torch_line is None:
        raise PackageError("judging does not import torch: setup.sh expects to install it")
    return (
        (TEMPLATES / "setup.sh")
        .read_text(encoding="utf-8")
        .replace("@TORCH_REQUIREMENT@", shlex.quote(torch_line))
        .replace("@CPU_WHEELS@", CPU_WHEELS)
    )


def _entry(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, ZIP_TIME)
    info.external_attr = (0o100000 | mode) << 16  # a regular file with these permissions
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def build_package(
    out: Path, settings: GraderSettings, root: Path = PROJECT_ROOT, extra: dict[str, str] | None = None
) -> list[str]:
    """Write the autograder zip to ``out``; return the names it holds. ``extra``: {name: text} more
    files at its root (the assignment to count, ``grader.gradescope.run.ASSIGNMENT_FILES``)."""
    parts = judge_parts(root)
    requirements = pinned_requirements(parts.third_party, root / "requirements.txt")
    generated = {
        "setup.sh": setup_script(requirements),
        "run_autograder": (TEMPLATES / "run_autograder").read_text(encoding="utf-8"),
        "requirements.txt": "# The pinned requirements judging imports (from the project's requirements.txt).\n"
        + "\n".join(requirements.values())
        + "\n",
        SETTINGS_FILE: settings_env(settings),
        **(extra or {}),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_name(f".{out.name}.tmp")
    with zipfile.ZipFile(temporary, "w") as archive:
        for name, text in generated.items():
            archive.writestr(_entry(name, 0o755 if name in EXECUTABLES else 0o644), text)
        for name in parts.files:
            archive.writestr(_entry(name, 0o644), (root / name).read_bytes())
    temporary.replace(out)
    return [*generated, *parts.files]
