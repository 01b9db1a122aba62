"""Home: what the course teaches and the path through it."""

import streamlit as st

from poslab.lessons import all_lessons

st.title("Position Lab")
st.markdown(
    "Self-attention cannot tell *the dog bit the man* from *the man bit the dog*. This course shows "
    "you why, live, and then walks through the four ways transformers are given a sense of order: "
    "sinusoidal encodings, learned embeddings, RoPE and ALiBi. Every number on every page is "
    "computed as you move the knobs; then you implement each encoding yourself and an autograder "
    "checks it against the properties the lessons teach."
)
st.subheader("The path")
for lesson in all_lessons():
    st.page_link(lesson.page_path, label=lesson.title, icon=lesson.icon)
