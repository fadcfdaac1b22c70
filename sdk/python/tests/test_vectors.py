"""The golden vectors (sdk/testdata/vectors.json), computed by the Go
implementation: this SDK must sign and verify exactly as Go does."""

from __future__ import annotations

import json
import unittest
from datetime import datetime, timezone
from email.message import Message

from notifyd import (
    WebhookVerificationError,
    body_sha256,
    mint_inbox_token,
    sign,
    sign_headers,
    string_to_sign,
    verify_webhook,
    verify_webhook_signature,
)

from .helpers import read_json

VECTORS = read_json("testdata/vectors.json")


class SigningVectors(unittest.TestCase):
    def test_every_kind_is_present(self) -> None:
        self.assertGreaterEqual(len(VECTORS["signing"]), 5)
        verify = VECTORS["webhooks"]["verify"]
        self.assertGreaterEqual(len([c for c in verify if c["valid"]]), 3)
        self.assertGreaterEqual(len([c for c in verify if not c["valid"]]), 10)

    def test_signing(self) -> None:
        for v in VECTORS["signing"]:
            with self.subTest(v["name"]):
                self.assertEqual(body_sha256(v["body"]), v["bodySha256"])
                self.assertEqual(string_to_sign(v["method"], v["target"], v["timestamp"], v["nonce"], v["body"]),
                                 v["stringToSign"])
                self.assertEqual(sign(v["hmacSecret"], v["method"], v["target"], v["timestamp"], v["nonce"], v["body"]),
                                 v["headers"]["X-Signature"])
                headers = sign_headers(v["apiKey"], v["hmacSecret"], v["method"], v["target"],
                                       v["body"].encode("utf-8"), timestamp=int(v["timestamp"]), nonce=v["nonce"])
                self.assertEqual(headers, v["headers"])


class WebhookVectors(unittest.TestCase):
    def test_signed_by_notifyd(self) -> None:
        for v in VECTORS["webhooks"]["sign"]:
            with self.subTest(v["name"]):
                headers = {"webhook-id": v["id"], "webhook-timestamp": str(v["timestamp"]),
                           "webhook-signature": v["signature"]}
                event = verify_webhook(v["secret"], headers, v["body"], now=v["timestamp"])
                self.assertEqual(event, json.loads(v["body"]))
                # As bytes, through an email.message.Message (what http.server gives) and at a datetime.
                msg = Message()
                for k, val in headers.items():
                    msg[k.title()] = val
                verify_webhook_signature(v["secret"], msg, v["body"].encode("utf-8"),
                                         now=datetime.fromtimestamp(v["timestamp"], timezone.utc))

    def test_verify(self) -> None:
        for c in VECTORS["webhooks"]["verify"]:
            with self.subTest(c["name"]):
                def run() -> None:
                    verify_webhook_signature(c["secret"], c["headers"], c["body"], now=c["now"],
                                             tolerance=c["toleranceSeconds"])
                if c["valid"]:
                    run()
                    continue
                with self.assertRaises(WebhookVerificationError) as ctx:
                    run()
                self.assertEqual(ctx.exception.reason, c["error"])


if __name__ == "__main__":
    unittest.main()


class InboxTokenVectors(unittest.TestCase):
    def test_minted_as_the_server_mints(self) -> None:
        self.assertGreaterEqual(len(VECTORS["inboxTokens"]), 2)
        for v in VECTORS["inboxTokens"]:
            with self.subTest(v["name"]):
                args = (v["secret"], v["workspaceId"], v["externalId"])
                self.assertEqual(mint_inbox_token(*args, v["exp"]), v["token"])
                at = datetime.fromtimestamp(v["exp"] + 0.5, tz=timezone.utc)
                self.assertEqual(mint_inbox_token(*args, at), v["token"], "a datetime, to the second")

    def test_naive_datetime_refused(self) -> None:
        with self.assertRaises(ValueError):
            mint_inbox_token("s", "w", "u", datetime(2030, 1, 1))
