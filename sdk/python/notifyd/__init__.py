"""notifyd's Python SDK: signed Notification API calls, recipients and
preferences, OTP, workflow triggers and topics, inbox recipient tokens, and webhook
verification.
Standard library only."""

from .client import FINAL_STATUSES, Notifyd
from .errors import (
    NotifydConnectionError,
    NotifydError,
    ProblemError,
    WaitTimeoutError,
    WebhookVerificationError,
)
from .inbox import MAX_INBOX_TOKEN_TTL_SECONDS, mint_inbox_token
from .models import *  # noqa: F401,F403 (the TypedDict models)
from .signing import body_sha256, new_nonce, sign, sign_headers, string_to_sign
from .webhook import verify_webhook, verify_webhook_signature

__version__ = "0.1.0"

__all__ = [
    "FINAL_STATUSES", "Notifyd", "NotifydConnectionError", "NotifydError", "ProblemError", "WaitTimeoutError",
    "WebhookVerificationError", "body_sha256", "new_nonce", "sign", "sign_headers", "string_to_sign",
    "verify_webhook", "verify_webhook_signature", "mint_inbox_token", "MAX_INBOX_TOKEN_TTL_SECONDS",
]
