"""The Exercises page's editor: the exercise's stub in a code editor, saved as a draft as the student types.

The editor is ``streamlit-code-editor`` (Ace): monospace, line numbers, Python colours, as tall as
the file (up to ``editor_look.MAX_LINES``). It sends its text a second and a half after the student
stops typing and when it loses focus; each new text is saved as the draft in the store, so it is
back after a reload, in another tab or on another day. The editor sits in a fragment: a save
reruns the editor only, not the page.

One place saves what the student typed: ``receive_editor_text``, once per event the editor sent
(the editor's fragment calls it, and so does the hand-in's, whose click may come before the
editor's own run). Reading the draft (``draft_text``) writes nothing.

Keyboard (WCAG 2.1.2, no trap): Tab reaches the editor; Enter starts editing (Tab then indents);
Esc stops editing, and Tab then moves on to the next control. Ace's ``enableKeyboardAccessibility``.
How the editor looks (a theme that follows the app's, loading nothing from outside the machine)
and the fixes it needs: ``app_pages.ui.exercise.editor_look``.

Two tabs on one draft: a tab whose view is older than the stored draft, and that has nothing
unsaved, shows the stored one and says so. A tab whose typing would replace a newer save from
another tab saves nothing yet: it asks first (``conflict``), keep mine (replace the other) or load
the other version (mine can be downloaded before), and does what the student chose.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from code_editor import code_editor

from app_pages.ui import clock
from app_pages.ui.dark_theme import theme_type
from app_pages.ui.exercise import editor_look
from app_pages.ui.identity import session_id
from app_pages.ui.store_calls import store_call
from grader.submissions import MAX_FILE_BYTES
from poslab.config import PROJECT_ROOT
from poslab.exercises import Exercise, spec
from poslab.store import Draft

KEYBOARD_HELP = (
    "Keyboard: Tab reaches the editor, Enter starts editing (Tab then indents), "
    "Esc stops editing, then Tab moves on; Ctrl+Enter (⌘+Enter on a Mac) runs the public tests."
)  # the caption goes on with the draft's state: saved at a time, or "saved as you type"


@dataclass
class EditorState:
    """What this session knows of one exercise's editor."""

    text: str  # the editor's text as last received (saved, unless ``problem`` says why not)
    loaded: str  # the text the editor was last mounted with
    generation: int  # a new one mounts a fresh editor with ``loaded`` (reset, load an attempt)
    revision: int  # of the stored draft this session last loaded or saved; 0: none
    last_event: str = ""  # the id of the editor's last event handled
    saved_at: str = ""
    notice: str | None = None  # said once, then cleared
    problem: str | None = None  # why the last text was not saved
    conflict: Draft | None = None  # another tab's newer save that this tab's typing would replace: asked first
    run_asked: bool = False  # Ctrl+Enter in the editor: run the public tests on its text


def starter_code(exercise: Exercise) -> str:
    """The exercise's stub as shipped in ``exercises/<file>`` (its docstring is the spec)."""
    path = PROJECT_ROOT / "exercises" / exercise.filename
    if path.is_file():
        return path.read_text(encoding="utf-8")
    return f'"""{spec(exercise.id)}"""\n'


def _state_key(student: str, exercise: Exercise) -> str:
    return f"workspace-{student}-{exercise.id}"


def editor_key(student: str, exercise: Exercise) -> str:
    """The editor component's key: a new generation mounts a new editor."""
    return _editor_key(exercise, _state(student, exercise))


def _state(student: str, exercise: Exercise) -> EditorState:
    return st.session_state[_state_key(student, exercise)]


def sync_with_store(student: str, exercise: Exercise) -> EditorState:
    """On each run of the page: load the draft the first time, and a newer one saved from another tab."""
    key = _state_key(student, exercise)
    draft = store_call("load your draft", lambda opened: opened.draft(student, exercise.id), None)
    state = st.session_state.get(key)
    if state is None:
        text = draft.code if draft is not None else starter_code(exercise)
        state = EditorState(text, text, 0, draft.revision if draft is not None else 0)
        if draft is not None:
            state.saved_at = clock.shown(draft.saved_at, clock.DATE_TIME)
    elif draft is not None and draft.revision > state.revision and draft.saved_by != session_id():
        if draft.code == state.text:  # e.g. the page before a reload sent what this one restored
            state.revision, state.conflict = draft.revision, None
        elif state.conflict is not None:
            state.conflict = draft  # the student is asked to choose against the newest version
        elif not _unsaved_typing(state, exercise):  # (unsaved typing: its save asks first)
            _show_newer(
                state,
                draft,
                "Your draft was saved from another tab or window at "
                f"{clock.shown(draft.saved_at)}, after this page last loaded it: the editor "
                "now shows that version.",
            )
    st.session_state[key] = state
    return state


def _show_newer(state: EditorState, draft: Draft, notice: str) -> None:
    """Mount a fresh editor with another tab's newer draft."""
    state.text = state.loaded = draft.code
    state.generation += 1
    state.revision, state.conflict = draft.revision, None
    state.saved_at = clock.shown(draft.saved_at)
    state.notice = notice


def _editor_key(exercise: Exercise, state: EditorState) -> str:
    return f"editor-{exercise.id}-{state.generation}"


def _unsaved_typing(state: EditorState, exercise: Exercise) -> bool:
    """The editor sent text this run has not saved yet: it is about to be saved (or to ask first)."""
    value = st.session_state.get(_editor_key(exercise, state))
    return isinstance(value, dict) and bool(value.get("id")) and value["id"] != state.last_event


