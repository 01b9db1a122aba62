"""What a student attacking the class tried on who-is-who, and what must not get through.

* A login is keyed by what its provider vouches for: a verified email, else its issuer and subject.
  Two accounts with one display name ("John Smith") are two students; an email the provider did
  not verify matches no roster entry.
* The sign-in cookie counts only from the app's own origin: scheme, host and port; the forwarded
  ones only from a trusted proxy.
* Addresses are compared as addresses: ``::ffff:127.0.0.1`` is ``127.0.0.1``. A named instructor
  is never kept out by another client's wrong passwords from the same address.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from streamlit.testing.v1 import AppTest

from poslab.identity import Identity, IdentityFrame, login_identity, resolve
from poslab.roster import read_roster
from poslab.signin import COOKIE, client_address, parse_trusted_proxies
from poslab.store import Store

# What this module adds to the library is imported in the tests that use it, so that the others run,
# and fail for what they show, against the code before it.
from tests.app_harness import APP, TIMEOUT, browser_signed_in, button, go, texts

ISSUER = "https://login.microsoftonline.com/tenant/v2.0"
PROXY = parse_trusted_proxies("127.0.0.1")


def account(sub: str, **claims: object) -> dict[str, object]:
    return {"is_logged_in": True, "iss": ISSUER, "sub": sub, **claims}


# -- a login's key ---------------------------------------------------------------------------------------


def test_two_accounts_with_one_display_name_are_two_students():
    first, second = account("a1", name="John Smith"), account("b2", name="John Smith")
    assert login_identity(first) != login_identity(second)
    assert "John Smith" not in (login_identity(first), login_identity(second))
    assert login_identity(first) == login_identity(dict(first))  # stable: the same subject, the same key
    assert login_identity(first) != login_identity(account("a1", iss="https://other.example"))  # per issuer
    from poslab.identity import login_account

    assert login_account(first).display == "John Smith"


def test_only_a_verified_email_is_a_key():
    assert login_identity(account("a1", email="Ann@Uni.edu", email_verified=True)) == "ann@uni.edu"
    assert login_identity(account("a1", email="ann@uni.edu", email_verified="true")) == "ann@uni.edu"
    assert login_identity(account("a1", email="ann@uni.edu", xms_edov=True)) == "ann@uni.edu"  # Entra ID
    unverified = login_identity(account("a1", email="ann@uni.edu"))
    assert unverified != "ann@uni.edu" and unverified.startswith("oidc-")
    assert login_identity(account("a1", email="ann@uni.edu", email_verified=False)) == unverified


def test_an_unverified_email_is_not_the_rostered_student_of_that_email():
    mallory = account("m1", email="ann@uni.edu", name="Ann")  # a provider that lets anyone claim an email
    key = login_identity(mallory)
    found = resolve(IdentityFrame(mallory, roster_active=True, login_rostered=key == "ann@uni.edu"))
    assert found.identity is None and "not on this class's roster" in found.refused


def test_two_john_smiths_in_the_app_do_not_share_a_draft(app_env):
    first = AppTest.from_file(APP, default_timeout=TIMEOUT)
    first.user = account("a1", name="John Smith")
    go(first.run(), "app_pages/position_problem.py")
    second = AppTest.from_file(APP, default_timeout=TIMEOUT)
    second.user = account("b2", name="John Smith")
    go(second.run(), "app_pages/position_problem.py")
    students = Store(app_env).students()
    assert len(students) == 2 and "John Smith" not in students, students
    labels = [text for text in texts(first.sidebar) + texts(second.sidebar) if text.startswith("Signed in as")]
    assert len(set(labels)) == 2 and all(label.startswith("Signed in as John Smith (oidc-") for label in labels)


# -- whose page is asking -----------------------------------------------------------------------------------


def test_the_cookie_counts_only_from_the_apps_own_origin():
    from poslab.signin import app_origin, same_origin

    app = app_origin("127.0.0.1:8501", False, None, None, None, ())
    assert same_origin("http://127.0.0.1:8501", app)
    assert not same_origin("http://127.0.0.1:9000", app)  # the same host, another port: another origin
    assert not same_origin("https://127.0.0.1:8501", app)
    assert not same_origin("http://localhost:8501", app)
    assert not same_origin(None, app) and not same_origin("null", app)
    plain = app_origin("class.uni.edu", False, "203.0.113.9", None, None, ())
    assert same_origin("http://class.uni.edu:80", plain) and same_origin("http://CLASS.uni.edu", plain)


def test_forwarded_scheme_and_host_are_believed_from_a_trusted_proxy_only():
    from poslab.signin import app_origin, same_origin

    behind = app_origin("127.0.0.1:8501", False, "::ffff:127.0.0.1", "https", "class.uni.edu", PROXY)
    assert same_origin("https://class.uni.edu", behind) and not same_origin("http://127.0.0.1:8501", behind)
    spoofed = app_origin("127.0.0.1:8501", False, "203.0.113.9", "https", "evil.example", PROXY)
    assert same_origin("http://127.0.0.1:8501", spoofed) and not same_origin("https://evil.example", spoofed)


def test_the_cookies_name_under_https_is_host_bound():
    from poslab.signin import SECURE_COOKIE, cookie_name

    assert (
        (cookie_name(False), cookie_name(True)) == (COOKIE, SECURE_COOKIE) == ("poslab_signin", "__Host-poslab_signin")
    )


# -- addresses and the password limit -------------------------------------------------------------------------


def test_an_ipv4_mapped_proxy_is_the_trusted_ipv4_proxy():
    assert client_address("::ffff:127.0.0.1", ["203.0.113.5"], PROXY) == "203.0.113.5"
    assert client_address("::ffff:203.0.113.7", ["198.51.100.1"], PROXY) == "203.0.113.7"  # not trusted
    assert client_address("127.0.0.1", ["198.51.100.1, ::ffff:127.0.0.1"], PROXY) == "198.51.100.1"
    from poslab.signin import normal_address

    assert normal_address("::ffff:127.0.0.1") == "127.0.0.1" and normal_address("::1") == "::1"


def test_the_named_instructors_are_parsed_in_one_place():
    from poslab.config import Settings, parse_people

    assert parse_people(" Ann@Uni.edu, s123;  bob@uni.edu ") == {"ann@uni.edu", "s123", "bob@uni.edu"}
    assert parse_people("") == frozenset()
    assert Settings.from_env({"POSLAB_INSTRUCTORS": "Ann@Uni.edu"}).instructors == {"ann@uni.edu"}
    assert Settings.from_env({"POSLAB_TAS": "Tom@Uni.edu s9"}).tas == {"tom@uni.edu", "s9"}


PASSWORD = "correct horse"
ANN, BOB = "ann@uni.edu", "bob@uni.edu"


@pytest.fixture
def class_with_an_instructor(app_env, monkeypatch):
    monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", PASSWORD)
    monkeypatch.setenv("POSLAB_INSTRUCTORS", ANN)
    store = Store(app_env)
    store.replace_roster(read_roster(f"name,email\nAnn,{ANN}\nBob,{BOB}\n".encode()).students)
    return store


def try_password(at: AppTest, typed: str) -> list[str]:
    at.main.text_input[0].input(typed)
    button(at, "Unlock").click().run()
    assert not at.exception, at.exception
    return [box.value for box in at.error]


def test_a_signed_in_student_gets_no_password_form_and_the_named_instructor_needs_none(
    class_with_an_instructor, monkeypatch
):
    store = class_with_an_instructor
    browser_signed_in(monkeypatch, store, BOB)  # Bob, a student: named in neither POSLAB_INSTRUCTORS nor POSLAB_TAS
    bob = go(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), "app_pages/instructor.py")
    assert any("neither an instructor nor a TA" in box.value for box in bob.info)
    assert not bob.main.text_input and not bob.header  # no password to guess, nothing of the class

    browser_signed_in(monkeypatch, store, ANN)
    ann = go(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), "app_pages/instructor.py")
    assert any(header.value == "The class" for header in ann.header)  # in by her sign-in, no password


def test_a_typed_name_is_never_a_named_instructor():
    from poslab.identity import named_instructor

    assert named_instructor(Identity(ANN, "roster"), frozenset({ANN}))
    assert named_instructor(Identity(ANN, "login"), frozenset({ANN}))
    assert not named_instructor(Identity(ANN, "name"), frozenset({ANN}))
    assert not named_instructor(Identity(BOB, "roster"), frozenset({ANN}))


def test_reissuing_a_link_ends_the_sign_ins_it_opened(app_env):
    store = Store(app_env)
    store.replace_roster(read_roster(f"name,email\nAnn,{ANN}\nBob,{BOB}\n".encode()).students)
    ann = store.sign_in_with_link(store.issue_links([ANN], timedelta(days=1))[ANN], timedelta(days=1)).session
    bob = store.sign_in_with_link(store.issue_links([BOB], timedelta(days=1))[BOB], timedelta(days=1)).session
    assert store.sign_in_state(ann).student == ANN
    store.issue_links([ANN], timedelta(days=1))  # her link leaked: a new one
    assert store.sign_in_state(ann).student is None
    assert store.sign_in_state(bob).student == BOB  # nobody else is signed out


def test_the_instructor_signs_one_student_out_and_their_link_still_works(class_with_an_instructor, monkeypatch):
    store = class_with_an_instructor
    ann_link, bob_link = (store.issue_links([key], timedelta(days=1))[key] for key in (ANN, BOB))
    ann = store.sign_in_with_link(ann_link, timedelta(days=1)).session
    bob = store.sign_in_with_link(bob_link, timedelta(days=1)).session
    at = go(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), "app_pages/instructor.py")
    assert try_password(at, PASSWORD) == []
    at.multiselect(key="roster-chosen").set_value([BOB]).run()
    button(at, "Sign the chosen out").click().run()
    assert any("Signed out 1 browser(s) of 1 student(s)" in box.value for box in at.success)
    assert store.sign_in_state(bob).student is None and store.sign_in_state(ann).student == ANN
    assert store.sign_in_with_link(bob_link, timedelta(days=1)).student == BOB  # the link still signs him in


# -- comments -----------------------------------------------------------------------------------------------


def test_a_comments_author_is_a_name_never_an_email():
    from poslab.identity import author_name

    assert author_name(ANN, {ANN: "Ann Lee"}) == "Ann Lee"
    assert author_name(BOB, {}) == "bob"
    assert author_name("Quinn", {}) == "Quinn"  # a typed name: the name itself
    key = login_identity(account("a1"))
    assert author_name(key, {}) == f"student {key[5:13]}" and "@" not in author_name(key, {})


def test_with_a_roster_comments_are_the_class_and_signed_with_names(class_with_an_instructor, monkeypatch):
    store = class_with_an_instructor
    store.add_comment(BOB, "position-problem", "Is the order lost in the sum?")
    visitor = go(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), "app_pages/position_problem.py")
    seen = " ".join(texts(visitor.main) + [item.value for item in visitor.caption])
    assert "Is the order lost" not in seen and BOB not in seen and "signed-in students only" in seen
    browser_signed_in(monkeypatch, store, ANN)
    member = go(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), "app_pages/position_problem.py")
    shown = texts(member.main)
    assert "Is the order lost in the sum?" in shown and any(text.startswith("Bob · ") for text in shown), shown
    assert not any(BOB in text for text in shown)
