"""The client against a local stand-in server that checks every signature
(recomputed here with hashlib and hmac), records what it was sent and
answers as told."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
import time
import unittest
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from notifyd import (
    Notifyd,
    NotifydConnectionError,
    NotifydError,
    ProblemError,
    WaitTimeoutError,
)

API_KEY = "nk_test.secret"
HMAC_SECRET = "hmac-secret-for-tests"
SEND_RESULT = {"status": "queued", "requestId": "r-1", "queueJobId": "7", "deduplicated": False, "scheduledAt": None}


class Seen:
    def __init__(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> None:
        self.method, self.path, self.body, self.headers = method, path, body, headers

    def json(self) -> Any:
        return json.loads(self.body)


class Handler(BaseHTTPRequestHandler):
    server: Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _any(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        seen = Seen(self.command, self.path, self.rfile.read(n), {k.lower(): v for k, v in self.headers.items()})
        srv = self.server
        srv.seen.append(seen)
        why = check_signature(seen)
        if why:
            self.problem(401, "SVC-40100", f"test server: {why}")
            return
        srv.handler(self, seen, len(srv.seen))

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

    def envelope(self, status: int, data: Any) -> None:
        self.answer(status, "application/json", json.dumps({"data": data, "meta": {"timestamp": "t"}}).encode())

    def problem(self, status: int, code: str, detail: str) -> None:
        body = {"type": f"http://x/errors/{code.lower()}", "title": "Bad Request", "status": status, "detail": detail,
                "code": code, "instance": "/v1/notifications", "timestamp": "2026-01-01T00:00:00.000Z"}
        self.answer(status, "application/problem+json", json.dumps(body).encode())

    def answer(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def drop(self) -> None:
        """Closes the connection without an answer (a network error)."""
        self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[Seen]
    handler: Callable[[Handler, Seen, int], None]


def check_signature(s: Seen) -> str:
    """Why the request's signature is wrong, the way the server checks it; "" when right."""
    h = s.headers
    if h.get("x-api-key") != API_KEY:
        return "api key"
    if not re.fullmatch(r"[0-9]+", h.get("x-timestamp", "")) or abs(int(h["x-timestamp"]) - time.time()) > 5:
        return "timestamp"
    if not re.fullmatch(r"[0-9a-f]{32}", h.get("x-nonce", "")):
        return "nonce"
    to_sign = "\n".join([s.method, s.path, h["x-timestamp"], h["x-nonce"], hashlib.sha256(s.body).hexdigest()])
    want = hmac.new(HMAC_SECRET.encode(), to_sign.encode(), hashlib.sha256).hexdigest()
    return "" if h.get("x-signature") == want else f"signature of {s.path}"


