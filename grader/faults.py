"""``GraderFault``: the grader itself could not work. Its own module, free of torch, so that the
command line can name it without importing the judge (``python -m grader --help`` stays quick)."""


class GraderFault(Exception):
    """The grader itself could not work (no worker, a broken worker): not the submission's fault."""
