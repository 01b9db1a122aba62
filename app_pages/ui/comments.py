"""The comments under every lesson: plain text, newest first; their author or an unlocked instructor may delete."""

from __future__ import annotations

import streamlit as st

from app_pages.ui import clock
from app_pages.ui.identity import current_student, instructor_unlocked, prompt
from app_pages.ui.store_calls import store_call
from poslab.store import Comment
from poslab.store.validation import MAX_COMMENT_CHARS


def _comment_key(lesson_id: str) -> str:
    return f"comment-text-{lesson_id}"


def _problem_key(lesson_id: str) -> str:
    return f"comment-problem-{lesson_id}"


def _post_comment(lesson_id: str, student: str) -> None:
    """Form callback: save, and clear the box only when saved, so a failed post loses nothing."""
    key = _comment_key(lesson_id)
    if not st.session_state.get(key, "").strip():
        # Said under the box on this run: a callback's own message would appear at the top of the page.
        st.session_state[_problem_key(lesson_id)] = (
            f"Nothing was posted: the comment is empty. Type it in the box, then press Post "
            f"(a comment must be 1 to {MAX_COMMENT_CHARS:,} characters after trimming spaces)."
        )
        return
    saved = store_call(
        "post your comment", lambda opened: opened.add_comment(student, lesson_id, st.session_state.get(key, "")), None
    )
    if saved is not None:
        st.session_state[key] = ""


def _delete_comment(comment_id: int, author: str | None) -> None:
    """``author``: the student deleting their own comment (only theirs goes); None: the unlocked instructor."""
    store_call("delete the comment", lambda opened: opened.delete_comment(comment_id, author=author), None)


def comment_byline(comment: Comment) -> str:
    return f"{comment.student} · {clock.shown(comment.time, clock.DATE_TIME)}"


def show_comment(comment: Comment, can_delete: bool, deleted_by: str | None = None) -> None:
    # Plain text only: st.text never renders Markdown or HTML, whatever a student typed.
    with st.container(border=True):
        st.text(comment_byline(comment))
        st.text(comment.text)
        if can_delete:
            st.button(
                "Delete",
                key=f"delete-comment-{comment.id}",
                icon=":material/delete:",
                help=f"Delete this comment by {comment.student}",
                on_click=_delete_comment,
                args=(comment.id, deleted_by),
            )


def comments_section(lesson_id: str) -> None:
    st.divider()
    comments = store_call("load the comments", lambda opened: opened.comments(lesson_id), ())
    st.header(f"Comments ({len(comments)})")
    student = current_student()
    if student is None:
        st.caption(prompt("comment"))
    else:
        with st.form(f"comment-form-{lesson_id}", border=False):
            st.text_area("Add a comment (plain text)", key=_comment_key(lesson_id), max_chars=MAX_COMMENT_CHARS)
            st.form_submit_button("Post", on_click=_post_comment, args=(lesson_id, student))
        problem = st.session_state.pop(_problem_key(lesson_id), None)
        if problem:
            st.warning(problem, icon=":material/edit_note:")
    instructor = instructor_unlocked()
    for comment in comments:
        # A student may take back their own comment; the instructor may remove any.
        show_comment(
            comment,
            can_delete=instructor or (student is not None and comment.student == student),
            deleted_by=None if instructor else student,
        )
