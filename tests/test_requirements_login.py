"""What Streamlit's login imports is installed by requirements.txt alone, not by the dev requirements.

Streamlit's OIDC login (``st.login``) imports ``authlib`` and, through Authlib's Starlette client,
``httpx``; neither is a dependency of streamlit. The pins of requirements.txt are resolved over
the installed distributions' own requirements (``importlib.metadata``: each pin's extras, no
others, and no requirement whose environment marker is false here), and both must be reached.
"""

from __future__ import annotations

import importlib
import re
from importlib import metadata

from packaging.requirements import Requirement

from tests.conftest import ROOT

LOGIN_IMPORTS = {"authlib": "authlib.integrations.starlette_client", "httpx": "httpx"}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path) -> list[Requirement]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [Requirement(line) for line in lines if line and not line.startswith("-")]


def reached(roots: list[Requirement]) -> set[str]:
    """Every distribution the roots need, with their extras, as the installed metadata says."""
    seen: set[tuple[str, frozenset[str]]] = set()
    found: set[str] = set()
    todo = [(canonical(pin.name), frozenset(pin.extras)) for pin in roots]
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        found.add(name)
        try:
            needs = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in needs:
            need = Requirement(text)
            active = need.marker is None or any(need.marker.evaluate({"extra": extra}) for extra in (extras or {""}))
            if active:
                todo.append((canonical(need.name), frozenset(need.extras)))
    return found


def test_requirements_txt_alone_brings_what_streamlits_login_imports():
    runtime = reached(pins(ROOT / "requirements.txt"))
    assert "streamlit" in runtime
    missing = sorted(set(LOGIN_IMPORTS) - runtime)
    assert not missing, f"requirements.txt does not bring {missing}: Streamlit's login fails without them"
    for module in LOGIN_IMPORTS.values():
        importlib.import_module(module)


def test_the_resolver_does_not_see_dev_only_packages():
    runtime = reached(pins(ROOT / "requirements.txt"))
    assert "playwright" not in runtime and "pytest-xdist" not in runtime
