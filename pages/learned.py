"""Placeholder until the lesson page lands."""

from pages import ui

ui.lesson_header("learned")
ui.lesson_footer("learned")
