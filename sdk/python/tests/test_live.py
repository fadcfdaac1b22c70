"""Against a running notifyd (``notifyd serve --demo``; sdk/run-live-tests.sh
starts one): NOTIFYD_URL, NOTIFYD_API_KEY and NOTIFYD_HMAC_SECRET as the
demo prints them. Optional: NOTIFYD_SIM_URL (the demo's simulator, to read
the OTP code) and NOTIFYD_DEMO_EMAIL / NOTIFYD_DEMO_PASSWORD (the demo's
dashboard login, to create a category, a real webhook, and the template
and workflows the workflow test triggers). Without
NOTIFYD_URL every test here skips; NOTIFYD_REQUIRE_LIVE=1 makes anything
missing a failure."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import time
import unittest
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from notifyd import Notifyd, ProblemError, WebhookVerificationError, WorkflowRun, mint_inbox_token, verify_webhook

from .helpers import read_json, skip_or_fail

ENV = os.environ
LIVE = all(ENV.get(k) for k in ("NOTIFYD_URL", "NOTIFYD_API_KEY", "NOTIFYD_HMAC_SECRET"))
NO_LIVE = "NOTIFYD_URL, NOTIFYD_API_KEY and NOTIFYD_HMAC_SECRET are not set (run sdk/run-live-tests.sh)"
SIM_URL = ENV.get("NOTIFYD_SIM_URL", "").rstrip("/")
HAS_DASHBOARD = bool(ENV.get("NOTIFYD_DEMO_EMAIL") and ENV.get("NOTIFYD_DEMO_PASSWORD"))
RUN = f"py{int(time.time() * 1000):x}{secrets.randbelow(1000)}"
WAIT = 30.0


def phone() -> str:
    """A phone number no other test uses (OTP limits count per recipient)."""
    return f"010{secrets.randbelow(10**8):08d}"


def fetch_json(method: str, url: str, body: Any = None, token: str | None = None) -> Any:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers, method=method), timeout=30) as r:
        raw = r.read()
    return json.loads(raw) if raw else None


class Dashboard:
    """Dashboard API calls as the demo workspace's owner."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        login = fetch_json("POST", f"{base_url}/v1/auth/login",
                           {"email": ENV["NOTIFYD_DEMO_EMAIL"], "password": ENV["NOTIFYD_DEMO_PASSWORD"]})
        self.token = login["accessToken"]

    def __call__(self, method: str, path: str, body: Any = None) -> Any:
        return fetch_json(method, self.base_url + path, body, self.token)


