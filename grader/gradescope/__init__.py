"""The Gradescope autograder package: ``python -m grader gradescope OUT.zip``.

``grader.gradescope.package`` writes the zip (``setup.sh`` and ``run_autograder`` at its root,
then the parts of ``grader/`` and ``poslab/`` that judging imports, found by import analysis);
``grader.gradescope.run`` is what ``run_autograder`` starts for each submission. Nothing here is
imported by the rest of the grader.
"""
