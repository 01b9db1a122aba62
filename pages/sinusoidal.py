"""Placeholder until the lesson page lands."""

from pages import ui

ui.lesson_header("sinusoidal")
ui.lesson_footer("sinusoidal")