def _save(student: str, exercise: Exercise, state: EditorState, text: str, overwrite: bool = False) -> None:
    """Save ``text`` as the draft; over another tab's newer save only with ``overwrite`` (else: ask)."""
    size = len(text.encode("utf-8"))
    if size > MAX_FILE_BYTES:
        state.problem = (
            f"Not saved: the code is {size / 1024:,.0f} KB, and a solution file may be at most "
            f"{MAX_FILE_BYTES // 1024} KB."
        )
        return
    saved = store_call(
        "save your draft",
        lambda opened: opened.save_draft(
            student, exercise.id, text, saved_by=session_id(), base_revision=state.revision, overwrite_newer=overwrite
        ),
        None,
    )
    if saved is None:
        state.problem = "Not saved (see above): keep a copy of your code until this is fixed."
        return
    state.problem = None
    if saved.held_back:
        state.conflict = saved.draft
        return
    state.revision, state.conflict = saved.draft.revision, None
    state.saved_at = clock.shown(saved.draft.saved_at)
    if saved.replaced is not None:
        state.notice = (
            f"Your version is saved: it replaced the one saved from another tab or window at "
            f"{clock.shown(saved.replaced.saved_at)}."
        )


def receive_editor_text(student: str, exercise: Exercise) -> bool:
    """Take the editor's newest event, once, and save its text as the draft if it is new (or the
    last save failed): the one place where typing is saved. True if the event asks for a run."""
    state = _state(student, exercise)
    value = st.session_state.get(editor_key(student, exercise))
    if not (isinstance(value, dict) and value.get("id")) or value["id"] == state.last_event:
        return False
    state.last_event = value["id"]
    text = value.get("text")
    if isinstance(text, str) and (text != state.text or state.problem):
        state.text = text
        _save(student, exercise, state, text)
    # The component's own "submit" command: Ctrl+Enter (Command+Enter on a Mac).
    state.run_asked = state.run_asked or value.get("type") == "submit"
    return value.get("type") == "submit"


def take_run_request(student: str, exercise: Exercise) -> bool:
    """Whether Ctrl+Enter asked for a run since the last call (once per press)."""
    state = _state(student, exercise)
    asked, state.run_asked = state.run_asked, False
    return asked


def draft_text(student: str, exercise: Exercise) -> str:
    """The editor's text as last received: what the student sees, to run, hand in or download."""
    return _state(student, exercise).text


def replace_text(student: str, exercise: Exercise, text: str, notice: str) -> None:
    """Mount a fresh editor with ``text`` and save it as the draft (reset, load an attempt: the
    student asked for this text, so it replaces any other tab's)."""
    state = _state(student, exercise)
    state.text = state.loaded = text
    _save(student, exercise, state, text, overwrite=True)
    state.generation += 1
    state.notice = notice


def _keep_mine(student: str, exercise: Exercise) -> None:
    state = _state(student, exercise)
    _save(student, exercise, state, state.text, overwrite=True)


def _load_other(student: str, exercise: Exercise) -> None:
    state = _state(student, exercise)
    if state.conflict is not None:
        _show_newer(
            state,
            state.conflict,
            f"The editor shows the version saved from another tab or window at "
            f"{clock.shown(state.conflict.saved_at)}; yours was not saved.",
        )


def conflict_choice(student: str, exercise: Exercise, state: EditorState) -> None:
    """Ask before this tab's typing replaces another tab's newer save: keep mine, or load the other."""
    newer = state.conflict
    st.warning(
        f"Not saved yet: this draft was saved from another tab or window at {clock.shown(newer.saved_at)}, "
        "after this tab loaded it. Saving now would replace that version with the one in this editor. "
        "Which one do you keep?",
        icon=":material/sync_problem:",
    )
    choices = st.container(horizontal=True, gap="small")
    choices.button(
        "Keep mine (replace the other version)",
        key=f"keep-mine-{exercise.id}",
        type="primary",
        on_click=_keep_mine,
        args=(student, exercise),
    )
    choices.button(
        "Load the other version", key=f"load-other-{exercise.id}", on_click=_load_other, args=(student, exercise)
    )
    choices.download_button(
        "Download mine first",
        state.text,
        exercise.filename,
        mime="text/x-python",
        icon=":material/download:",
        key=f"download-mine-{exercise.id}",
        on_click="ignore",
    )


@st.fragment
def editor(student: str, exercise: Exercise) -> None:
    """The editor and its save line; a save reruns this fragment only."""
    state = _state(student, exercise)
    # The latest text, not the one mounted first: a page left and reopened mounts a new editor. A
    # mounted editor ignores a changed text (only a new generation, i.e. a new key, replaces it).
    # Every other argument stays the same from save to save: a changed one re-renders Ace.
    code_editor(
        state.text,
        lang="python",
        height=[editor_look.MIN_LINES, editor_look.MAX_LINES],
        shortcuts="sublime",
        response_mode=["debounce", "blur"],
        options=editor_look.EDITOR_OPTIONS,
        props=editor_look.editor_props(theme_type()),
        keybindings=editor_look.EDITOR_KEYBINDINGS,
        component_props=editor_look.component_props(),
        key=editor_key(student, exercise),
    )
    if receive_editor_text(student, exercise):
        st.rerun(scope="app")  # the run's panel is outside this fragment
    if state.notice:
        st.info(state.notice, icon=":material/sync:")
        state.notice = None
    if state.conflict is not None:
        conflict_choice(student, exercise, state)
    if state.problem:
        st.error(state.problem, icon=":material/save:")
    st.caption(
        f"{KEYBOARD_HELP} "
        + (
            f"Draft saved at {state.saved_at}."
            if state.saved_at
            else "This is the starter code; your changes are saved as you type."
        )
    )
