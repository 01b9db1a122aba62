"""Position Lab: the router and the frame around every page.

Run with ``streamlit run app.py``. The lessons come from ``poslab.lessons`` in course order,
grouped into "Lessons" and "Practice"; the Exercise page closes "Practice", and the student's
own pages (Progress, Instructor) form "You". The sidebar of every page shows who the student is
and how far they have come. The first run starts the grading service in the background, so its
judges are warm before the first submission; the tab icon is served by the app itself.
"""

from pathlib import Path

import streamlit as st
import torch

from app_pages.ui import grading, heap, identity
from poslab.lessons import all_lessons

# Once per process: the imports' objects out of the post-run garbage collection's walk (see heap.py).
heap.freeze_start_up_heap()
# Lesson tensors are tiny: a second intra-op thread only competes with other sessions for the cores.
torch.set_num_threads(1)
# A local image, not a Material icon name: those are fetched from a web font host by the browser.
PAGE_ICON = Path(__file__).parent / "app_pages" / "ui" / "icon.png"
st.set_page_config(page_title="Position Lab", page_icon=str(PAGE_ICON), layout="wide")

EXERCISE_PAGE = st.Page("app_pages/exercise.py", title="Exercises", icon=":material/assignment:", url_path="exercise")
YOU_PAGES = [st.Page("app_pages/progress.py", title="Progress", icon=":material/insights:", url_path="progress")]
if (Path(__file__).parent / "app_pages" / "instructor.py").is_file():  # a student bundle ships without it
    YOU_PAGES.append(st.Page("app_pages/instructor.py", title="Instructor", icon=":material/school:", url_path="instructor"))


def build_navigation() -> dict[str, list[st.Page]]:
    sections: dict[str, list[st.Page]] = {
        "": [st.Page("app_pages/home.py", title="Home", icon=":material/home:", default=True)],
    }
    for lesson in all_lessons():
        sections.setdefault(lesson.group, []).append(
            st.Page(lesson.page_path, title=lesson.title, icon=lesson.icon, url_path=lesson.id))
    sections.setdefault("Practice", []).append(EXERCISE_PAGE)
    sections["You"] = YOU_PAGES
    return sections


# expanded: the whole course stays in view rather than folded behind "View more".
page = st.navigation(build_navigation(), expanded=True)
grading.start_at_startup()
identity.sidebar()
page.run()
