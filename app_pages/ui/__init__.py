"""The Streamlit helpers that more than one page draws with; only pages and app.py import them.

One module per concern, imported by name (``from app_pages.ui import frame``):

* ``frame``: the lesson frame: ``lesson_header`` first, ``text`` and ``chart`` between,
  ``lesson_footer`` last (quick checks, "mark lesson done", previous/next, comments);
* ``caching``: ``cached(function, **kwargs)``, one library call per section, not per rerun;
* ``store_calls``: the app's one ``Store`` and ``store_call``, so a locked or missing database
  ends in a sentence, not a traceback;
* ``identity``: who is studying (typed name or login) and the sidebar app.py draws on every page;
* ``comments``: the comments under every lesson;
* ``lock``: the Instructor page's password lock;
* ``hints``, ``grading``, ``workspace``, ``hand_in``, ``feedback``, ``history``: the Exercises
  page: hints one tier at a time, the grading service and the practice runs, the code editor and
  its drafts, the buttons and what they answer, what a student sees of a result, and the
  attempts to learn from;
* ``glance``: Home's progress at a glance.
"""
