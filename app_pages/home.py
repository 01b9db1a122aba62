"""Home: what the course teaches, the path through it, and a spot for progress at a glance."""

import streamlit as st

from app_pages.ui import glance
from poslab.course_map import course_map, home_text
from poslab.exercises import EXERCISES
from poslab.viz.progress import EXERCISE_PAGE

st.title("Position Lab")
st.markdown(home_text("intro"))

with st.container(border=True, key="home-progress"):
    st.markdown(home_text("progress"))
    linked_next_step = glance.progress_at_a_glance()

path = course_map()
first_stop = path[0][1][0]
if not linked_next_step:  # a student's own next step (above) already says where to go
    st.page_link(first_stop.page_path, label=f"Start with {first_stop.title}", icon=":material/play_arrow:")

st.header("The path through the course")
for group, stops in path:
    st.markdown(f"**{group}**")
    for stop in stops:
        # The link as wide as its title, the summary beside it, below it on a narrow page.
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            st.page_link(stop.page_path, label=stop.label, icon=stop.icon)
            st.caption(stop.summary)

st.markdown("**Exercises**")
for exercise in EXERCISES:
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.page_link(
            EXERCISE_PAGE, label=exercise.title, icon=":material/code:", query_params={"exercise": exercise.id}
        )
        st.caption(f"Implement {', '.join(exercise.names)} in `{exercise.filename}`")

st.markdown(home_text("how"))
