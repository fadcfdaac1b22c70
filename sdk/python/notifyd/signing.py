"""The Notification API's request signature (API-DECISIONS section 3), as
the Go client (client/client.go) computes it."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time


def _bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def body_sha256(body: str | bytes = b"") -> str:
    """Lower-case hex SHA-256 of the raw body (of b"" when there is none)."""
    return hashlib.sha256(_bytes(body)).hexdigest()


def string_to_sign(method: str, target: str, timestamp: str, nonce: str, body: str | bytes = b"") -> str:
    """METHOD (upper case), the request target exactly as sent (path plus
    ``?query``), X-Timestamp, X-Nonce and the body's hex SHA-256, joined by
    line feeds."""
    return "\n".join([method.upper(), target, timestamp, nonce, body_sha256(body)])


def sign(hmac_secret: str, method: str, target: str, timestamp: str, nonce: str, body: str | bytes = b"") -> str:
    """The X-Signature value: lower-case hex HMAC-SHA256(hmac_secret, string to sign)."""
    msg = string_to_sign(method, target, timestamp, nonce, body).encode("utf-8")
    return hmac.new(hmac_secret.encode("utf-8"), msg, hashlib.sha256).hexdigest()


def new_nonce() -> str:
    """A random nonce: 32 hex characters."""
    return secrets.token_hex(16)


def sign_headers(api_key: str, hmac_secret: str, method: str, target: str, body: str | bytes = b"", *,
                 timestamp: int | str | None = None, nonce: str | None = None) -> dict[str, str]:
    """The four signature headers of one request (now and a fresh nonce
    unless given). Every retry must be signed anew."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    n = new_nonce() if nonce is None else nonce
    return {
        "X-API-Key": api_key,
        "X-Timestamp": ts,
        "X-Nonce": n,
        "X-Signature": sign(hmac_secret, method, target, ts, n, body),
    }
