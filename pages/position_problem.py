"""Placeholder until the lesson page lands."""

from pages import ui

ui.lesson_header("position-problem")
ui.lesson_footer("position-problem")
