"""The comments under every lesson: plain text, newest first; an unlocked instructor may delete."""

from __future__ import annotations

import streamlit as st

from app_pages.ui.identity import current_student
from app_pages.ui.lock import instructor_unlocked
from app_pages.ui.store_calls import store_call
from poslab.store import Comment
from poslab.store.validation import MAX_COMMENT_CHARS


def _comment_key(lesson_id: str) -> str:
    return f"comment-text-{lesson_id}"


def _post_comment(lesson_id: str, student: str) -> None:
    """Form callback: save, and clear the box only when saved, so a failed post loses nothing."""
    key = _comment_key(lesson_id)
    saved = store_call("post your comment",
                       lambda opened: opened.add_comment(student, lesson_id, st.session_state.get(key, "")), None)
    if saved is not None:
        st.session_state[key] = ""


def _delete_comment(comment_id: int) -> None:
    store_call("delete the comment", lambda opened: opened.delete_comment(comment_id), None)


def comment_byline(comment: Comment) -> str:
    return f"{comment.student} · {comment.time:%Y-%m-%d %H:%M} UTC"


def show_comment(comment: Comment, can_delete: bool) -> None:
    # Plain text only: st.text never renders Markdown or HTML, whatever a student typed.
    with st.container(border=True):
        st.text(comment_byline(comment))
        st.text(comment.text)
        if can_delete:
            st.button("Delete", key=f"delete-comment-{comment.id}", icon=":material/delete:",
                      on_click=_delete_comment, args=(comment.id,))


def comments_section(lesson_id: str) -> None:
    st.divider()
    comments = store_call("load the comments", lambda opened: opened.comments(lesson_id), ())
    st.subheader(f"Comments ({len(comments)})")
    student = current_student()
    if student is None:
        st.caption("Type your name in the sidebar to comment.")
    else:
        with st.form(f"comment-form-{lesson_id}", border=False):
            st.text_area("Add a comment (plain text)", key=_comment_key(lesson_id), max_chars=MAX_COMMENT_CHARS)
            st.form_submit_button("Post", on_click=_post_comment, args=(lesson_id, student))
    for comment in comments:
        show_comment(comment, can_delete=instructor_unlocked())
