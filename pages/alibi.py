"""Placeholder until the lesson page lands."""

from pages import ui

ui.lesson_header("alibi")
ui.lesson_footer("alibi")
