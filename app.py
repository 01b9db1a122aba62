"""Position Lab: the router and the frame around every page.

Run with ``streamlit run app.py``. The lessons come from ``poslab.lessons`` in course order.
"""

import streamlit as st

from poslab.lessons import all_lessons

st.set_page_config(page_title="Position Lab", page_icon=":material/swap_horiz:", layout="wide")


def build_navigation() -> dict[str, list[st.Page]]:
    sections: dict[str, list[st.Page]] = {
        "": [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)],
    }
    for lesson in all_lessons():
        sections.setdefault(lesson.group, []).append(
            st.Page(lesson.page_path, title=lesson.title, icon=lesson.icon, url_path=lesson.id))
    return sections


page = st.navigation(build_navigation())
page.run()
