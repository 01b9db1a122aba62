"""The Instructor page's roster: import one, see who has a sign-in link, issue, re-issue and withdraw
the personal links, download the new ones as CSV to send out, or remove the roster.

A link's token exists in clear only when it is issued (the store keeps its digest): the CSV of the
links just issued is offered for download in this session only. A lost or leaked link is re-issued,
which withdraws the earlier one and signs out the browsers it signed in. Withdrawing a student's
links also signs their browsers out; "Sign out" ends their sign-ins and leaves their link valid.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import pandas as pd
import streamlit as st

from app_pages.runtime.server import app_path
from app_pages.ui.store_calls import store_call
from poslab.config import Settings
from poslab.roles import Actor, may
from poslab.roster import ACCEPTED, RosterStudent, read_roster
from poslab.signin import links_csv
from poslab.store import RosterMember
from poslab.vocabulary import AuditAction

NEW_LINKS_KEY = "roster-new-links"  # (CSV text, how many) of the links issued in this session
NOTICE_KEY = "roster-notice"  # what the last action did, said once
DAYS_KEY, URL_KEY, CHOSEN_KEY = "roster-link-days", "roster-app-url", "roster-chosen"
DEFAULT_LINK_DAYS = 30


def default_app_url() -> str:
    """The app's address as the instructor opened it (students open the same one), else localhost."""
    parts = urlsplit(st.context.url or "")
    if parts.scheme in ("http", "https") and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}{app_path()}".rstrip("/")
    return "http://localhost:8501"


def members_table(members: Sequence[RosterMember]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "name": [member.name for member in members],
            "key": [member.key for member in members],
            "section": [member.section for member in members],
            "link valid until (UTC)": [
                f"{member.link_expires:%Y-%m-%d %H:%M}" if member.link_expires else "no link" for member in members
            ],
            "link last used (UTC)": [
                f"{member.link_used:%Y-%m-%d %H:%M}" if member.link_used else "" for member in members
            ],
        }
    )


def _issue(keys: Sequence[str], members: Sequence[RosterMember], actor: Actor) -> None:
    days = int(st.session_state.get(DAYS_KEY, DEFAULT_LINK_DAYS))
    app_url = (st.session_state.get(URL_KEY) or default_app_url()).strip()
    expires = datetime.now(UTC) + timedelta(days=days)
    tokens = store_call(
        "issue the links", lambda opened: opened.issue_links(keys, timedelta(days=days), actor=actor), None
    )
    if tokens:
        st.session_state[NEW_LINKS_KEY] = (links_csv(members, tokens, app_url, expires), len(tokens))
        st.session_state[NOTICE_KEY] = (
            f"{len(tokens)} new link(s), valid for {days} days. Download them now: "
            "they are not kept in clear, and cannot be shown again."
        )


def _withdraw(keys: Sequence[str], actor: Actor) -> None:
    live = store_call("withdraw the links", lambda opened: opened.revoke_links(keys, actor=actor), None)
    if live is not None:
        st.session_state[NOTICE_KEY] = (
            f"Withdrew {live} live link(s) of {len(keys)} student(s) and signed their browsers out."
        )
        st.session_state[CHOSEN_KEY] = []


def _sign_out(keys: Sequence[str], actor: Actor) -> None:
    ended = store_call("sign the students out", lambda opened: opened.end_sign_ins(keys, actor=actor), None)
    if ended is not None:
        st.session_state[NOTICE_KEY] = (
            f"Signed out {ended} browser(s) of {len(keys)} student(s); their links still work."
        )


def _replace(students: Sequence[RosterStudent], actor: Actor) -> None:
    change = store_call("import the roster", lambda opened: opened.replace_roster(students, actor=actor), None)
    if change is not None:
        st.session_state[NOTICE_KEY] = (
            f"The roster has {len(students)} students: {change.added} new, {change.kept} "
            f"kept, {change.removed} removed (their links withdrawn; their work stays)."
        )


def _remove(actor: Actor) -> None:
    change = store_call("remove the roster", lambda opened: opened.clear_roster(actor=actor), None)
    if change is not None:
        st.session_state[NOTICE_KEY] = (
            "The roster is removed: every link is withdrawn, and students type their names again (self-study mode)."
        )


