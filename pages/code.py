"""Placeholder until the lesson page lands."""

from pages import ui

ui.lesson_header("code")
ui.lesson_footer("code")
