"""The Exercises page and what Progress shows of it: one module per concern.

``workspace`` (the code editor and its drafts, with ``editor_look``), ``hand_in`` (the buttons
and what they answer), ``grading`` (the grading service and the practice runs), ``feedback``
(what a student sees of a result), ``history`` (the attempts to learn from), ``hints``.
"""
