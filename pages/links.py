"""Placeholder until the lesson page lands."""

from pages import ui

ui.lesson_header("links")
ui.lesson_footer("links")
