"""What user text becomes at Slack: escaped, and never a broadcast unless allowed."""

from __future__ import annotations

import pytest

from formatting.slack_text import to_slack

WJ = "\u2060"


@pytest.mark.parametrize(
    ("source", "sent"),
    [
        ("a & b < c > d", "a &amp; b &lt; c &gt; d"),
        ("<!channel> now", f"@{WJ}channel now"),
        ("<!here|here> and <!everyone>", f"@{WJ}here and @{WJ}everyone"),
        ("ping @here and @Channel", f"ping @{WJ}here and @{WJ}Channel"),
        ("hi <@U123ABC> in <#C999|ops>", "hi <@U123ABC> in <#C999|ops>"),
        (
            "<!subteam^S123|@oncall> see <https://x.test/a?b=1|docs>",
            "<!subteam^S123|@oncall> see <https://x.test/a?b=1|docs>",
        ),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("<javascript:alert(1)|click>", "&lt;javascript:alert(1)|click&gt;"),
    ],
)
def test_text_is_escaped_and_broadcasts_neutralised(source, sent):
    assert to_slack(source).text == sent


def test_broadcasts_pass_when_the_message_allows_them():
    assert to_slack("<!here> & @channel", allow_broadcast=True).text == "<!here> &amp; @channel"
