"""Placeholder until the lesson page lands."""

from pages import ui

ui.lesson_header("rope")
ui.lesson_footer("rope")
