"""Webhook signature verification, as the Go client's VerifyWebhook
(client/webhook.go) does it: the Standard Webhooks convention."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

from .errors import WebhookVerificationError
from .models import WebhookEvent

# Standard, padded base64, as Go's base64.StdEncoding reads it.
_STRICT_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_INTEGER = re.compile(r"[+-]?[0-9]+")


def _header(headers: Mapping[str, Any], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            if isinstance(value, (list, tuple)):
                value = value[0] if value else ""
            return value if isinstance(value, str) else ""
    return ""


def verify_webhook_signature(secret: str, headers: Mapping[str, Any], body: bytes | str, *,
                             tolerance: float = 300, now: float | datetime | None = None) -> None:
    """Checks a webhook delivery, raising WebhookVerificationError.

    webhook-timestamp must be within ``tolerance`` seconds of now (0 or
    less means 300), and one of the space-separated ``v1,<base64>``
    entries of webhook-signature must equal base64(HMAC-SHA256(key, id +
    "." + timestamp + "." + body)), key being the bytes of the base64 after
    ``whsec_`` in secret. ``body`` must be the raw bytes received, before
    any JSON parsing. During a secret rotation deliveries carry two
    signatures, so the old or the new secret verifies. ``headers`` is any
    mapping (a dict, ``http.client.HTTPMessage``, a framework's headers);
    names are matched without regard to case.
    """
    encoded = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
    if not _STRICT_BASE64.fullmatch(encoded):
        raise WebhookVerificationError("secret")
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("secret") from None
    if not key:
        raise WebhookVerificationError("secret")
    msg_id = _header(headers, "webhook-id")
    ts = _header(headers, "webhook-timestamp")
    sigs = _header(headers, "webhook-signature")
    if not msg_id or not ts or not sigs:
        raise WebhookVerificationError("headers")
    if not _INTEGER.fullmatch(ts):
        raise WebhookVerificationError("timestamp")
    if tolerance <= 0:
        tolerance = 300
    if now is None:
        now_s = time.time()
    elif isinstance(now, datetime):
        now_s = now.timestamp()
    else:
        now_s = float(now)
    age = now_s - int(ts)
    if age > tolerance or age < -tolerance:
        raise WebhookVerificationError("timestamp")
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    mac = hmac.new(key, f"{msg_id}.{ts}.".encode("utf-8") + raw, hashlib.sha256)
    # Compared as the text notifyd sends (standard base64, padded).
    want = base64.b64encode(mac.digest())
    for entry in sigs.split():
        version, comma, sig = entry.partition(",")
        if comma and version == "v1" and hmac.compare_digest(sig.encode("utf-8"), want):
            return
    raise WebhookVerificationError("signature")


def verify_webhook(secret: str, headers: Mapping[str, Any], body: bytes | str, *,
                   tolerance: float = 300, now: float | datetime | None = None) -> WebhookEvent:
    """verify_webhook_signature, then the delivery's body parsed."""
    verify_webhook_signature(secret, headers, body, tolerance=tolerance, now=now)
    return cast(WebhookEvent, json.loads(body))
