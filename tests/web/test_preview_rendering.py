"""The live preview shows the API's Slack mrkdwn the way Slack shows it, built from text nodes:
bold, italics, strike, links, mentions, code, code blocks, lists, quotes, and broadcast words
as the API neutralised them."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.web.form import fill_when

SOURCE = """**Deploy** _today_ ~~tomorrow~~, see [the plan](https://example.com/plan?a=1&b=2)
Ask <@U024BE7LH> in <#C0123ABCD>, @here; keep `x < y && z`

- first
- second

> quoted *words*

```
if a < b:
    print("<b>")
```"""


def test_the_preview_renders_slack_mrkdwn_as_slack_shows_it(page: Page) -> None:
    page.get_by_label("Channel", exact=True).first.fill("C0123ABCD")
    page.get_by_label("Timezone", exact=True).fill("UTC")
    fill_when(page, "2027-01-04 10:00")
    page.get_by_label("Message", exact=True).fill(SOURCE)
    slack = page.locator("aside.preview .slack")
    expect(slack.locator("strong").first).to_have_text("Deploy")
    expect(slack.locator("em").first).to_have_text("today")
    expect(slack.locator("s")).to_have_text("tomorrow")
    link = slack.get_by_role("link", name="the plan")
    expect(link).to_have_attribute("href", "https://example.com/plan?a=1&b=2")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(slack.locator(".mention")).to_have_text(["@U024BE7LH", "#C0123ABCD"])
    # The API neutralised the broadcast (a word joiner after "@"): shown as text, no mention.
    expect(slack).to_contain_text("@\u2060here")
    expect(slack.locator(":scope > .line code")).to_have_text("x < y && z")
    expect(slack.locator(".line").filter(has_text="first")).to_have_text("• first")
    expect(slack.locator("blockquote")).to_have_text("quoted words")
    expect(slack.locator("blockquote em, blockquote strong")).to_have_count(1)
    expect(slack.locator("pre code")).to_have_text('if a < b:\n    print("<b>")')
    assert page.locator("aside.preview b").count() == 0
