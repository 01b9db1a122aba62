"""One library call per page section, cached across reruns and sessions."""

from __future__ import annotations

import importlib

import streamlit as st


@st.cache_data(show_spinner=False, max_entries=256)
def _cached_call(module: str, name: str, kwargs: tuple[tuple[str, object], ...]) -> object:
    return getattr(importlib.import_module(module), name)(**dict(kwargs))


def cached(function, **kwargs):
    """``function(**kwargs)`` through ``st.cache_data``, keyed by the function's dotted name and the
    plain keyword arguments (ints, floats, strings, tuples; never tensors).

    Lets a page make its one library call per section without recomputing it on every rerun;
    the result (a frame, a chart, a small frozen dataclass) must pickle.
    """
    return _cached_call(function.__module__, function.__qualname__, tuple(sorted(kwargs.items())))
