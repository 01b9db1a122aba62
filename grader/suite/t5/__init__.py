"""The hidden side of the t5 exercise (T5 relative buckets).

Tests in ``test_*.py``; what they draw (``domains``), the exact answer (``oracle``), how far a correct
answer may sit from it (``tolerances``); for instructors, ``mutants.py`` (known mistakes as patches
on the reference), ``equivalents.toml``, ``variants.py`` (correct rewrites) and ``clauses.md``.
"""
