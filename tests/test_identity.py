"""poslab.identity: names, the query parameter, the OIDC login and the password check."""

import pytest

from poslab.identity import (
    NAME_PARAM, Identity, clean_name, login_configured, login_identity, name_from_query, password_matches,
    resolve_identity)


def test_names_are_trimmed_and_inner_spaces_collapsed():
    assert clean_name("  Ada   Lovelace ") == "Ada Lovelace"
    assert clean_name("Zoë") == "Zoë"


@pytest.mark.parametrize("bad, message", [
    ("", "type a name"), ("   ", "type a name"), (None, "as text"), ("x" * 65, "at most 64"),
    ("ann\x07", "control"), ("a\u200bnn", "invisible"),
])
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


def test_the_logged_in_email_is_the_identity_then_the_name():
    assert login_identity({"is_logged_in": True, "email": "ann@uni.edu", "name": "Ann"}) == "ann@uni.edu"
    assert login_identity({"is_logged_in": True, "name": "Ann"}) == "Ann"
    assert login_identity({"is_logged_in": False, "email": "ann@uni.edu"}) is None


def test_a_login_wins_over_a_typed_or_url_name():
    user = {"is_logged_in": True, "email": "ann@uni.edu"}
    assert resolve_identity(user, {"student": "Bob"}, "Carl") == Identity("ann@uni.edu", "login")
    # login configured, nobody logged in: the URL must not let anyone in as someone else
    assert resolve_identity({"is_logged_in": False}, {"student": "Bob"}, "Carl") is None


def test_without_login_the_session_name_wins_over_the_url():
    assert resolve_identity({}, {"student": "Bob"}, "Carl") == Identity("Carl", "name")
    assert resolve_identity({}, {"student": "Bob"}, None) == Identity("Bob", "name")
    assert resolve_identity({}, {}, None) is None


def test_password_compare_needs_a_configured_password():
    assert password_matches("s3cret", "s3cret")
    assert not password_matches("s3cre", "s3cret")
    assert not password_matches("", "")
    assert not password_matches("anything", None)
    assert password_matches("pässwörd", "pässwörd")
