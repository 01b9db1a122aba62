"""Position Lab: the library behind the course (never imports streamlit)."""

__version__ = "0.1.0"
