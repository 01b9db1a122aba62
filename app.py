"""Position Lab: the app's entry (``streamlit run app.py``), its router and the frame around every page.

This file is read twice, and does one thing each time:

* **imported by the server** (``streamlit run`` finds ``app = st.App(...)`` below and serves it with
  uvicorn): ``app`` is this file as the app's script, with the server's start-up and its routes
  (``app_pages/runtime/server.py``): the roster of ``POSLAB_ROSTER`` is loaded, the grading service's
  judges start and the pages' libraries are imported before any page is opened, and
  ``/signin/<token>`` serves the roster's sign-in links;
* **run as the script of every page view** (``__name__ == "__main__"``, also under AppTest): the
  router. The lessons come from ``poslab.lessons`` in course order, grouped into "Lessons" and
  "Practice"; the Exercise page closes "Practice", and the student's own pages (Progress,
  Instructor) form "You". Before the page, the frame finds who the student is (``identity``: a
  login, a roster sign-in, or a typed name) and draws the sidebar; the tab icon is served by the
  app itself.
"""

from pathlib import Path

import streamlit as st


def route() -> None:
    # Imported here, not at the top: the server imports this file first, and the heavy imports must
    # not hold up its start (its warm-up thread makes them; here they are already loaded).
    import torch

    from app_pages.runtime import heap, run_gate
    from app_pages.ui import dark_theme, identity, sidebar
    from poslab.lessons import all_lessons

    # Once per process (the server's start-up has usually done it): see heap.py.
    heap.freeze_start_up_heap()
    # Lesson tensors are tiny: a second intra-op thread only competes with other sessions for the cores.
    torch.set_num_threads(1)
    # A local image, not a Material icon name: those are fetched from a web font host by the browser.
    page_icon = Path(__file__).parent / "app_pages" / "ui" / "icon.png"
    st.set_page_config(page_title="Position Lab", page_icon=str(page_icon), layout="wide")
    dark_theme.dark_theme_css()

    sections: dict[str, list[st.Page]] = {
        "": [st.Page("app_pages/home.py", title="Home", icon=":material/home:", default=True)],
    }
    for lesson in all_lessons():
        sections.setdefault(lesson.group, []).append(
            st.Page(lesson.page_path, title=lesson.title, icon=lesson.icon, url_path=lesson.id)
        )
    sections.setdefault("Practice", []).append(
        st.Page("app_pages/exercise.py", title="Exercises", icon=":material/assignment:", url_path="exercise")
    )
    sections["You"] = [
        st.Page("app_pages/progress.py", title="Progress", icon=":material/insights:", url_path="progress")
    ]
    if (Path(__file__).parent / "app_pages" / "instructor.py").is_file():  # a student bundle ships without it
        sections["You"].append(
            st.Page("app_pages/instructor.py", title="Instructor", icon=":material/school:", url_path="instructor")
        )

    # expanded: the whole course stays in view rather than folded behind "View more".
    page = st.navigation(sections, expanded=True)
    with run_gate.page_runs().slot():  # first come, first served, when a class arrives at once
        identity.resolve_run()
        sidebar.sidebar()
        page.run()


if __name__ == "__main__":
    route()
else:
    from app_pages.runtime import server

    app = st.App(__file__, lifespan=server.lifespan, routes=server.routes())
