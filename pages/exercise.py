"""Exercises: read the spec, reveal hints one at a time, submit code and see it graded."""

import streamlit as st

st.title("Exercises")
