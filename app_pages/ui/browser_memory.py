"""What the browser keeps for the student across reloads and pages: one small script, app.py runs it.

* The theme: Streamlit keeps the settings menu's choice in localStorage under a key of the path the
  tab was opened on (``stActiveTheme-/rope-v2``), so a reload on another page came back light. The
  script copies each choice to every page's key (and to ``THEME_KEY``), and repaints the code
  editor's theme at once (it follows the app's at its next run otherwise). A choice made before
  the script came (the tab just opened) is spread when it comes.
* The draft: the editor sends its text after a pause in typing (``editor_look.SAVE_AFTER_MS``) or
  when it loses focus. A reload or a closed tab before the pause ended lost the last words; the
  script takes the focus from the editor as the page is left (``pagehide``, a hidden tab), and the
  editor sends its text then. That save can reach the server after the reloaded page read the
  draft, so the script also keeps the text in localStorage (``UNSENT_PREFIX``, under a hash of
  who is signed in and the address) and, on the reloaded page, puts it back in the editor if it
  differs (the editor then sends it as if typed). Another account on the browser never gets it, and
  a page with nobody signed in (after a sign-out) clears every kept text.
* Ctrl+Enter in the editor runs the public tests (``workspace.take_run_request``).
* The name (typed-name mode): the name is remembered (``NAME_KEY``); a bare address opens as that
  student (``?student=``), and "Change name" forgets it.

The script is installed once per tab; the run's own wish about the name comes each run.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

import streamlit as st

from app_pages.ui.dark_theme import ACE_THEMES
from poslab.lessons import all_lessons

THEME_KEY = "poslab-theme"
NAME_KEY = "poslab-student"
UNSENT_PREFIX = "poslab-unsent:"  # + the page's address: the editor's text as the page was left
UNSENT_FOR_MS = 120_000  # a reload later than this finds the server's copy, not the browser's
NameWish = Literal["remember", "forget", "restore", "leave"]  # leave: the browser keeps what it has

SCRIPT = """
<script>
(() => {
  const wish = %(wish)s;
  const w = window.parent && window.parent.document ? window.parent : window;
  const store = w.localStorage;
  w.__poslabOwner = wish.owner;  // whose text the editor holds (a hash of the identity), this run
  if (!wish.owner && wish.name !== 'restore')  // nobody signed in (e.g. after a sign-out): keep none
    for (const key of Object.keys(store)) if (key.startsWith('%(unsent_prefix)s')) store.removeItem(key);
  const editors = () => [...w.document.querySelectorAll('iframe[title*="code_editor"]')]
    .map(frame => { try { const ace = frame.contentDocument.querySelector('.ace_editor');
                          return ace && ace.env && ace.env.editor; } catch (e) { return null; } })
    .filter(Boolean);
  if (!w.__poslabMemory) {
    w.__poslabMemory = true;
    const setItem = Storage.prototype.setItem;
    const repaint = () => {
      const background = getComputedStyle(w.document.querySelector('[data-testid="stApp"]')).backgroundColor;
      const [r, g, b] = (background.match(/\\d+/g) || [255, 255, 255]).map(Number);
      const dark = 0.2126 * r + 0.7152 * g + 0.0722 * b < 128;
      for (const editor of editors()) editor.setTheme('ace/theme/' + (dark ? '%(dark)s' : '%(light)s'));
    };
    Storage.prototype.setItem = function (key, value) {
      setItem.call(this, key, value);
      if (this === store && /^stActiveTheme-.*-v\\d+$/.test(key) && key !== '%(theme_key)s') {
        const version = key.match(/-v\\d+$/)[0];
        const base = w.location.pathname.replace(new RegExp('/(' + wish.paths.join('|') + ')/?$'), '').replace(/\\/$/, '');
        for (const path of ['', ...wish.paths]) setItem.call(this, `stActiveTheme-${base}/${path}${version}`, value);
        setItem.call(this, '%(theme_key)s', value);
        setTimeout(repaint, 300);
      }
    };
    // A choice made in the moment before this script came (the tab just opened) sits only under the
    // key of the page the tab was opened on, which is this page still: spread it like a later one.
    const openedPrefix = `stActiveTheme-${w.location.pathname}-v`;
    const opened = Object.keys(store).find(key => key.startsWith(openedPrefix) && /^\\d+$/.test(key.slice(openedPrefix.length)));
    if (opened && store.getItem(opened) !== store.getItem('%(theme_key)s')) store.setItem(opened, store.getItem(opened));
    // The text as the page goes, kept in the browser too: the blur's save can reach the server after
    // the reloaded page has read the draft. Keyed by whose it is and the address (page, exercise):
    // another account signed in on this browser never gets it.
    const unsentKey = () => `%(unsent_prefix)s${w.__poslabOwner}:${w.location.pathname}${w.location.search}`;
    const flush = () => {
      const open = editors();
      if (open.length === 1 && w.__poslabOwner)
        store.setItem(unsentKey(), JSON.stringify({text: open[0].getValue(), at: Date.now()}));
      for (const editor of open) editor.blur();
    };
    const restore = tries => {
      if (!w.__poslabOwner) return;
      const kept = JSON.parse(store.getItem(unsentKey()) || 'null');
      if (!kept || Date.now() - kept.at > %(unsent_ms)d) { store.removeItem(unsentKey()); return; }
      const open = editors();
      if (open.length !== 1) { if (tries > 0) setTimeout(() => restore(tries - 1), 250); return; }
      store.removeItem(unsentKey());
      if (open[0].getValue() !== kept.text) open[0].setValue(kept.text, 1);  // the editor sends it after its pause
    };
    restore(120);
    // Ctrl+Enter (Command+Enter) runs the public tests: the editor's "submit" command sends its text
    // with that type. The "sublime" shortcuts' own Ctrl+Enter ("add a line after") sits in a keyboard
    // handler Ace asks first, so the key is taken before it reaches Ace.
    const submitKey = event => event.key === 'Enter' && (event.ctrlKey || event.metaKey) && !event.shiftKey && !event.altKey;
    setInterval(() => {
      for (const editor of editors()) {
        if (editor.__poslabSubmit) continue;
        editor.__poslabSubmit = true;
        editor.container.addEventListener('keydown', event => {
          if (!submitKey(event)) return;
          event.preventDefault();
          event.stopPropagation();
          editor.execCommand('submit');
        }, true);
      }
    }, 500);
    w.addEventListener('pagehide', flush);
    w.addEventListener('beforeunload', flush);
    w.document.addEventListener('visibilitychange', () => { if (w.document.visibilityState === 'hidden') flush(); });
  }
  if (wish.name === 'remember') store.setItem('%(name_key)s', wish.student);
  if (wish.name === 'forget') store.removeItem('%(name_key)s');
  const remembered = store.getItem('%(name_key)s');
  if (wish.name === 'restore' && remembered && !w.__poslabRestored) {
    w.__poslabRestored = true;  // once per tab: a failed name does not loop
    const address = new URL(w.location.href);
    address.searchParams.set('student', remembered);
    w.location.replace(address.toString());
  }
})();
</script>
"""


def page_paths() -> list[str]:
    """Every page's URL path (app.py's router gives each lesson its id as its path)."""
    return [lesson.id for lesson in all_lessons()] + ["exercise", "progress", "instructor"]


def owner_tag(identity_key: str | None) -> str | None:
    """What the browser keeps unsent text under: a hash of the identity, never the key itself."""
    return hashlib.sha256(identity_key.encode("utf-8")).hexdigest()[:16] if identity_key else None


def remember(name: NameWish, student: str | None = None, owner: str | None = None) -> None:
    """Install the script (once per tab) and tell it this run's wish about the name, and who is
    signed in (``owner``: the identity's key; None when nobody is)."""
    wish = json.dumps(
        {
            "paths": page_paths(),
            "name": name,
            "student": student if name == "remember" else None,
            "owner": owner_tag(owner),
        }
    )
    wish = wish.replace("</", "<\\/")
    body = SCRIPT % {
        "wish": wish,
        "dark": ACE_THEMES["dark"],
        "light": ACE_THEMES["light"],
        "theme_key": THEME_KEY,
        "name_key": NAME_KEY,
        "unsent_prefix": UNSENT_PREFIX,
        "unsent_ms": UNSENT_FOR_MS,
    }
    st.html(body, unsafe_allow_javascript=True)
