"""Recipient tokens of the in-app inbox, minted offline with the
workspace's inbox secret (``POST /v1/inbox-settings/rotate-secret`` shows
it once): the same token as ``POST /v1/recipients/{externalId}/inbox-token``
answers, byte for byte (sdk/testdata/vectors.json, ``inboxTokens``)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import datetime

MAX_INBOX_TOKEN_TTL_SECONDS = 24 * 60 * 60
"""The longest a recipient token may live (the server refuses longer ones)."""


def mint_inbox_token(secret: str, workspace_id: str, external_id: str, expires: datetime | int | float) -> str:
    """A recipient token naming the profile ``external_id`` of the workspace
    ``workspace_id``, expiring at ``expires`` (an aware datetime, or Unix
    seconds), at most 24 hours ahead. Give it to that person's browser or
    app for ``/v1/inbox``; it stops working when it expires or the inbox
    secret rotates. Keep the secret in your backend."""
    if isinstance(expires, datetime):
        if expires.tzinfo is None:
            raise ValueError("expires must be an aware datetime (with a time zone)")
        exp = int(expires.timestamp())
    else:
        exp = int(expires)
    # The payload as Go's encoding/json writes it ({ws, sub, exp}, no
    # spaces, UTF-8, <, > and & escaped), so the token equals the server's.
    payload = json.dumps({"ws": workspace_id, "sub": external_id, "exp": exp}, separators=(",", ":"), ensure_ascii=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        payload = payload.replace(ch, esc)
    head = "v1." + _b64url(payload.encode("utf-8"))
    mac = hmac.new(secret.encode("utf-8"), head.encode("ascii"), hashlib.sha256).digest()
    return head + "." + _b64url(mac)


def _b64url(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).decode("ascii").rstrip("=")
