"""`responses/{delivery_id}:{user id}` (or `responses/{delivery_id}` when the message sets
`one_answer`): a person's answer to a message's buttons (CONTRACT.md). Created once, by the
`interactions` target; the create is what makes the first answer win."""

from __future__ import annotations

import enum


class ResponseField(enum.StrEnum):
    DELIVERY_ID = "delivery_id"
    MESSAGE_ID = "message_id"  # the answer to a message's post; or, for a rotation day's:
    ROTATION_ID = "rotation_id"
    USER = "user"  # who clicked
    ACTION_ID = "action_id"  # an id of the catalog the post was sent with
    ANSWERED_AT = "answered_at"
    # True until the Slack message shows this answer (chat.update); the tick retries it.
    PENDING_UPDATE = "pending_update"
    UPDATE_ERROR = "update_error"  # the last failed chat.update's Slack code
    # Set instead of `pending_update` when Slack refuses for good to update the post (e.g.
    # `message_not_found`): its code. The answer stays recorded; the post never shows it.
    NOT_SHOWN = "not_shown"


class SeenSignatureField(enum.StrEnum):
    """`interaction_signatures/{sha256 of signature}`: a signed request already taken. The
    collection's TTL policy on `expires_at` deletes it once the signature is stale anyway."""

    EXPIRES_AT = "expires_at"
