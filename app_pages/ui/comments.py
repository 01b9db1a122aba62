"""The comments under every lesson: plain text, newest first; their author or an instructor may delete
(a TA may not: ``poslab.roles``; an instructor's deletion is in the audit log).

A comment is signed with its author's name (the roster's; ``poslab.identity.author_name``), never
an email. With a roster or a login, the comments are the class's: only a signed-in member (or the
unlocked instructor) reads them; a visitor is told how to sign in.
"""

from __future__ import annotations

import streamlit as st

from app_pages.ui import clock
from app_pages.ui.identity import acting, current_student, mode, prompt
from app_pages.ui.store_calls import store_call
from poslab.identity import author_name
from poslab.roles import may
from poslab.store import Comment
from poslab.store.validation import MAX_COMMENT_CHARS
from poslab.vocabulary import AuditAction


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
    """``author``: the student deleting their own comment (only theirs goes); None: an instructor (who is logged)."""
    actor = None if author is not None else acting()
    if author is None and actor is None:
        return  # no longer unlocked: nothing is deleted
    store_call("delete the comment", lambda opened: opened.delete_comment(comment_id, author=author, actor=actor), None)


def comment_byline(comment: Comment, author: str) -> str:
    return f"{author} · {clock.shown(comment.time, clock.DATE_TIME)}"


def roster_names() -> dict[str, str]:
    """The roster's name of each student key ({} without a roster)."""
    members = store_call("load the roster's names", lambda opened: opened.roster_members(), ())
    return {member.key: member.name for member in members}


def show_comment(
    comment: Comment, can_delete: bool, deleted_by: str | None = None, names: dict[str, str] | None = None
) -> None:
    author = author_name(comment.student, names or {})
    # Plain text only: st.text never renders Markdown or HTML, whatever a student typed.
    with st.container(border=True):
        st.text(comment_byline(comment, author))
        st.text(comment.text)
        if can_delete:
            st.button(
                "Delete",
                key=f"delete-comment-{comment.id}",
                icon=":material/delete:",
                help=f"Delete this comment by {author}",
                on_click=_delete_comment,
                args=(comment.id, deleted_by),
            )


def comments_section(lesson_id: str) -> None:
    st.divider()
    student, actor = current_student(), acting()
    instructor = may(actor, AuditAction.DELETE_COMMENT)
    if student is None and actor is None and mode() != "name":
        st.header("Comments")
        st.caption(prompt("comment") + " The comments are shown to the class's signed-in students only.")
        return
    comments = store_call("load the comments", lambda opened: opened.comments(lesson_id), ())
    st.header(f"Comments ({len(comments)})")
    names = roster_names() if comments and mode() != "name" else {}
    if student is None:
        st.caption(prompt("comment"))
    else:
        with st.form(f"comment-form-{lesson_id}", border=False):
            st.text_area("Add a comment (plain text)", key=_comment_key(lesson_id), max_chars=MAX_COMMENT_CHARS)
            st.form_submit_button("Post", on_click=_post_comment, args=(lesson_id, student))
        problem = st.session_state.pop(_problem_key(lesson_id), None)
        if problem:
            st.warning(problem, icon=":material/edit_note:")
    for comment in comments:
        # A student may take back their own comment; the instructor may remove any.
        show_comment(
            comment,
            can_delete=instructor or (student is not None and comment.student == student),
            deleted_by=None if instructor else student,
            names=names,
        )
