"""Placeholder until the lesson page lands."""

from pages import ui

ui.lesson_header("three-families")
ui.lesson_footer("three-families")
