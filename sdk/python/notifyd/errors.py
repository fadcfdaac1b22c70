"""The errors the SDK raises; all derive from NotifydError."""

from __future__ import annotations

import json
from typing import Any, Literal

WebhookErrorReason = Literal["headers", "timestamp", "signature", "secret"]


class NotifydError(Exception):
    """The base class of every error of this SDK."""


class ProblemError(NotifydError):
    """An error answer of notifyd: its ``application/problem+json`` body.

    The fields are those of SPEC "Errors": ``type``, ``title``, ``status``,
    ``detail``, ``code`` (``SVC-40000``, ``SVC-40100``, ...), ``instance``
    and ``timestamp``; ``body`` is the body as received. A non-problem
    error answer (a proxy's HTML page) gives the HTTP status, the reason
    phrase as title and an empty code.
    """

    def __init__(self, *, type: str, title: str, status: int, detail: str, code: str,
                 instance: str, timestamp: str, body: str) -> None:
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.code = code
        self.instance = instance
        self.timestamp = timestamp
        self.body = body
        super().__init__(f"{status} {code or title}: {detail or title}")

    @classmethod
    def from_response(cls, status: int, reason: str, body: str) -> ProblemError:
        try:
            parsed: Any = json.loads(body)
        except ValueError:
            parsed = None
        p: dict[str, Any] = parsed if isinstance(parsed, dict) else {}

        def text(key: str, default: str = "") -> str:
            v = p.get(key)
            return v if isinstance(v, str) else default

        st = p.get("status")
        return cls(type=text("type", "about:blank"), title=text("title", reason),
                   status=st if isinstance(st, int) and not isinstance(st, bool) else status,
                   detail=text("detail"), code=text("code"), instance=text("instance"),
                   timestamp=text("timestamp"), body=body)


class NotifydConnectionError(NotifydError):
    """No answer: every try failed on the network or timed out.

    ``attempts`` is the number of tries; ``__cause__`` the last failure.
    """

    def __init__(self, message: str, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


class WaitTimeoutError(NotifydError):
    """wait_for_notification gave up before the request was final."""


_WEBHOOK_MESSAGES: dict[str, str] = {
    "headers": "webhook: missing webhook-id, webhook-timestamp or webhook-signature header",
    "timestamp": "webhook: timestamp outside tolerance",
    "signature": "webhook: no matching signature",
    "secret": "webhook: secret is not whsec_ + base64",
}


class WebhookVerificationError(NotifydError):
    """A webhook delivery that must not be trusted; ``reason`` says why."""

    def __init__(self, reason: WebhookErrorReason) -> None:
        super().__init__(_WEBHOOK_MESSAGES[reason])
        self.reason: WebhookErrorReason = reason