def links_box(members: Sequence[RosterMember], actor: Actor) -> None:
    st.subheader("Personal sign-in links")
    st.caption(
        "Each link signs its student in on any browser that opens it, until it expires or is withdrawn; "
        "a signed-in browser stays signed in for POSLAB_SIGNIN_DAYS days (default 30)."
    )
    left, right = st.columns([3, 1])
    left.text_input("The app's address, as students open it", value=default_app_url(), key=URL_KEY)
    right.number_input("Valid for (days)", min_value=1, max_value=365, value=DEFAULT_LINK_DAYS, key=DAYS_KEY)
    labels = {
        member.key: member.name if member.name == member.key else f"{member.name} ({member.key})" for member in members
    }
    chosen = st.multiselect(
        "Students",
        list(labels),
        format_func=labels.get,
        key=CHOSEN_KEY,
        placeholder="Choose students to re-issue or withdraw their links",
    )
    without = [member.key for member in members if member.link_expires is None]
    first, second, third, fourth = st.columns(4)
    first.button(
        f"New links for the {len(without)} without one",
        disabled=not without,
        on_click=_issue,
        args=(without, members, actor),
        icon=":material/add_link:",
        width="stretch",
    )
    second.button(
        "New links for the chosen",
        disabled=not chosen,
        on_click=_issue,
        args=(chosen, members, actor),
        icon=":material/autorenew:",
        width="stretch",
        help="Their earlier links stop working, and the browsers those signed in are signed out.",
    )
    third.button(
        "Withdraw the chosen's links",
        disabled=not chosen,
        on_click=_withdraw,
        args=(chosen, actor),
        icon=":material/link_off:",
        width="stretch",
        help="And signs their browsers out.",
    )
    fourth.button(
        "Sign the chosen out",
        disabled=not chosen,
        on_click=_sign_out,
        args=(chosen, actor),
        icon=":material/logout:",
        width="stretch",
        help="Ends their sign-ins on every browser; their links still work.",
    )
    with st.popover(f"New links for all {len(members)} students", icon=":material/sync_lock:"):
        st.warning(
            f"Every student's earlier link stops working: all {len(members)} need the new one. The browsers their "
            "earlier links signed in are signed out."
        )
        st.button(
            f"Re-issue all {len(members)} links",
            key="roster-reissue-all",
            on_click=_issue,
            args=([member.key for member in members], members, actor),
            type="primary",
        )
    issued = st.session_state.get(NEW_LINKS_KEY)
    if issued is not None:
        text, count = issued
        st.download_button(
            f"Download the {count} new link(s) (CSV)",
            text,
            "signin_links.csv",
            mime="text/csv",
            icon=":material/download:",
            key="roster-links-download",
        )


def import_box(active: bool, actor: Actor) -> None:
    with st.expander(
        "Replace the roster" if active else "Import a roster", expanded=not active, icon=":material/upload_file:"
    ):
        st.caption(f"Accepted: {ACCEPTED}. A student's key is the email in lower case, else the LMS's user id.")
        uploaded = st.file_uploader("Roster file (CSV)", type=["csv"], key="roster-file")
        if uploaded is None:
            return
        roster = read_roster(uploaded.getvalue(), f"The file {uploaded.name}")
        for problem in roster.problems:
            st.text(problem)  # it quotes names and cells of the file: never Markdown
        if not roster.students:
            st.error("No student could be read from this file; the roster is unchanged.")
            return
        st.button(
            f"Make these {len(roster.students)} students the class's roster ({roster.format} file)",
            on_click=_replace,
            args=(roster.students, actor),
            type="primary",
            icon=":material/group:",
        )
    if active:
        with st.popover("Remove the roster", icon=":material/group_off:"):
            st.warning(
                "Every link is withdrawn and students type their names again: anyone can then type anyone's "
                "name. Their work stays in the store."
            )
            st.button("Remove the roster", key="roster-remove", on_click=_remove, args=(actor,), type="primary")


def roster_section(actor: Actor) -> None:
    st.header("Roster and sign-in links")
    notice = st.session_state.pop(NOTICE_KEY, None)
    if notice:
        st.success(notice, icon=":material/task_alt:")
    members = store_call("load the roster", lambda opened: opened.roster_members(), None)
    if members is None:
        return
    roster_file = Settings.from_env().roster_file
    if roster_file is not None:
        st.caption(f"POSLAB_ROSTER: the file {roster_file} becomes the roster each time the app starts.")
    if not members:
        st.caption(
            "No roster: students type their names, which suits self-study on one's own machine only. "
            "Import the class's roster and each student signs in with a personal link."
        )
    else:
        st.caption(
            f"{len(members)} students. Only a student signed in with their link can save progress, drafts "
            "or comments, or submit; reading the lessons needs no sign-in."
        )
        st.dataframe(members_table(members), hide_index=True)
    if not may(actor, AuditAction.ROSTER):
        st.caption("Importing the roster and issuing, withdrawing or ending sign-ins are for instructors.")
        return
    if members:
        links_box(members, actor)
    import_box(bool(members), actor)
