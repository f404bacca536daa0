"""axe-core (the pinned npm package in tests/web/package-lock.json; `make` installs it with
`npm ci`) run inside a page. It is injected through Playwright's `evaluate`, which the
DevTools protocol runs outside the page's Content-Security-Policy: the page is checked as it
is served, with its CSP unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Page

AXE_JS = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
# What a person using a screen reader or a keyboard cannot get past; the rest is reported by
# axe as moderate or minor and left to review.
BLOCKING = ("serious", "critical")
# Off by default in axe (experimental), on here: a control's visible words must be part of
# its accessible name, so a person using speech input can say what they see.
_RUN = """async () => {
  const rules = { "label-content-name-mismatch": { enabled: true } };
  const result = await axe.run(document, { resultTypes: ["violations"], rules });
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    targets: v.nodes.map((n) => n.target.join(" ")),
  }));
}"""


def violations(page: Page) -> list[dict[str, Any]]:
    """The serious and critical violations axe finds in the page as it is now."""
    if not AXE_JS.is_file():
        raise RuntimeError(f"{AXE_JS} is missing: run `make unit` (or `npm ci` in tests/web)")
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE_JS.read_text())
    found: list[dict[str, Any]] = page.evaluate(_RUN)
    return [v for v in found if v["impact"] in BLOCKING]


def describe(found: list[dict[str, Any]]) -> str:
    """One line a violation: rule id, impact, what it means, and the elements it is on."""
    return "\n".join(
        f"{v['id']} ({v['impact']}): {v['help']}; on {', '.join(v['targets'])}" for v in found
    )
