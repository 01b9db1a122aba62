"""poslab.identity and poslab.signin: names, the one resolver in each mode, the password's limit, the
client address behind a proxy, the links' CSV."""

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest

from poslab.identity import (
    NAME_PARAM,
    PASSWORD_FAILURE_LIMIT,
    PASSWORD_WINDOW,
    Identity,
    IdentityFrame,
    clean_name,
    login_configured,
    login_identity,
    name_from_query,
    password_matches,
    password_wait,
    resolve,
    sign_in_prompt,
)
from poslab.signin import client_address, link_url, links_csv, parse_trusted_proxies
from poslab.store import RosterMember

ISSUER = "https://login.uni.edu"
LOGGED_IN = {
    "is_logged_in": True,
    "iss": ISSUER,
    "sub": "ann-0001",
    "email": "Ann@Uni.edu",
    "email_verified": True,
    "name": "Ann",
}
LOGGED_OUT = {"is_logged_in": False}


def test_names_are_trimmed_and_inner_spaces_collapsed():
    assert clean_name("  Ada   Lovelace ") == "Ada Lovelace"
    assert clean_name("Zoë") == "Zoë"


@pytest.mark.parametrize(
    "bad, message",
    [
        ("", "type a name"),
        ("   ", "type a name"),
        (None, "as text"),
        ("x" * 65, "at most 64"),
        ("ann\x07", "control"),
        ("a\u200bnn", "invisible"),
    ],
)
def test_bad_names_get_a_sentence(bad, message):
    with pytest.raises(ValueError, match=message):
        clean_name(bad)


def test_a_64_character_name_is_allowed():
    assert len(clean_name("y" * 64)) == 64


def test_the_url_name_is_read_and_invalid_ones_are_ignored():
    assert NAME_PARAM == "student"
    assert name_from_query({"student": " Ann "}) == "Ann"
    assert name_from_query({"student": ["Old", "New"]}) == "New"
    assert name_from_query({"student": ""}) is None
    assert name_from_query({"student": "z" * 100}) is None
    assert name_from_query({}) is None


def test_login_is_configured_only_when_streamlit_adds_is_logged_in():
    assert not login_configured({"email": "test@example.com"})  # AppTest's default user
    assert login_configured({"is_logged_in": False})


def test_the_logged_in_email_in_lower_case_is_the_key_then_the_name():
    assert login_identity(LOGGED_IN) == "ann@uni.edu"  # the student key: the same as a roster's
    assert login_identity({"is_logged_in": True, "name": "Ann"}) is None  # no subject: no login to trust
    assert login_identity({"is_logged_in": False, "email": "ann@uni.edu", "email_verified": True}) is None


# -- the resolver, in each mode --------------------------------------------------------------------------


def test_typed_names_without_a_login_or_a_roster_the_session_name_wins_over_the_url():
    assert resolve(IdentityFrame(params={"student": "Bob"}, typed_name="Carl")).identity == Identity("Carl", "name")
    found = resolve(IdentityFrame(params={"student": "Bob"}))
    assert found.identity == Identity("Bob", "name") and found.mode == "name" and found.refused is None
    assert resolve(IdentityFrame()).identity is None


def test_a_login_wins_and_a_typed_or_url_name_is_refused_with_how_to_log_in():
    found = resolve(IdentityFrame(LOGGED_IN, params={"student": "Bob"}, typed_name="Carl"))
    assert found.identity == Identity("ann@uni.edu", "login", "Ann") and found.mode == "login"
    assert "Log in" in found.refused and "?student=" in found.refused
    nobody = resolve(IdentityFrame(LOGGED_OUT, params={"student": "Bob"}, typed_name="Carl"))
    assert nobody.identity is None and "?student=" in nobody.refused  # logged out: nobody, not Bob
    assert resolve(IdentityFrame(LOGGED_OUT)).refused is None


def test_with_a_roster_only_a_sign_in_names_the_student_and_names_are_refused():
    signed = IdentityFrame(
        roster_active=True,
        roster_student="ada@uni.edu",
        roster_name="Ada Lovelace",
        params={"student": "bob@uni.edu"},
        typed_name="bob@uni.edu",
    )
    found = resolve(signed)
    assert found.identity == Identity("ada@uni.edu", "roster", "Ada Lovelace") and found.mode == "roster"
    assert found.identity.label == "Ada Lovelace (ada@uni.edu)"
    assert "personal links" in found.refused
    for frame in (
        IdentityFrame(roster_active=True, params={"student": "ada@uni.edu"}),
        IdentityFrame(roster_active=True, typed_name="ada@uni.edu"),
    ):
        refused = resolve(frame)
        assert refused.identity is None and "sign-in link your instructor sent you" in refused.refused
    assert resolve(IdentityFrame(roster_active=True)).refused is None  # nothing tried: nothing to refuse


