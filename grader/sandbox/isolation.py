"""Isolation: the bubblewrap command line the worker runs in, and whether bubblewrap works here.

With bubblewrap the worker sees a read-only ``/usr``, the Python installation only (never the
project: a bind that would hold it is refused), ``/etc/ld.so.cache``, ``/proc`` and ``/dev`` of its
own and a private ``/tmp``; installed copies of ``poslab``/``grader`` inside the bound folders are
covered by an empty tmpfs. It has no network, its own PID, IPC and UTS namespaces, a clean
environment, and dies with the judge. When bubblewrap is missing or cannot start a sandbox here,
``choose_isolation`` falls back to a plain subprocess (see ``grader.sandbox``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import threading
from functools import cache
from pathlib import Path

from grader.settings import GraderSettings
from grader.vocabulary import Isolation, IsolationSetting
from poslab.config import PROJECT_ROOT

BLOCKED_MODULES = ("poslab", "grader")  # the project's packages: never visible to a submission


@cache
def torch_file() -> str:
    """torch's ``__init__.py``, found without importing torch (``python -m grader --help`` stays quick)."""
    return importlib.util.find_spec("torch").origin


def python_binds() -> list[str]:
    """The folders the worker needs for Python and torch, never the project itself."""
    candidates = {
        sys.base_prefix,
        sys.prefix,
        sys.exec_prefix,
        os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))),
        os.path.dirname(os.path.dirname(torch_file())),
    }
    paths = sorted({os.path.realpath(path) for path in candidates} | set(candidates))
    paths = [path for path in paths if os.path.isdir(path)]
    # Keep the outermost folders only; refuse one that holds the project (it would expose it).
    outer = [path for path in paths if not any(path != other and path.startswith(other + os.sep) for other in paths)]
    return [path for path in outer if not str(PROJECT_ROOT).startswith(path + os.sep)]


def masked_paths(binds: list[str]) -> list[str]:
    """Installed copies of the project's packages inside the bound folders: hidden by an empty tmpfs."""
    masks = []
    for name in BLOCKED_MODULES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec else []:
            real = os.path.realpath(location)
            if any(real.startswith(bind + os.sep) for bind in binds):
                masks.append(real)
    return masks


HUGE_PAGE_SETTINGS = (
    "/sys/kernel/mm/transparent_hugepage/enabled",
    "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size",
)


# glibc's malloc keeps freed memory for the next allocation instead of handing it back to the kernel:
# below MMAP_THRESHOLD an allocation comes from the heap, and up to TRIM_THRESHOLD of free heap stays
# mapped. A grading allocates and frees tensors of the same sizes again and again, and each page handed
# back was a page fault and a zeroed page when next used: a fifth of the page faults of ``grade``
# (judges and children), 2 % of its CPU. The sandbox worker gets them as tunables (children inherit
# its heap), a judge through ``mallopt`` (``grader.service.judge.keep_freed_memory``).
MALLOC_MMAP_THRESHOLD = 32 << 20  # glibc's largest; above it, a tensor still gets pages of its own
MALLOC_TRIM_THRESHOLD = 128 << 20
MALLOC_TUNABLES = (
    f"glibc.malloc.mmap_threshold={MALLOC_MMAP_THRESHOLD}:glibc.malloc.trim_threshold={MALLOC_TRIM_THRESHOLD}"
)


def worker_environment(home: str) -> dict[str, str]:
    """The sandbox worker's whole environment (under bubblewrap and in the fallback), which its children inherit."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": home,
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        # glibc's malloc puts its heap on transparent huge pages (where the kernel allows them on
        # request), so the worker's page tables shrink: it forks a child per submission, and the
        # copy and teardown of those tables were a third of a child's fixed cost.
        "GLIBC_TUNABLES": f"glibc.malloc.hugetlb=1:{MALLOC_TUNABLES}",
    }


def bwrap_command(settings: GraderSettings, program: list[str]) -> list[str]:
    bwrap = shutil.which(Isolation.BWRAP)  # the isolation is named after its program
    if bwrap is None:
        raise FileNotFoundError("bwrap is not installed")
    command = [bwrap, "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            command += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            command += ["--ro-bind", top, top]
    if os.path.exists("/etc/ld.so.cache"):
        command += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    # /tmp before the Python binds: a venv may live in a project checked out under /tmp.
    command += ["--proc", "/proc", "--dev", "/dev", "--size", str(settings.tmp_bytes), "--tmpfs", "/tmp"]
    binds = python_binds()
    made: set[str] = {"/tmp"}
    for path in binds:
        # bwrap would copy the host's modes for the folders above (/root is 0700): make them 0755
        # so that the child's uid can reach the Python installation.
        for parent in reversed(Path(path).parents[:-1]):
            if str(parent) not in made:
                command += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))
        command += ["--ro-bind", path, path]
    for path in masked_paths(binds):
        command += ["--tmpfs", path]
    for path in HUGE_PAGE_SETTINGS:  # glibc reads them to decide (worker_environment)
        if os.path.exists(path):
            command += ["--ro-bind", path, path]
    command += [
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "sandbox",
        "--die-with-parent",
        "--new-session",
        "--chdir",
        "/tmp",
        "--clearenv",
    ]
    for name, value in worker_environment("/tmp").items():
        command += ["--setenv", name, value]
    if os.geteuid() == 0:
        # Root keeps only what the worker needs to start children under other uids and clean up.
        command += ["--cap-drop", "ALL"]
        for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL"):
            command += ["--cap-add", cap]
    else:
        command += ["--unshare-user"]
    return command + ["--"] + program


_BWRAP_VERDICT: dict[str, str | None] = {}
_BWRAP_LOCK = threading.Lock()


def bwrap_problem(settings: GraderSettings) -> str | None:
    """None if bubblewrap can start a sandbox here, else why not (checked once per process)."""
    with _BWRAP_LOCK:
        if "verdict" not in _BWRAP_VERDICT:
            try:
                # Cheap: Python starts, and torch (imported by the worker later) is where it should be.
                check = f"import os, sys; sys.exit(not os.path.isfile({torch_file()!r}))"
                probe = subprocess.run(
                    bwrap_command(settings, [sys.executable, "-I", "-c", check]),
                    capture_output=True,
                    timeout=60,
                    stdin=subprocess.DEVNULL,
                )
                _BWRAP_VERDICT["verdict"] = (
                    None
                    if probe.returncode == 0
                    else (f"bwrap failed: {probe.stderr.decode(errors='replace').strip()[:300]}")
                )
            except (OSError, subprocess.SubprocessError) as error:
                _BWRAP_VERDICT["verdict"] = f"bwrap is unusable: {error}"
        return _BWRAP_VERDICT["verdict"]


def choose_isolation(settings: GraderSettings) -> Isolation:
    if settings.isolation != IsolationSetting.AUTO:
        return Isolation(settings.isolation)
    return Isolation.BWRAP if bwrap_problem(settings) is None else Isolation.FALLBACK
