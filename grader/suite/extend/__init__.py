"""The hidden side of the extend exercise (Stretch RoPE to a longer context).

Tests in ``test_*.py``; what they draw (``domains``), the exact answer (``oracle``), how far a correct
answer may sit from it (``tolerances``) and the mistakes they name (``mistakes``); for instructors,
``mutants.py`` (known mistakes as patches on the reference), ``equivalents.toml``, ``variants.py``
(correct rewrites) and ``clauses.md``.
"""
