"""What every page draws with; only pages and app.py import it. A folder says who uses a module.

Here, shared by every page: ``frame`` (the lesson frame), ``caching``, ``store_calls`` (the app's
one ``Store``), ``identity`` and ``sidebar`` (who is studying), ``comments``, ``charts``,
``clock``, ``dark_theme`` and ``glance`` (Home's progress at a glance).

* ``exercise/``: the Exercises and Progress pages (editor, hand-in, grading, feedback, history, hints);
* ``instructor/``: the Instructor page (class table, roster, lock, LMS grades);
* ``app_pages/runtime/``: the app process itself (server routes, run gate, heap), no page's UI.
"""