class Live(unittest.TestCase):
    c: Notifyd

    def setUp(self) -> None:
        if not LIVE:
            skip_or_fail(self, NO_LIVE)
        self.c = Notifyd.from_env()

    def partly_skipped(self, reason: str) -> None:
        """Notes a part left out, or fails when NOTIFYD_REQUIRE_LIVE=1."""
        if ENV.get("NOTIFYD_REQUIRE_LIVE") == "1":
            self.fail(f"NOTIFYD_REQUIRE_LIVE=1 but {reason}")
        print(f"\n  partly skipped: {reason}")

    def wait_sent(self, request_id: str) -> dict[str, Any]:
        r = self.c.wait_for_notification(request_id, timeout=WAIT)
        self.assertEqual(r["status"], "sent", r)
        return dict(r)

    def test_send_then_poll_until_sent_and_an_idempotent_repeat(self) -> None:
        key = f"{RUN}-once"
        r = self.c.send({"channel": "sms", "recipient": {"address": phone()}, "content": {"text": "hi from the Python SDK"},
                         "idempotencyKey": key, "metadata": {"sdk": "python"}})
        self.assertEqual((r["status"], r["deduplicated"]), ("queued", False))
        self.assertGreaterEqual(len(self.wait_sent(r["requestId"])["attempts"]), 1)
        again = self.c.send({"channel": "sms", "recipient": {"address": "010-0000-0000"}, "content": {"text": "x"},
                             "idempotencyKey": key})
        self.assertEqual((again["deduplicated"], again["requestId"]), (True, r["requestId"]))

    def test_bulk_send(self) -> None:
        r = self.c.send_bulk([{"channel": "sms", "recipient": {"address": phone()}, "content": {"text": f"bulk {i}"}}
                              for i in range(3)])
        self.assertEqual((r["total"], r["queued"], len(r["items"])), (3, 3, 3))
        for item in r["items"]:
            self.wait_sent(item["requestId"])

    def test_template_scheduled_cancel_and_typed_problems(self) -> None:
        tpl = self.c.send({"channel": "msgr_alimtalk", "recipient": {"address": phone()},
                           "content": {"templateCode": "DEMO_WELCOME", "templateVariables": {"name": "Kim"}}})
        self.wait_sent(tpl["requestId"])

        at = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        s = self.c.send({"channel": "email", "recipient": {"address": "later@example.com"},
                         "content": {"title": "Later", "text": "later"}, "scheduledAt": at})
        self.assertIsNotNone(s["scheduledAt"])
        first = self.c.cancel_notification(s["requestId"])
        self.assertEqual((first["canceled"], first["status"]), (True, "canceled"))
        second = self.c.cancel_notification(s["requestId"])
        self.assertEqual((second["canceled"], second["status"]), (False, "canceled"))
        self.assertEqual(self.c.get_notification(s["requestId"])["finalErrorCode"], "canceled_by_api")

        with self.assertRaises(ProblemError) as ctx:
            self.c.send({"channel": "sms", "recipient": {"address": phone()}, "content": {}})
        self.assertEqual((ctx.exception.status, ctx.exception.code), (400, "SVC-40000"))
        self.assertTrue(ctx.exception.detail)
        with self.assertRaises(ProblemError) as ctx:
            self.c.get_notification("00000000-0000-4000-8000-000000000000")
        self.assertEqual((ctx.exception.status, ctx.exception.code), (404, "SVC-40400"))

    def test_otp_send_and_verify(self) -> None:
        to = phone()
        sent = self.c.send_otp({"channel": "sms", "to": to, "purpose": "sdk-live", "brandName": "SDK"})
        self.assertEqual(sent["status"], "pending")
        code = None
        if SIM_URL:
            msgs = fetch_json("GET", f"{SIM_URL}/_sim/messages?limit=500")["messages"]
            mine = [m for m in msgs if re.sub(r"\D", "", m["to"]) == to and re.search(r"code is \d{6}", m["text"])]
            self.assertTrue(mine, f"no code to {to} in the simulator")
            code = re.search(r"code is (\d{6})", mine[-1]["text"]).group(1)  # type: ignore[union-attr]
        else:
            self.partly_skipped("NOTIFYD_SIM_URL is not set: only a wrong code is verified")
        wrong = self.c.verify_otp(sent["verificationId"], "111111" if code == "000000" else "000000")
        self.assertEqual(wrong, {"status": "failed", "reason": "invalid_code", "attemptsRemaining": 4})
        if code:
            ok = self.c.verify_otp(sent["verificationId"], code)
            self.assertEqual(ok["status"], "verified")
            self.assertRegex(ok.get("verificationToken", ""), r"^[A-Za-z0-9_-]+\.[0-9a-f]{64}$")
            self.assertEqual(self.c.get_otp(sent["verificationId"])["status"], "verified")
        with self.assertRaises(ProblemError) as ctx:
            self.c.get_otp("00000000-0000-4000-8000-000000000000")
        self.assertEqual(ctx.exception.status, 404)

    def test_recipients_preferences_and_sends_by_id_and_category(self) -> None:
        c = self.c
        rid = f"{RUN}-user.1"  # printable ASCII without space, /, ?, #, % or \
        put = c.put_recipient(rid, {"name": "Kim", "phone": phone(), "email": "kim@example.com",
                                    "attributes": {"plan": "pro"}})
        self.assertTrue(put["created"])
        self.assertEqual(put["recipient"]["externalId"], rid)
        self.assertFalse(c.put_recipient(rid, {"name": "Kim", "phone": put["recipient"]["phone"]})["created"])
        patched = c.patch_recipient(rid, {"locale": "ko-KR", "email": "kim2@example.com"})
        self.assertEqual((patched["name"], patched["locale"], patched["email"]), ("Kim", "ko-KR", "kim2@example.com"))
        self.assertEqual(c.get_recipient(rid)["email"], "kim2@example.com")
        self.assertIn(rid, [r["externalId"] for r in c.list_recipients(q=RUN, limit=10)["recipients"]])
        bulk = c.upsert_recipients([{"externalId": f"{RUN}-b1", "email": "b1@example.com"},
                                    {"externalId": f"{RUN}-b2", "phone": phone()}])
        self.assertEqual(bulk, {"total": 2, "created": 2, "updated": 0})
        self.assertEqual(len(list(c.iter_recipients(q=RUN, limit=1))), 3)

        by_id = c.send({"channel": "sms", "recipient": {"id": rid}, "content": {"text": "by id"}})
        rec = self.wait_sent(by_id["requestId"])
        self.assertEqual((rec["recipientId"], rec["recipientAddress"]), (rid, put["recipient"]["phone"]))

        self.assertEqual(c.put_preferences(rid, {"channels": {"email": False}})["channels"], {"email": False})
        self.assertEqual(c.get_preferences(rid)["channels"], {"email": False})
        self.assertRegex(c.create_preference_link(rid)["url"], r"/v1/preferences/page\?token=")

        # Inbox recipient tokens: minted by the signed call, they open the
        # person's inbox; minted offline with the inbox secret, too.
        minted = c.create_inbox_token(rid, ttl_seconds=600)
        self.assertTrue(minted["token"].startswith("v1."))
        counts = f"{c.base_url}/v1/inbox/counts"
        self.assertIn("counts", fetch_json("GET", counts, token=minted["token"]))
        if HAS_DASHBOARD:
            dash = Dashboard(c.base_url)
            secret = dash("POST", "/v1/inbox-settings/rotate-secret")["secret"]
            ws = dash("GET", "/v1/workspace")["workspace"]["id"]
            offline = mint_inbox_token(secret, ws, rid, datetime.now(timezone.utc) + timedelta(minutes=10))
            self.assertIn("counts", fetch_json("GET", counts, token=offline))
            with self.assertRaises(urllib.error.HTTPError) as refused:
                fetch_json("GET", counts, token=minted["token"])
            self.assertEqual(refused.exception.code, 401, "the rotation refuses tokens of the old secret")
        else:
            self.partly_skipped("NOTIFYD_DEMO_EMAIL/NOTIFYD_DEMO_PASSWORD are not set: no offline inbox token")

        if HAS_DASHBOARD:
            key = f"{RUN}-orders"
            Dashboard(c.base_url)("POST", "/v1/categories", {"key": key, "name": "SDK orders"})
            self.assertEqual(c.get_category(key)["key"], key)
            self.assertIn(key, [cat["key"] for cat in c.list_categories()])
            in_cat = c.send({"channel": "sms", "recipient": {"id": rid}, "content": {"text": "order shipped"},
                             "category": key})
            self.wait_sent(in_cat["requestId"])
            c.put_preferences(rid, {"categories": {key: {"sms": False}}})
            opted_out = c.send({"channel": "sms", "recipient": {"id": rid}, "content": {"text": "order shipped"},
                                "category": key})
            self.assertEqual(opted_out["status"], "canceled")
            self.assertEqual(c.get_notification(opted_out["requestId"])["finalErrorCode"], "preference_opt_out")
        else:
            self.partly_skipped("NOTIFYD_DEMO_EMAIL/NOTIFYD_DEMO_PASSWORD are not set: no category send")

        for r in (rid, f"{RUN}-b1", f"{RUN}-b2"):
            c.delete_recipient(r)
        with self.assertRaises(ProblemError) as ctx:
            c.get_recipient(rid)
        self.assertEqual(ctx.exception.status, 404)

    def wait_run(self, run_id: str, what: str, done: Callable[[WorkflowRun], bool]) -> WorkflowRun:
        """Polls run run_id until ``done`` holds for it (WAIT seconds at most)."""
        deadline = time.monotonic() + WAIT
        while True:
            r = self.c.get_workflow_run(run_id)
            if done(r):
                return r
            self.assertLess(time.monotonic(), deadline, f"run {run_id}: {what} not within {WAIT} s: {r}")
            time.sleep(0.2)

    def test_workflows_trigger_run_idempotent_repeat_cancel_and_topic(self) -> None:
        if not HAS_DASHBOARD:
            skip_or_fail(self, "NOTIFYD_DEMO_EMAIL/NOTIFYD_DEMO_PASSWORD are not set: no workflow can be defined")
        c, dash = self.c, Dashboard(self.c.base_url)
        # An SMS template, a one-step workflow that sends it, and one that waits an hour first.
        code = hello = f"{RUN}-hello"
        later = f"{RUN}-later"
        tpl = dash("POST", "/v1/templates", {"code": code, "channel": "sms", "name": code})["template"]
        dash("POST", f"/v1/templates/{tpl['id']}/versions", {"text": "Hello {{name}} from a workflow"})
        dash("POST", f"/v1/templates/{tpl['id']}/versions/1/publish")
        send = {"key": "sms", "type": "send", "channel": "sms", "templateCode": code}
        dash("POST", "/v1/workflows", {"key": hello, "name": "SDK hello", "publish": True, "steps": [send]})
        dash("POST", "/v1/workflows", {"key": later, "name": "SDK later", "publish": True,
                                       "steps": [{"key": "wait", "type": "delay", "duration": "1h"}, send]})
        rid, to = f"{RUN}-wf.1", phone()
        c.put_recipient(rid, {"name": "Kim", "phone": to})

        idem = f"{RUN}-wf-once"
        first = c.trigger_workflow(hello, {"recipients": [rid], "payload": {"name": "Kim"}, "idempotencyKey": idem})
        self.assertEqual(len(first["runs"]), 1)
        self.assertEqual((first["runs"][0]["recipientId"], first["runs"][0]["deduplicated"]), (rid, False))
        run_id = first["runs"][0]["runId"]

        def send_step(r: WorkflowRun) -> dict[str, Any] | None:
            return next((dict(s) for s in r.get("steps", []) if s["key"] == "sms" and s["requestId"]), None)

        r = self.wait_run(run_id, "the send step's request", lambda x: send_step(x) is not None)
        self.assertEqual((r["workflowKey"], r["version"], r["recipientId"], r["payload"]), (hello, 1, rid, {"name": "Kim"}))
        step = send_step(r)
        assert step is not None
        self.assertEqual(step["type"], "send")
        self.assertEqual(r["requestIds"], [step["requestId"]])
        sent = self.wait_sent(step["requestId"])
        self.assertEqual((sent["recipientId"], sent["recipientAddress"]), (rid, to))
        self.assertEqual(c.wait_for_workflow_run(run_id, timeout=WAIT)["status"], "completed")

        again = c.trigger_workflow(hello, {"recipients": [rid], "payload": {"name": "Kim"}, "idempotencyKey": idem})
        self.assertEqual(again["runs"], [{"runId": run_id, "recipientId": rid, "deduplicated": True}])
        runs = c.list_workflow_runs(workflow=hello, recipient_id=rid)
        self.assertEqual([x["id"] for x in runs["runs"]], [run_id], "the repeat started no run")
        self.assertFalse(runs["hasNext"])

        # Cancel by cancellation key: the run waiting an hour ends canceled, with no send.
        cancel_key = f"{RUN}-thread"
        waiting = c.trigger_workflow(later, {"recipients": [rid], "payload": {"name": "Kim"},
                                             "cancellationKey": cancel_key})["runs"][0]
        self.assertFalse(waiting["deduplicated"])
        pending = self.wait_run(waiting["runId"], "the delay step",
                                lambda x: any(s["key"] == "wait" for s in x.get("steps", [])))
        self.assertEqual((pending["status"], pending["cancellationKey"]), ("running", cancel_key))
        self.assertEqual(c.cancel_workflow(later, cancel_key), {"canceledRuns": 1})
        canceled = c.get_workflow_run(waiting["runId"])
        self.assertEqual((canceled["status"], canceled["requestIds"]), ("canceled", []))
        self.assertEqual(c.cancel_workflow(later, cancel_key), {"canceledRuns": 0})

        # A topic: subscribe, trigger by topic, unsubscribe.
        topic = f"{RUN}-news"
        self.assertEqual(c.subscribe_to_topic(topic, rid),
                         {"subscription": {"topic": topic, "recipientId": rid}, "created": True})
        self.assertFalse(c.subscribe_to_topic(topic, rid)["created"])
        self.assertEqual(c.list_topic_subscribers(topic), {"subscribers": [rid], "cursor": None, "hasNext": False})
        by_topic = c.trigger_workflow(hello, {"topic": topic, "payload": {"name": "subscriber"}})["runs"]
        self.assertEqual([(x["recipientId"], x["deduplicated"]) for x in by_topic], [(rid, False)])
        topic_run = c.wait_for_workflow_run(by_topic[0]["runId"], timeout=WAIT)
        self.assertEqual(topic_run["status"], "completed", topic_run)
        self.wait_sent(topic_run["requestIds"][0])
        c.unsubscribe_from_topic(topic, rid)
        self.assertEqual(c.list_topic_subscribers(topic)["subscribers"], [])
        with self.assertRaises(ProblemError) as ctx:
            c.unsubscribe_from_topic(topic, rid)
        self.assertEqual(ctx.exception.status, 404)
        with self.assertRaises(ProblemError) as ctx:
            c.trigger_workflow(f"{RUN}-nope", {"recipients": [rid]})
        self.assertEqual(ctx.exception.status, 404)
        c.delete_recipient(rid)

    def test_a_webhook_delivery_verifies(self) -> None:
        if not HAS_DASHBOARD:
            # No way to register a webhook: verify a delivery signed here the way notifyd signs.
            self.partly_skipped("NOTIFYD_DEMO_EMAIL/NOTIFYD_DEMO_PASSWORD are not set: a locally signed delivery is verified")
            secret = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
            body = read_json("testdata/vectors.json")["webhooks"]["sign"][0]["body"]
            ts = str(int(time.time()))
            mac = hmac.new(base64.b64decode(secret[6:]), f"msg_1.{ts}.{body}".encode(), hashlib.sha256)
            headers = {"webhook-id": "msg_1", "webhook-timestamp": ts,
                       "webhook-signature": "v1," + base64.b64encode(mac.digest()).decode()}
            self.assertEqual(verify_webhook(secret, headers, body)["type"], "notification.delivered")
            return

        got: list[tuple[Any, bytes]] = []

        class Receiver(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                got.append((self.headers, self.rfile.read(int(self.headers.get("Content-Length") or 0))))
                self.send_response(204)
                self.end_headers()

        srv = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        dash = Dashboard(self.c.base_url)
        hook = dash("POST", "/v1/webhooks", {"url": f"http://127.0.0.1:{srv.server_address[1]}/hook",
                                             "events": ["notification.delivered"]})
        try:
            r = self.c.send({"channel": "sms", "recipient": {"address": phone()}, "content": {"text": "webhook"}})
            self.wait_sent(r["requestId"])
            deadline = time.monotonic() + WAIT
            delivery = None
            while delivery is None and time.monotonic() < deadline:
                delivery = next((d for d in list(got) if json.loads(d[1]).get("data", {}).get("requestId") == r["requestId"]), None)
                if delivery is None:
                    time.sleep(0.1)
            self.assertIsNotNone(delivery, "no webhook delivery for the request within 30 s")
            assert delivery is not None
            headers, body = delivery
            event = verify_webhook(hook["secret"], headers, body)
            self.assertEqual((event["type"], event["data"]["requestId"], event["data"]["status"]),
                             ("notification.delivered", r["requestId"], "sent"))
            with self.assertRaises(WebhookVerificationError) as ctx:
                verify_webhook(hook["secret"], headers, body.replace(b'"sent"', b'"failed"'))
            self.assertEqual(ctx.exception.reason, "signature")
        finally:
            dash("DELETE", f"/v1/webhooks/{hook['webhook']['id']}")
            srv.shutdown()
            srv.server_close()


if __name__ == "__main__":
    unittest.main()