def test_a_login_and_a_roster_together_need_the_account_on_the_roster():
    on = resolve(IdentityFrame(LOGGED_IN, roster_active=True, login_rostered=True))
    assert on.identity == Identity("ann@uni.edu", "login", "Ann")
    off = resolve(IdentityFrame(LOGGED_IN, roster_active=True, login_rostered=False))
    assert off.identity is None and "not on this class's roster" in off.refused
    by_link = resolve(IdentityFrame(LOGGED_OUT, roster_active=True, roster_student="bob@uni.edu"))
    assert by_link.identity == Identity("bob@uni.edu", "roster")  # a login first, else the roster's sign-in


def test_a_roster_sign_in_counts_only_while_a_roster_is_active():
    assert resolve(IdentityFrame(roster_active=False, roster_student="ada@uni.edu")).identity is None


def test_each_mode_says_how_to_sign_in():
    assert sign_in_prompt("name", "comment") == "Type your name in the sidebar to comment."
    assert sign_in_prompt("login", "comment") == "Log in (in the sidebar) to comment."
    assert sign_in_prompt("roster", "comment") == "Open the personal sign-in link your instructor sent you to comment."


# -- the Instructor password -------------------------------------------------------------------------------


def test_password_compare_needs_a_configured_password():
    assert password_matches("s3cret", "s3cret")
    assert not password_matches("s3cre", "s3cret")
    assert not password_matches("", "")
    assert not password_matches("anything", None)
    assert password_matches("pässwörd", "pässwörd")


def test_five_wrong_passwords_a_minute_then_a_wait_until_the_oldest_leaves_the_window():
    now = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    four = [now - timedelta(seconds=s) for s in (50, 40, 30, 20)]
    assert PASSWORD_FAILURE_LIMIT == 5 and PASSWORD_WINDOW == timedelta(minutes=1)
    assert password_wait([four, []], now) is None
    five = sorted(four + [now])
    assert password_wait([five, []], now) == timedelta(seconds=10)  # 50 s ago + 60 s
    assert password_wait([[], five], now) == timedelta(seconds=10)  # from the address alone too
    assert password_wait([five], now + timedelta(seconds=10)) is None


# -- the client's address and the links ----------------------------------------------------------------------


def test_x_forwarded_for_is_believed_only_from_a_trusted_proxy():
    trusted = parse_trusted_proxies("127.0.0.1, 10.0.0.0/8")
    assert client_address("203.0.113.9", ["198.51.100.1"], trusted) == "203.0.113.9"  # not a proxy: ignored
    assert client_address("10.0.0.2", ["198.51.100.1"], trusted) == "198.51.100.1"
    # A client's own made-up entry sits left of what the proxy appended: the rightmost untrusted hop wins.
    assert client_address("10.0.0.2", ["6.6.6.6, 198.51.100.1"], trusted) == "198.51.100.1"
    assert client_address(None, ["198.51.100.1, 10.0.0.3"], trusted) == "198.51.100.1"  # loopback, two proxies
    assert client_address("10.0.0.2", ["garbage"], trusted) == "10.0.0.2"
    assert client_address("10.0.0.2", [], trusted) == "10.0.0.2"
    assert client_address("10.0.0.2", ["198.51.100.1"], ()) == "10.0.0.2"  # nothing configured: nobody believed


def test_a_bad_trusted_proxy_entry_is_named():
    with pytest.raises(ValueError, match="'proxy.local' is not an IP address"):
        parse_trusted_proxies("127.0.0.1, proxy.local")
    assert parse_trusted_proxies("") == ()


def test_the_links_csv_has_one_row_per_new_link():
    expires = datetime(2026, 12, 31, 9, 30, tzinfo=UTC)
    members = [
        RosterMember("ada@uni.edu", "Ada Lovelace", "ada@uni.edu", "17", "A", None, None),
        RosterMember("bob@uni.edu", "Bob", "bob@uni.edu", "", "", None, None),
    ]
    text = links_csv(members, {"ada@uni.edu": "TOKEN"}, "https://lab.uni.edu/", expires)
    assert list(csv.reader(io.StringIO(text))) == [
        ["name", "email", "id", "section", "key", "link", "expires_utc"],
        [
            "Ada Lovelace",
            "ada@uni.edu",
            "17",
            "A",
            "ada@uni.edu",
            "https://lab.uni.edu/signin/TOKEN",
            "2026-12-31 09:30",
        ],
    ]
    assert link_url("http://127.0.0.1:8501", "T") == "http://127.0.0.1:8501/signin/T"
