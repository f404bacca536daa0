"""User text must never become HTML: no file in web/ uses an HTML sink, and the page itself has
no inline script, style or event handler (the CSP would block them anyway)."""

from __future__ import annotations

import re

from tests.fixtures.runtime import ROOT

WEB = ROOT / "web"
SINKS = re.compile(
    r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|srcdoc|\beval\s*\(|new Function"
    r"|DOMParser|createContextualFragment"
)


def test_no_script_in_web_uses_an_html_sink() -> None:
    scripts = sorted(WEB.glob("*.js"))
    assert scripts, "web/ has no scripts"
    found = [
        f"{path.name}:{number}: {line.strip()}"
        for path in scripts
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if SINKS.search(line)
    ]
    assert found == []


def test_the_page_has_no_inline_script_style_or_handler() -> None:
    html = (WEB / "index.html").read_text()
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", html) == []
    assert re.findall(r"<style|\sstyle=|\son[a-z]+=", html, re.IGNORECASE) == []
