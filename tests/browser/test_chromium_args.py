"""The browser tests' Chromium flags: Playwright's own disabled features kept, the omnibox's popups gone."""

from __future__ import annotations

import re
from pathlib import Path

from tests.browser.conftest import OMNIBOX_POPUPS, PLAYWRIGHT_DISABLED_FEATURES


def playwright_disabled_features() -> list[str]:
    """The features the installed Playwright disables in Chromium (read from its driver's bundle)."""
    import playwright

    bundle = Path(playwright.__file__).parent / "driver" / "package" / "lib" / "coreBundle.js"
    found = re.search(r"disabledFeatures = \[(.*?)\]\.filter\(Boolean\)", bundle.read_text(encoding="utf-8"), re.S)
    assert found, f"no list of disabled features in {bundle}: Playwright changed how it launches Chromium"
    return re.findall(r'"(\w+)"', re.sub(r"//[^\n]*", "", found.group(1)))


def test_our_disabled_features_keep_playwrights():
    theirs = playwright_disabled_features()
    assert len(theirs) >= 5, theirs
    assert set(theirs) <= set(PLAYWRIGHT_DISABLED_FEATURES), sorted(set(theirs) - set(PLAYWRIGHT_DISABLED_FEATURES))


def test_a_new_context_starts_no_browser_ui_page(playwright_browser):
    """Each context used to start the omnibox's popups (chrome://omnibox-popup.top-chrome/...)."""
    context = playwright_browser.new_context()
    try:
        context.new_page().goto("data:text/html,<h1>one page</h1>")
        session = playwright_browser.new_browser_cdp_session()
        targets = session.send("Target.getTargets")["targetInfos"]
        session.detach()
    finally:
        context.close()
    assert [target for target in targets if target["type"] == "page"], targets
    browser_ui = [target["url"] for target in targets if target["type"] != "page"]
    assert not browser_ui, f"{browser_ui} started beside the page ({OMNIBOX_POPUPS} are disabled)"