class ClientTest(unittest.TestCase):
    srv: Server
    base_url: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.srv = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=cls.srv.serve_forever, daemon=True).start()
        cls.base_url = f"http://127.0.0.1:{cls.srv.server_address[1]}/"

    @classmethod
    def tearDownClass(cls) -> None:
        cls.srv.shutdown()
        cls.srv.server_close()

    def setUp(self) -> None:
        self.srv.seen = []

    def answer(self, fn: Callable[[Handler, Seen, int], None]) -> None:
        self.srv.handler = fn

    def client(self, **kw: Any) -> Notifyd:
        return Notifyd(self.base_url, API_KEY, HMAC_SECRET, retry_delay=0.01, **kw)

    @property
    def seen(self) -> list[Seen]:
        return self.srv.seen

    def test_send_signs_the_bytes_it_sends_and_adds_an_idempotency_key(self) -> None:
        self.answer(lambda h, s, n: h.envelope(201, SEND_RESULT))
        c = self.client()
        r = c.send({"channel": "sms", "recipient": {"address": "010-1234-5678"}, "content": {"text": "안녕 ✓"}})
        self.assertEqual(r, SEND_RESULT)
        s = self.seen[0]
        self.assertEqual((s.method, s.path, s.headers["content-type"]), ("POST", "/v1/notifications", "application/json"))
        self.assertRegex(s.json()["idempotencyKey"], r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
        self.assertEqual(s.json()["content"]["text"], "안녕 ✓")

        c.send({"channel": "email", "recipient": {"id": "user-1"}, "content": {"templateCode": "T"},
                "idempotencyKey": "mine", "category": "orders"})
        self.assertEqual(self.seen[1].json()["idempotencyKey"], "mine")
        self.assertEqual(self.seen[1].json()["category"], "orders")

    def test_network_error_is_retried_with_the_same_key_each_try_signed_anew(self) -> None:
        self.answer(lambda h, s, n: h.drop() if n < 3 else h.envelope(201, SEND_RESULT))
        r = self.client().send({"channel": "sms", "recipient": {"address": "1"}, "content": {"text": "x"}})
        self.assertEqual(r["requestId"], "r-1")
        self.assertEqual(len(self.seen), 3)
        self.assertEqual(len({s.json()["idempotencyKey"] for s in self.seen}), 1)
        self.assertEqual(len({s.headers["x-nonce"] for s in self.seen}), 3)

    def test_bulk_items_keep_their_keys_across_a_retry(self) -> None:
        bulk = {"status": "queued", "total": 2, "queued": 2, "deduplicated": 0, "items": [SEND_RESULT, SEND_RESULT]}
        self.answer(lambda h, s, n: h.drop() if n == 1 else h.envelope(201, bulk))
        items: list[Any] = [{"channel": "sms", "recipient": {"address": "1"}, "content": {"text": "a"}},
                            {"channel": "sms", "recipient": {"address": "2"}, "content": {"text": "b"}, "idempotencyKey": "k2"}]
        self.assertEqual(self.client().send_bulk(items, lane="bulk")["total"], 2)
        self.assertEqual(self.seen[0].body, self.seen[1].body)
        body = self.seen[1].json()
        self.assertEqual(body["lane"], "bulk")
        self.assertEqual(body["items"][1]["idempotencyKey"], "k2")
        self.assertTrue(body["items"][0]["idempotencyKey"])
        self.assertNotIn("idempotencyKey", items[0], "the caller's dict is not changed")

    def test_connection_error_after_every_try(self) -> None:
        self.answer(lambda h, s, n: h.drop())
        with self.assertRaises(NotifydConnectionError) as ctx:
            self.client(max_retries=2).get_notification("r-1")
        self.assertIsInstance(ctx.exception, NotifydError)
        self.assertEqual(ctx.exception.attempts, 3)
        self.assertEqual(len(self.seen), 3)

    def test_otp_send_is_not_retried(self) -> None:
        self.answer(lambda h, s, n: h.drop())
        with self.assertRaises(NotifydConnectionError):
            self.client().send_otp({"channel": "sms", "to": "010"})
        self.assertEqual(len(self.seen), 1)

    def test_a_try_that_times_out_is_retried_then_reported(self) -> None:
        self.answer(lambda h, s, n: time.sleep(0.5))
        with self.assertRaises(NotifydConnectionError) as ctx:
            self.client(timeout=0.1, max_retries=1).cancel_notification("r-1")
        self.assertEqual(ctx.exception.attempts, 2)
        self.assertEqual(len(self.seen), 2)

    def test_error_answers_are_typed_problems_and_not_retried(self) -> None:
        self.answer(lambda h, s, n: h.problem(400, "SVC-40000", "channel must be one of sms, …"))
        with self.assertRaises(ProblemError) as ctx:
            self.client().send({"channel": "sms", "recipient": {"address": "1"}, "content": {"text": "x"}})
        p = ctx.exception
        self.assertEqual((p.status, p.code, p.title, p.detail), (400, "SVC-40000", "Bad Request", "channel must be one of sms, …"))
        self.assertEqual((p.type, p.instance, p.timestamp), ("http://x/errors/svc-40000", "/v1/notifications", "2026-01-01T00:00:00.000Z"))
        self.assertEqual(len(self.seen), 1)

        self.answer(lambda h, s, n: h.answer(502, "text/html", b"<html>bad gateway</html>"))
        with self.assertRaises(ProblemError) as ctx:
            self.client().get_otp("v-1")
        self.assertEqual((ctx.exception.status, ctx.exception.code, ctx.exception.body), (502, "", "<html>bad gateway</html>"))

    def test_paths_and_queries_are_encoded_and_signed_as_sent(self) -> None:
        profile = {"externalId": "user/42 k"}

        def answer(h: Handler, s: Seen, n: int) -> None:
            if s.method == "DELETE":
                h.send_response(204)
                h.end_headers()
            elif s.path.startswith("/v1/recipients?"):
                h.envelope(200, {"recipients": [profile], "cursor": None, "hasNext": False})
            else:
                h.envelope(201 if s.method == "PUT" else 200, {"recipient": profile})
        self.answer(answer)
        c = self.client()
        put = c.put_recipient("user/42 k", {"name": "Kim", "phone": "010-1234-5678"})
        self.assertEqual(put, {"recipient": profile, "created": True})
        self.assertEqual(c.get_recipient("user/42 k"), profile)
        self.assertIsNone(c.delete_recipient("user/42 k"))
        c.list_recipients(q="kim lee&co", limit=2)
        self.assertEqual([f"{s.method} {s.path}" for s in self.seen], [
            "PUT /v1/recipients/user%2F42%20k", "GET /v1/recipients/user%2F42%20k",
            "DELETE /v1/recipients/user%2F42%20k", "GET /v1/recipients?q=kim+lee%26co&limit=2"])
        self.assertNotIn("content-type", self.seen[1].headers)
        self.assertEqual(self.seen[1].body, b"")

    def test_iter_recipients_follows_the_cursor(self) -> None:
        def answer(h: Handler, s: Seen, n: int) -> None:
            if parse_qs(urlsplit(s.path).query).get("cursor"):
                h.envelope(200, {"recipients": [{"externalId": "c"}], "cursor": None, "hasNext": False})
            else:
                h.envelope(200, {"recipients": [{"externalId": "a"}, {"externalId": "b"}], "cursor": "next", "hasNext": True})
        self.answer(answer)
        self.assertEqual([r["externalId"] for r in self.client().iter_recipients(limit=2)], ["a", "b", "c"])
        self.assertEqual(self.seen[1].path, "/v1/recipients?limit=2&cursor=next")

    def test_the_other_calls_use_the_routes_of_the_api(self) -> None:
        def answer(h: Handler, s: Seen, n: int) -> None:
            if s.path.endswith("/preferences"):
                h.envelope(200, {"preferences": {"channels": {"sms": False}}})
            elif s.path.startswith("/v1/categories/"):
                h.envelope(200, {"category": {"key": "orders"}})
            elif s.path == "/v1/categories":
                h.envelope(200, {"categories": []})
            else:
                h.envelope(200, {"recipient": {"externalId": "u1"}})
        self.answer(answer)
        c = self.client()
        c.verify_otp("v 1", "123456")
        c.resend_otp("v-1")
        c.get_otp("v-1")
        c.send_otp({"channel": "email", "to": "a@example.com", "purpose": "login"})
        self.assertEqual(c.put_preferences("u1", {"channels": {"sms": False}}), {"channels": {"sms": False}})
        self.assertEqual(c.get_preferences("u1"), {"channels": {"sms": False}})
        c.create_preference_link("u1")
        c.create_inbox_token("u 1")
        c.create_inbox_token("u1", ttl_seconds=600)
        c.upsert_recipients([{"externalId": "u1", "email": "a@example.com"}])
        self.assertEqual(c.patch_recipient("u1", {"email": None}), {"externalId": "u1"})
        self.assertEqual(c.list_categories(), [])
        self.assertEqual(c.get_category("orders")["key"], "orders")
        self.assertEqual([f"{s.method} {s.path} {s.body.decode()}" for s in self.seen], [
            'POST /v1/otp/v%201/verify {"code":"123456"}',
            "POST /v1/otp/v-1/resend ",
            "GET /v1/otp/v-1 ",
            'POST /v1/otp {"channel":"email","to":"a@example.com","purpose":"login"}',
            'PUT /v1/recipients/u1/preferences {"channels":{"sms":false}}',
            "GET /v1/recipients/u1/preferences ",
            "POST /v1/recipients/u1/preference-link ",
            "POST /v1/recipients/u%201/inbox-token ",
            'POST /v1/recipients/u1/inbox-token {"ttlSeconds":600}',
            'POST /v1/recipients/bulk {"items":[{"externalId":"u1","email":"a@example.com"}]}',
            'PATCH /v1/recipients/u1 {"email":null}',
            "GET /v1/categories ",
            "GET /v1/categories/orders ",
        ])

    def test_a_workflow_trigger_gets_an_idempotency_key_that_survives_a_retry(self) -> None:
        runs = {"runs": [{"runId": "run-1", "recipientId": "u 1", "deduplicated": False}]}
        self.answer(lambda h, s, n: h.drop() if n == 1 else h.envelope(202, runs))
        c = self.client()
        self.assertEqual(c.trigger_workflow("wel come", {"recipients": ["u 1"], "payload": {"n": 1},
                                                         "cancellationKey": "c-1"}), runs)
        self.assertEqual(len(self.seen), 2)
        self.assertEqual(self.seen[0].body, self.seen[1].body)
        self.assertEqual(self.seen[1].path, "/v1/workflows/wel%20come/trigger")
        body = self.seen[1].json()
        self.assertRegex(body["idempotencyKey"], r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
        self.assertEqual((body["recipients"], body["payload"], body["cancellationKey"]), (["u 1"], {"n": 1}, "c-1"))
        c.trigger_workflow("w", {"topic": "news", "idempotencyKey": "mine"})
        self.assertEqual(self.seen[2].json(), {"topic": "news", "idempotencyKey": "mine"})

    def test_the_workflow_run_and_topic_calls_use_the_routes_of_the_api(self) -> None:
        def answer(h: Handler, s: Seen, n: int) -> None:
            if s.method == "DELETE":
                h.answer(204, "text/plain", b"")
            elif s.method == "PUT":
                h.envelope(200 if s.path.endswith("/u2") else 201, {"topic": "news", "recipientId": "u1"})
            elif s.path.startswith("/v1/workflow-runs/"):
                h.envelope(200, {"run": {"id": "run-1"}})
            elif "/cancel" in s.path:
                h.envelope(200, {"canceledRuns": 2})
            else:
                h.envelope(200, {"page": s.path})
        self.answer(answer)
        c = self.client()
        self.assertEqual(c.cancel_workflow("w", "c 1"), {"canceledRuns": 2})
        self.assertEqual(c.get_workflow_run("run 1")["id"], "run-1")
        c.list_workflow_runs(workflow="w", recipient_id="u 1", limit=5)
        self.assertEqual(c.subscribe_to_topic("news", "u1"),
                         {"subscription": {"topic": "news", "recipientId": "u1"}, "created": True})
        self.assertFalse(c.subscribe_to_topic("news", "u2")["created"])
        self.assertIsNone(c.unsubscribe_from_topic("news", "u/1"))
        c.list_topic_subscribers("news", cursor="u1")
        self.assertEqual([f"{s.method} {s.path} {s.body.decode()}" for s in self.seen], [
            'POST /v1/workflows/w/cancel {"cancellationKey":"c 1"}',
            "GET /v1/workflow-runs/run%201 ",
            "GET /v1/workflow-runs?workflow=w&recipientId=u+1&limit=5 ",
            "PUT /v1/topics/news/subscribers/u1 ",
            "PUT /v1/topics/news/subscribers/u2 ",
            "DELETE /v1/topics/news/subscribers/u%2F1 ",
            "GET /v1/topics/news/subscribers?cursor=u1 ",
        ])

    def test_wait_for_notification(self) -> None:
        statuses = ["queued", "processing", "sent"]
        self.answer(lambda h, s, n: h.envelope(200, {"requestId": "r-1", "status": statuses[min(n - 1, 2)]}))
        self.assertEqual(self.client().wait_for_notification("r-1", interval=0.005)["status"], "sent")
        self.assertEqual(len(self.seen), 3)
        self.answer(lambda h, s, n: h.envelope(200, {"requestId": "r-1", "status": "queued"}))
        with self.assertRaises(WaitTimeoutError):
            self.client().wait_for_notification("r-1", interval=0.005, timeout=0.03)

    def test_wait_for_workflow_run(self) -> None:
        statuses = ["running", "running", "canceled"]
        self.answer(lambda h, s, n: h.envelope(200, {"run": {"id": "run-1", "status": statuses[min(n - 1, 2)]}}))
        self.assertEqual(self.client().wait_for_workflow_run("run-1", interval=0.005)["status"], "canceled")
        self.assertEqual([s.path for s in self.seen], ["/v1/workflow-runs/run-1"] * 3)
        self.answer(lambda h, s, n: h.envelope(200, {"run": {"id": "run-1", "status": "running"}}))
        with self.assertRaises(WaitTimeoutError):
            self.client().wait_for_workflow_run("run-1", interval=0.005, timeout=0.03)

    def test_from_env(self) -> None:
        c = Notifyd.from_env({"NOTIFYD_URL": "http://h:1/", "NOTIFYD_API_KEY": "k", "NOTIFYD_HMAC_SECRET": "s"})
        self.assertEqual(c.base_url, "http://h:1")
        with self.assertRaisesRegex(NotifydError, "NOTIFYD_API_KEY is not set"):
            Notifyd.from_env({"NOTIFYD_URL": "http://h:1"})


if __name__ == "__main__":
    unittest.main()
