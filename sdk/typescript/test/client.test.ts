// The client against a local stand-in server that checks every signature
// with node:crypto (written apart from the SDK's WebCrypto signer),
// records what it was sent and answers as told.

import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, test } from "node:test";

import { ConnectionError, Notifyd, NotifydError, ProblemError, WaitTimeoutError } from "../dist/index.js";

const apiKey = "nk_test.secret";
const hmacSecret = "hmac-secret-for-tests";

interface Seen {
  method: string;
  url: string;
  body: string;
  headers: IncomingMessage["headers"];
}

type Handler = (seen: Seen, res: ServerResponse, n: number) => void;

let server: Server;
let baseUrl: string;
let seen: Seen[] = [];
let handler: Handler;

function envelope(res: ServerResponse, status: number, data: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ data, meta: { timestamp: "2026-01-01T00:00:00.000Z" } }));
}

function problem(res: ServerResponse, status: number, code: string, detail: string): void {
  res.writeHead(status, { "Content-Type": "application/problem+json" });
  res.end(
    JSON.stringify({
      type: `http://x/errors/${code.toLowerCase()}`,
      title: "Bad Request",
      status,
      detail,
      code,
      instance: "/v1/notifications",
      timestamp: "2026-01-01T00:00:00.000Z",
    }),
  );
}

