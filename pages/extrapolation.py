"""Placeholder until the lesson page lands."""

from pages import ui

ui.lesson_header("extrapolation")
ui.lesson_footer("extrapolation")
