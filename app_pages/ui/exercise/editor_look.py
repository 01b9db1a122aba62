"""How the Exercises page's code editor (``streamlit-code-editor``, Ace 1.34) looks and takes the keyboard.

The theme: Ace's ``cloud_editor`` pair, light or dark as the app is (``st.context.theme``, which
the browser sends with every run: a theme switched from the app menu, which runs nothing, reaches
the editor at the next run, such as its own save a second and a half after typing). Both
ship in the component's bundle with their CSS, load nothing from outside the machine, colour
Python's tokens and draw a selection at 3:1 or more against their background. (The component's
own ``streamlit_light``/``streamlit_dark`` import a font from a web font host; Ace's ``textmate``
requires a ``textmate-css`` module its bundle lacks, so its CSS was the string "undefined": no
colours and a transparent selection.)

Two faults found in Chromium, each fixed at its cause by CSS injected into the editor's frame
(``EDITOR_CSS``):

* Ace scrolls by moving its layers, never by scrolling its ``.ace_scroller``, whose content
  overflows it (the top scroll margin pushes it down). In keyboard-accessibility mode the
  scroller is focusable, and a click into the code made Chromium scroll it natively by that
  margin (15 px): the text moved up, the gutter (outside the scroller) did not, and every line
  number sat one line below its line until a reload. ``overflow: clip`` makes it no scroll
  container, so nothing can scroll it but Ace.
* The same mode makes the gutter a Tab stop (to reach fold widgets and annotations with the
  keyboard). This editor has neither (``showFoldWidgets`` is off, Python mode has no linter),
  so the stop led nowhere and reaching the code took an extra Tab. A ``visibility: hidden``
  element is no Tab stop; its line numbers stay visible.
"""

from __future__ import annotations

from app_pages.ui.dark_theme import ACE_THEMES, ThemeType

MIN_LINES, MAX_LINES = 12, 60  # Ace grows the editor with the text between the two, then scrolls
SAVE_AFTER_MS = 1500  # a pause in typing this long sends the text (and on leaving the editor)

# Ace's own scrollbars (customScrollbar): the browser's native ones are scroll containers, which
# Chromium makes Tab stops, so leaving the editor would take a Tab per scrollbar.
EDITOR_OPTIONS = {
    "enableKeyboardAccessibility": True,
    "customScrollbar": True,
    "showLineNumbers": True,
    "showFoldWidgets": False,
    "wrap": False,
    "useSoftTabs": True,
    "tabSize": 4,
}
# The component binds its own "exitSession" command (leave its snippet/keybinding side sessions)
# to Esc after Ace's "blurTextInput"; Ace tries the last-bound command first and that one always
# claims the key, so Esc never left the text. Unbound, Esc reaches "blurTextInput" again.
EDITOR_KEYBINDINGS = {"commands": [{"name": "exitSession", "bindkey": ""}]}
EDITOR_CSS = """
.ace_editor .ace_scroller { overflow: clip; }
.ace_editor .ace_gutter { visibility: hidden; }
.ace_editor .ace_gutter > .ace_layer { visibility: visible; }
"""


def editor_props(theme: ThemeType) -> dict:
    """Ace's props: the theme, the save's debounce, and no completion pop-ups over a student's typing."""
    return {
        "theme": ACE_THEMES[theme],
        "debounceChangePeriod": SAVE_AFTER_MS,
        "fontSize": 14,
        "enableLiveAutocompletion": False,
        "enableSnippets": False,
    }


def component_props() -> dict:
    return {"globalCSS": EDITOR_CSS}