/** Checks a request's signature headers the way the server does. */
function checkSignature(s: Seen): void {
  const h = s.headers;
  assert.equal(h["x-api-key"], apiKey);
  assert.match(String(h["x-timestamp"]), /^\d+$/);
  assert.ok(Math.abs(Number(h["x-timestamp"]) - Date.now() / 1000) < 5);
  assert.match(String(h["x-nonce"]), /^[0-9a-f]{32}$/);
  const bodyHash = createHash("sha256").update(s.body, "utf8").digest("hex");
  const toSign = [s.method, s.url, h["x-timestamp"], h["x-nonce"], bodyHash].join("\n");
  assert.equal(h["x-signature"], createHmac("sha256", hmacSecret).update(toSign).digest("hex"), `signature of ${s.url}`);
}

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const s: Seen = { method: req.method ?? "", url: req.url ?? "", body: Buffer.concat(chunks).toString("utf8"), headers: req.headers };
      seen.push(s);
      try {
        checkSignature(s);
      } catch (err) {
        problem(res, 401, "SVC-40100", `test server: ${String(err)}`); // fails the test as a ProblemError
        return;
      }
      handler(s, res, seen.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

beforeEach(() => {
  seen = [];
});

function client(extra: Partial<ConstructorParameters<typeof Notifyd>[0]> = {}): Notifyd {
  return new Notifyd({ baseUrl: `${baseUrl}/`, apiKey, hmacSecret, retryDelayMs: 10, ...extra });
}

const sendResult = { status: "queued", requestId: "r-1", queueJobId: "7", deduplicated: false, scheduledAt: null };

test("send signs the exact bytes it sends, unwraps the envelope and adds an idempotency key", async () => {
  handler = (_s, res) => envelope(res, 201, sendResult);
  const c = client();
  const r = await c.send({ channel: "sms", recipient: { address: "010-1234-5678" }, content: { text: "안녕 ✓" } });
  assert.deepEqual(r, sendResult);
  assert.equal(seen.length, 1);
  assert.equal(seen[0].method, "POST");
  assert.equal(seen[0].url, "/v1/notifications");
  assert.equal(seen[0].headers["content-type"], "application/json");
  const body = JSON.parse(seen[0].body);
  assert.match(body.idempotencyKey, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(body.content.text, "안녕 ✓");

  await c.send({ channel: "email", recipient: { id: "user-1" }, content: { templateCode: "T" }, idempotencyKey: "mine", category: "orders" });
  assert.equal(JSON.parse(seen[1].body).idempotencyKey, "mine");
  assert.equal(JSON.parse(seen[1].body).category, "orders");
});

test("a network error is retried with the same idempotency key, each try signed anew", async () => {
  handler = (_s, res, n) => (n < 3 ? res.socket?.destroy() : envelope(res, 201, sendResult));
  const r = await client().send({ channel: "sms", recipient: { address: "1" }, content: { text: "x" } });
  assert.equal(r.requestId, "r-1");
  assert.equal(seen.length, 3);
  const keys = seen.map((s) => JSON.parse(s.body).idempotencyKey);
  assert.equal(new Set(keys).size, 1);
  assert.equal(new Set(seen.map((s) => s.headers["x-nonce"])).size, 3);
});

test("bulk items each get an idempotency key that survives a retry", async () => {
  handler = (_s, res, n) =>
    n === 1 ? res.socket?.destroy() : envelope(res, 201, { status: "queued", total: 2, queued: 2, deduplicated: 0, items: [sendResult, sendResult] });
  const items = [
    { channel: "sms" as const, recipient: { address: "1" }, content: { text: "a" } },
    { channel: "sms" as const, recipient: { address: "2" }, content: { text: "b" }, idempotencyKey: "k2" },
  ];
  const r = await client().sendBulk(items, { lane: "bulk" });
  assert.equal(r.total, 2);
  assert.equal(seen.length, 2);
  assert.equal(seen[0].body, seen[1].body);
  const body = JSON.parse(seen[1].body);
  assert.equal(body.lane, "bulk");
  assert.equal(body.items[1].idempotencyKey, "k2");
  assert.ok(body.items[0].idempotencyKey);
});

test("after every try fails: ConnectionError with the number of tries", async () => {
  handler = (_s, res) => res.socket?.destroy();
  await assert.rejects(client({ maxRetries: 2 }).getNotification("r-1"), (err: unknown) => {
    assert.ok(err instanceof ConnectionError);
    assert.ok(err instanceof NotifydError);
    assert.equal(err.attempts, 3);
    return true;
  });
  assert.equal(seen.length, 3);
});

test("OTP send is not retried (a second code would be sent)", async () => {
  handler = (_s, res) => res.socket?.destroy();
  await assert.rejects(client().sendOtp({ channel: "sms", to: "010" }), ConnectionError);
  assert.equal(seen.length, 1);
});

test("a try that times out is retried, then reported", async () => {
  handler = () => {}; // never answers
  await assert.rejects(client({ timeoutMs: 100, maxRetries: 1 }).cancelNotification("r-1"), (err: unknown) => {
    assert.ok(err instanceof ConnectionError);
    assert.equal(err.attempts, 2);
    assert.match(err.message, /timed out/);
    return true;
  });
  assert.equal(seen.length, 2);
});

test("the caller's abort stops the call without retries", async () => {
  handler = () => {};
  const ctl = new AbortController();
  setTimeout(() => ctl.abort(new Error("stop")), 50);
  await assert.rejects(client().getNotification("r-1", { signal: ctl.signal }), /stop/);
  assert.equal(seen.length, 1);
});

test("an error answer is a typed problem and is not retried", async () => {
  handler = (_s, res) => problem(res, 400, "SVC-40000", "channel must be one of sms, …");
  await assert.rejects(client().send({ channel: "sms", recipient: { address: "1" }, content: { text: "x" } }), (err: unknown) => {
    assert.ok(err instanceof ProblemError);
    assert.equal(err.status, 400);
    assert.equal(err.code, "SVC-40000");
    assert.equal(err.title, "Bad Request");
    assert.equal(err.detail, "channel must be one of sms, …");
    assert.equal(err.type, "http://x/errors/svc-40000");
    assert.equal(err.instance, "/v1/notifications");
    assert.equal(err.timestamp, "2026-01-01T00:00:00.000Z");
    return true;
  });
  assert.equal(seen.length, 1);

  handler = (_s, res) => {
    res.writeHead(502, { "Content-Type": "text/html" });
    res.end("<html>bad gateway</html>");
  };
  await assert.rejects(client().getOtp("v-1"), (err: unknown) => {
    assert.ok(err instanceof ProblemError);
    assert.equal(err.status, 502);
    assert.equal(err.code, "");
    assert.equal(err.body, "<html>bad gateway</html>");
    return true;
  });
});

test("paths and queries are encoded, and signed as sent", async () => {
  const profile = { externalId: "user/42 k", name: null, phone: null, email: null, pushTokens: [], chatTargets: {}, timeZone: null, locale: null, attributes: {}, createdAt: "", updatedAt: "" };
  handler = (s, res) => {
    if (s.method === "DELETE") {
      res.writeHead(204);
      res.end();
    } else if (s.url.startsWith("/v1/recipients?")) {
      envelope(res, 200, { recipients: [profile], cursor: null, hasNext: false });
    } else {
      envelope(res, s.method === "PUT" ? 201 : 200, { recipient: profile });
    }
  };
  const c = client();
  const put = await c.putRecipient("user/42 k", { name: "Kim", phone: "010-1234-5678" });
  assert.equal(put.created, true);
  assert.equal(put.recipient.externalId, "user/42 k");
  assert.equal((await c.getRecipient("user/42 k")).externalId, "user/42 k");
  assert.equal(await c.deleteRecipient("user/42 k"), undefined);
  await c.listRecipients({ q: "kim lee&co", limit: 2 });
  assert.deepEqual(
    seen.map((s) => `${s.method} ${s.url}`),
    ["PUT /v1/recipients/user%2F42%20k", "GET /v1/recipients/user%2F42%20k", "DELETE /v1/recipients/user%2F42%20k", "GET /v1/recipients?q=kim+lee%26co&limit=2"],
  );
  assert.equal(seen[1].headers["content-type"], undefined, "no body, no content type");
  assert.equal(seen[1].body, "");
});

test("iterateRecipients follows the cursor", async () => {
  const p = (id: string) => ({ externalId: id });
  handler = (s, res) => {
    const cursor = new URL(s.url, "http://x").searchParams.get("cursor");
    envelope(res, 200, cursor ? { recipients: [p("c")], cursor: null, hasNext: false } : { recipients: [p("a"), p("b")], cursor: "next", hasNext: true });
  };
  const ids: string[] = [];
  for await (const r of client().iterateRecipients({ limit: 2 })) {
    ids.push(r.externalId);
  }
  assert.deepEqual(ids, ["a", "b", "c"]);
  assert.equal(seen[1].url, "/v1/recipients?limit=2&cursor=next");
});

test("the other calls use the routes of the API", async () => {
  handler = (s, res) => envelope(res, 200, s.url.endsWith("/preferences") ? { preferences: { channels: { sms: false } } } : s.url.startsWith("/v1/categories/") ? { category: { key: "orders" } } : s.url === "/v1/categories" ? { categories: [] } : { recipient: { externalId: "u1" } });
  const c = client();
  await c.verifyOtp("v 1", "123456");
  await c.resendOtp("v-1");
  await c.getOtp("v-1");
  await c.sendOtp({ channel: "email", to: "a@example.com", purpose: "login" });
  assert.deepEqual(await c.putPreferences("u1", { channels: { sms: false } }), { channels: { sms: false } });
  assert.deepEqual(await c.getPreferences("u1"), { channels: { sms: false } });
  await c.createPreferenceLink("u1");
  await c.createInboxToken("u 1");
  await c.createInboxToken("u1", { ttlSeconds: 600 });
  await c.upsertRecipients([{ externalId: "u1", email: "a@example.com" }]);
  assert.deepEqual(await c.patchRecipient("u1", { email: null }), { externalId: "u1" });
  assert.deepEqual(await c.listCategories(), []);
  assert.equal((await c.getCategory("orders")).key, "orders");
  assert.deepEqual(
    seen.map((s) => `${s.method} ${s.url} ${s.body}`),
    [
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
    ],
  );
});

test("a workflow trigger gets an idempotency key that survives a retry", async () => {
  const runs = { runs: [{ runId: "run-1", recipientId: "u 1", deduplicated: false }] };
  handler = (_s, res, n) => (n === 1 ? res.socket?.destroy() : envelope(res, 202, runs));
  const c = client();
  assert.deepEqual(await c.triggerWorkflow("wel come", { recipients: ["u 1"], payload: { n: 1 }, cancellationKey: "c-1" }), runs);
  assert.equal(seen.length, 2);
  assert.equal(seen[0].body, seen[1].body);
  assert.equal(seen[1].url, "/v1/workflows/wel%20come/trigger");
  const body = JSON.parse(seen[1].body);
  assert.match(body.idempotencyKey, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.deepEqual([body.recipients, body.payload, body.cancellationKey], [["u 1"], { n: 1 }, "c-1"]);
  await c.triggerWorkflow("w", { topic: "news", idempotencyKey: "mine" });
  assert.deepEqual(JSON.parse(seen[2].body), { topic: "news", idempotencyKey: "mine" });
});

test("the workflow run and topic calls use the routes of the API", async () => {
  handler = (s, res) => {
    if (s.method === "DELETE") {
      res.writeHead(204).end();
    } else if (s.method === "PUT") {
      envelope(res, s.url.endsWith("/u2") ? 200 : 201, { topic: "news", recipientId: "u1" });
    } else if (s.url.startsWith("/v1/workflow-runs/")) {
      envelope(res, 200, { run: { id: "run-1" } });
    } else if (s.url.includes("/cancel")) {
      envelope(res, 200, { canceledRuns: 2 });
    } else {
      envelope(res, 200, { page: s.url });
    }
  };
  const c = client();
  assert.deepEqual(await c.cancelWorkflow("w", "c 1"), { canceledRuns: 2 });
  assert.equal((await c.getWorkflowRun("run 1")).id, "run-1");
  await c.listWorkflowRuns({ workflow: "w", recipientId: "u 1", limit: 5 });
  assert.deepEqual(await c.subscribeToTopic("news", "u1"), { subscription: { topic: "news", recipientId: "u1" }, created: true });
  assert.equal((await c.subscribeToTopic("news", "u2")).created, false);
  assert.equal(await c.unsubscribeFromTopic("news", "u/1"), undefined);
  await c.listTopicSubscribers("news", { cursor: "u1" });
  assert.deepEqual(
    seen.map((s) => `${s.method} ${s.url} ${s.body}`),
    [
      'POST /v1/workflows/w/cancel {"cancellationKey":"c 1"}',
      "GET /v1/workflow-runs/run%201 ",
      "GET /v1/workflow-runs?workflow=w&recipientId=u+1&limit=5 ",
      "PUT /v1/topics/news/subscribers/u1 ",
      "PUT /v1/topics/news/subscribers/u2 ",
      "DELETE /v1/topics/news/subscribers/u%2F1 ",
      "GET /v1/topics/news/subscribers?cursor=u1 ",
    ],
  );
});

test("waitForNotification polls until a final status, or gives up", async () => {
  const statuses = ["queued", "processing", "sent"];
  handler = (_s, res, n) => envelope(res, 200, { requestId: "r-1", status: statuses[Math.min(n - 1, 2)] });
  const r = await client().waitForNotification("r-1", { intervalMs: 5 });
  assert.equal(r.status, "sent");
  assert.equal(seen.length, 3);

  handler = (_s, res) => envelope(res, 200, { requestId: "r-1", status: "queued" });
  await assert.rejects(client().waitForNotification("r-1", { intervalMs: 5, timeoutMs: 30 }), WaitTimeoutError);
});

test("waitForWorkflowRun polls until the run has ended, or gives up", async () => {
  seen = [];
  const statuses = ["running", "running", "canceled"];
  handler = (_s, res, n) => envelope(res, 200, { run: { id: "run-1", status: statuses[Math.min(n - 1, 2)] } });
  assert.equal((await client().waitForWorkflowRun("run-1", { intervalMs: 5 })).status, "canceled");
  assert.equal(seen.length, 3);
  assert.equal(seen[2].url, "/v1/workflow-runs/run-1");

  handler = (_s, res) => envelope(res, 200, { run: { id: "run-1", status: "running" } });
  await assert.rejects(client().waitForWorkflowRun("run-1", { intervalMs: 5, timeoutMs: 30 }), WaitTimeoutError);
});

test("fromEnv reads the variables serve --demo prints", () => {
  const c = Notifyd.fromEnv({ NOTIFYD_URL: "http://h:1/", NOTIFYD_API_KEY: "k", NOTIFYD_HMAC_SECRET: "s" });
  assert.equal(c.baseUrl, "http://h:1");
  assert.throws(() => Notifyd.fromEnv({ NOTIFYD_URL: "http://h:1" }), /NOTIFYD_API_KEY is not set/);
});
