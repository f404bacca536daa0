"""Interactive replies: Slack's clicks on a message's buttons (the `interactions` target).

A click is untrusted input. It is taken only when Slack's signature over the raw body is
valid, at most 5 minutes old and not seen before (`signature`); its button value must name
a delivery of ours and an action of that message's stored catalog (`click`, `record`). The
first answer wins by a Firestore create, never a read then a write (`record`); the Slack
message is then updated to show the answers, retried by the tick until it is (`show`)."""
