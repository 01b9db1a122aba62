"""What the dark theme needs beyond its options in ``.streamlit/config.toml``: app.py calls
``dark_theme_css`` on every page.

Streamlit 1.67 draws the chosen segment of ``st.segmented_control`` and the chosen ``st.pills`` in
the primary colour on a tint of itself (10% of it over the background, 20% under the pointer or
focus). On the dark theme's black that is 4.3:1 (3.9:1 under the pointer), below WCAG's 4.5:1,
and no primary colour fixes it while white on the primary (buttons) stays at 4.5:1. So their text
takes the theme's light red instead (its ``linkColor``): 8.8:1 on the tint, 8.0:1 under the
pointer. The border and the tint stay the primary's, so the chosen one still looks chosen.

Only in the dark theme: the light theme's red meets 4.5:1 on its own tint. The theme is the one
the browser sent with this run (``st.context.theme``); one switched from the app menu, which runs
nothing, gets its CSS at the next run.
"""

from __future__ import annotations

from typing import Literal

import streamlit as st

ThemeType = Literal["light", "dark"]
# The code editor's bundled Ace theme for each (the browser's memory switches it at once).
ACE_THEMES: dict[ThemeType, str] = {"light": "cloud_editor", "dark": "cloud_editor_dark"}

# Both controls are a [data-testid="stButtonGroup"] of buttons: role="radio" for one choice
# (aria-checked), toggle buttons for several (aria-pressed). Streamlit colours the chosen one in
# a rule per state (resting, under the pointer, focused): "important" keeps this colour in each.
CHOSEN_BUTTON = '[data-testid="stButtonGroup"] button:is([aria-checked="true"], [aria-pressed="true"]):not(:disabled)'


def theme_type() -> ThemeType:
    """The app's theme as the browser last reported it; light (the app's default) when it has not."""
    return "dark" if st.context.theme.type == "dark" else "light"


def dark_theme_css() -> None:
    if theme_type() == "dark":
        st.html(f"<style>{CHOSEN_BUTTON} {{color: {st.get_option('theme.dark.linkColor')} !important;}}</style>")
