"""Placeholder until the lesson page lands."""

from pages import ui

ui.lesson_header("context-extension")
ui.lesson_footer("context-extension")
