"""Interactive replies: Slack's clicks on the buttons of a message's or a rotation day's post
(the `interactions` target).

A click is untrusted input. It is taken only when Slack's signature over the raw body is
valid, at most 5 minutes old and not seen before (`signature`); its button value must name
a delivery of ours and an action of the catalog that post was sent with (`click`, `posted`,
`record`). The first answer wins by a Firestore create, never a read then a write
(`record`); a rotation's "Skip me today" hands the turn on in that same commit (`skip`).
The click is answered as soon as that is decided, within Slack's 3 s (`target`); the Slack
message is updated to show the answers off the request path, by the click's Pub/Sub message
or the next tick (`handoff`, `show`)."""
