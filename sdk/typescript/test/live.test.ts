// Against a running notifyd (`notifyd serve --demo`; sdk/run-live-tests.sh
// starts one): NOTIFYD_URL, NOTIFYD_API_KEY and NOTIFYD_HMAC_SECRET as the
// demo prints them. Optional: NOTIFYD_SIM_URL (the demo's simulator, to
// read the OTP code) and NOTIFYD_DEMO_EMAIL / NOTIFYD_DEMO_PASSWORD (the
// demo's dashboard login, to create a category, a real webhook, and the
// template and workflows the workflow test triggers).
// Without NOTIFYD_URL every test here skips; NOTIFYD_REQUIRE_LIVE=1 makes
// anything missing a failure.

import assert from "node:assert/strict";
import { createHmac, randomBytes, randomInt } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";

import { Notifyd, ProblemError, WebhookVerificationError, mintInboxToken, verifyWebhook } from "../dist/index.js";
import type { WorkflowRun } from "../dist/index.js";
import { readJSON, skipOrFail } from "./helpers.js";

const env = process.env;
const live = env.NOTIFYD_URL && env.NOTIFYD_API_KEY && env.NOTIFYD_HMAC_SECRET ? Notifyd.fromEnv() : undefined;
const noLive = "NOTIFYD_URL, NOTIFYD_API_KEY and NOTIFYD_HMAC_SECRET are not set (run sdk/run-live-tests.sh)";
const simUrl = env.NOTIFYD_SIM_URL?.replace(/\/+$/, "");
const hasDashboard = Boolean(env.NOTIFYD_DEMO_EMAIL && env.NOTIFYD_DEMO_PASSWORD);
const run = `ts${Date.now().toString(36)}${randomInt(1000)}`;

/** The client, or undefined after skipping t. */
function client(t: { skip(message?: string): void }): Notifyd | undefined {
  if (!live) {
    skipOrFail(t, noLive);
  }
  return live;
}

/** A phone number no other test uses (OTP limits count per recipient). */
function phone(): string {
  return `010${String(randomInt(10 ** 8)).padStart(8, "0")}`;
}

let token: string | undefined;

/** A Dashboard API call as the demo workspace's owner. */
async function dashboard<T>(method: string, path: string, body?: unknown): Promise<T> {
  if (!token) {
    const r = await fetch(`${live!.baseUrl}/v1/auth/login`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: env.NOTIFYD_DEMO_EMAIL, password: env.NOTIFYD_DEMO_PASSWORD }),
    });
    assert.equal(r.status, 200, await r.clone().text());
    token = ((await r.json()) as { accessToken: string }).accessToken;
  }
  const r = await fetch(`${live!.baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.ok(r.ok, `${method} ${path}: ${r.status} ${await r.clone().text()}`);
  return (r.status === 204 ? undefined : await r.json()) as T;
}

test("live: send, then poll the status until sent; an idempotent repeat is deduplicated", async (t) => {
  const c = client(t);
  if (!c) return;
  const key = `${run}-once`;
  const r = await c.send({ channel: "sms", recipient: { address: phone() }, content: { text: "hi from the TypeScript SDK" }, idempotencyKey: key, metadata: { sdk: "ts" } });
  assert.equal(r.status, "queued");
  assert.equal(r.deduplicated, false);
  const done = await c.waitForNotification(r.requestId, { timeoutMs: 30_000 });
  assert.equal(done.status, "sent", JSON.stringify(done));
  assert.ok(done.attempts.length >= 1);
  const again = await c.send({ channel: "sms", recipient: { address: "010-0000-0000" }, content: { text: "x" }, idempotencyKey: key });
  assert.equal(again.deduplicated, true);
  assert.equal(again.requestId, r.requestId);
});

test("live: bulk send", async (t) => {
  const c = client(t);
  if (!c) return;
  const items = [0, 1, 2].map((i) => ({ channel: "sms" as const, recipient: { address: phone() }, content: { text: `bulk ${i}` } }));
  const r = await c.sendBulk(items);
  assert.equal(r.total, 3);
  assert.equal(r.queued, 3);
  assert.equal(r.items.length, 3);
  for (const item of r.items) {
    assert.equal((await c.waitForNotification(item.requestId, { timeoutMs: 30_000 })).status, "sent");
  }
});

test("live: template send, scheduled send and cancel, and a typed problem", async (t) => {
  const c = client(t);
  if (!c) return;
  const tpl = await c.send({ channel: "msgr_alimtalk", recipient: { address: phone() }, content: { templateCode: "DEMO_WELCOME", templateVariables: { name: "Kim" } } });
  assert.equal((await c.waitForNotification(tpl.requestId, { timeoutMs: 30_000 })).status, "sent");

  const at = new Date(Date.now() + 3600_000).toISOString();
  const s = await c.send({ channel: "email", recipient: { address: "later@example.com" }, content: { title: "Later", text: "later" }, scheduledAt: at });
  assert.ok(s.scheduledAt);
  const canceled = await c.cancelNotification(s.requestId);
  assert.deepEqual([canceled.canceled, canceled.status], [true, "canceled"]);
  const twice = await c.cancelNotification(s.requestId);
  assert.deepEqual([twice.canceled, twice.status], [false, "canceled"]);
  assert.equal((await c.getNotification(s.requestId)).finalErrorCode, "canceled_by_api");

  await assert.rejects(c.send({ channel: "sms", recipient: { address: phone() }, content: {} }), (err: unknown) => {
    assert.ok(err instanceof ProblemError, String(err));
    assert.equal(err.status, 400);
    assert.equal(err.code, "SVC-40000");
    assert.ok(err.detail);
    return true;
  });
  await assert.rejects(c.getNotification("00000000-0000-4000-8000-000000000000"), (err: unknown) => err instanceof ProblemError && err.status === 404 && err.code === "SVC-40400");
});

test("live: OTP send and verify", async (t) => {
  const c = client(t);
  if (!c) return;
  const to = phone();
  const sent = await c.sendOtp({ channel: "sms", to, purpose: "sdk-live", brandName: "SDK" });
  assert.equal(sent.status, "pending");
  let code: string | undefined;
  if (simUrl) {
    const r = await fetch(`${simUrl}/_sim/messages?limit=500`);
    const { messages } = (await r.json()) as { messages: Array<{ to: string; text: string }> };
    const mine = messages.filter((m) => m.to.replace(/\D/g, "") === to && /code is \d{6}/.test(m.text));
    code = mine.at(-1)?.text.match(/code is (\d{6})/)?.[1];
    assert.ok(code, `no code to ${to} in the simulator`);
  } else {
    skipOrFail({ skip: (m) => t.diagnostic(`partly skipped: ${m}`) }, "NOTIFYD_SIM_URL is not set: only a wrong code is verified");
  }
  const wrong = await c.verifyOtp(sent.verificationId, code === "000000" ? "111111" : "000000");
  assert.deepEqual(wrong, { status: "failed", reason: "invalid_code", attemptsRemaining: 4 });
  if (code) {
    const ok = await c.verifyOtp(sent.verificationId, code);
    assert.equal(ok.status, "verified");
    assert.ok(ok.status === "verified" && /^[A-Za-z0-9_-]+\.[0-9a-f]{64}$/.test(ok.verificationToken));
    const session = await c.getOtp(sent.verificationId);
    assert.equal(session.status, "verified");
  }
  await assert.rejects(c.getOtp("00000000-0000-4000-8000-000000000000"), (err: unknown) => err instanceof ProblemError && err.status === 404);
});

test("live: recipients, preferences, and sends by recipient id and category", async (t) => {
  const c = client(t);
  if (!c) return;
  const id = `${run}-user.1`; // printable ASCII without space, /, ?, #, % or \\
  const put = await c.putRecipient(id, { name: "Kim", phone: phone(), email: "kim@example.com", attributes: { plan: "pro" } });
  assert.equal(put.created, true);
  assert.equal(put.recipient.externalId, id);
  assert.equal((await c.putRecipient(id, { name: "Kim", phone: put.recipient.phone })).created, false);
  const patched = await c.patchRecipient(id, { locale: "ko-KR", email: "kim2@example.com" });
  assert.deepEqual([patched.name, patched.locale, patched.email], ["Kim", "ko-KR", "kim2@example.com"]);
  assert.equal((await c.getRecipient(id)).email, "kim2@example.com");
  const page = await c.listRecipients({ q: run, limit: 10 });
  assert.ok(page.recipients.some((r) => r.externalId === id));
  const bulk = await c.upsertRecipients([
    { externalId: `${run}-b1`, email: "b1@example.com" },
    { externalId: `${run}-b2`, phone: phone() },
  ]);
  assert.deepEqual(bulk, { total: 2, created: 2, updated: 0 });
  const all: string[] = [];
  for await (const r of c.iterateRecipients({ q: run, limit: 1 })) all.push(r.externalId);
  assert.equal(all.length, 3);

  const byId = await c.send({ channel: "sms", recipient: { id }, content: { text: "by id" } });
  const rec = await c.waitForNotification(byId.requestId, { timeoutMs: 30_000 });
  assert.equal(rec.status, "sent");
  assert.equal(rec.recipientId, id);
  assert.equal(rec.recipientAddress, put.recipient.phone);

  const prefs = await c.putPreferences(id, { channels: { email: false } });
  assert.deepEqual(prefs.channels, { email: false });
  assert.deepEqual((await c.getPreferences(id)).channels, { email: false });
  assert.match((await c.createPreferenceLink(id)).url, /\/v1\/preferences\/page\?token=/);

  // Inbox recipient tokens: minted by the signed call, they open the
  // person's inbox; minted offline with the inbox secret, too.
  const minted = await c.createInboxToken(id, { ttlSeconds: 600 });
  assert.match(minted.token, /^v1\./);
  assert.ok(Date.parse(minted.expiresAt) > Date.now() + 500_000);
  const counts = async (tok: string) => fetch(`${c.baseUrl}/v1/inbox/counts`, { headers: { Authorization: `Bearer ${tok}` } });
  assert.equal((await counts(minted.token)).status, 200);
  if (hasDashboard) {
    const { secret } = await dashboard<{ secret: string }>("POST", "/v1/inbox-settings/rotate-secret");
    const ws = (await dashboard<{ workspace: { id: string } }>("GET", "/v1/workspace")).workspace.id;
    const offline = await mintInboxToken(secret, ws, id, new Date(Date.now() + 600_000));
    const r = await counts(offline);
    assert.equal(r.status, 200, await r.text());
    assert.equal((await counts(minted.token)).status, 401, "the rotation refuses tokens of the old secret");
  } else if (env.NOTIFYD_REQUIRE_LIVE === "1") {
    assert.fail("NOTIFYD_DEMO_EMAIL and NOTIFYD_DEMO_PASSWORD are not set");
  }

  if (hasDashboard) {
    const key = `${run}-orders`;
    await dashboard("POST", "/v1/categories", { key, name: "SDK orders" });
    assert.equal((await c.getCategory(key)).key, key);
    assert.ok((await c.listCategories()).some((cat) => cat.key === key));
    const inCat = await c.send({ channel: "sms", recipient: { id }, content: { text: "order shipped" }, category: key });
    assert.equal((await c.waitForNotification(inCat.requestId, { timeoutMs: 30_000 })).status, "sent");
    await c.putPreferences(id, { categories: { [key]: { sms: false } } });
    const optedOut = await c.send({ channel: "sms", recipient: { id }, content: { text: "order shipped" }, category: key });
    assert.equal(optedOut.status, "canceled");
    assert.equal((await c.getNotification(optedOut.requestId)).finalErrorCode, "preference_opt_out");
  } else {
    skipOrFail({ skip: (m) => t.diagnostic(`partly skipped: ${m}`) }, "NOTIFYD_DEMO_EMAIL/NOTIFYD_DEMO_PASSWORD are not set: no category send");
  }

  for (const r of [id, `${run}-b1`, `${run}-b2`]) await c.deleteRecipient(r);
  await assert.rejects(c.getRecipient(id), (err: unknown) => err instanceof ProblemError && err.status === 404);
});

test("live: a webhook delivery verifies", async (t) => {
  const c = client(t);
  if (!c) return;
  if (!hasDashboard) {
    // No way to register a webhook: verify a delivery signed here the way notifyd signs.
    skipOrFail({ skip: (m) => t.diagnostic(`partly skipped: ${m}`) }, "NOTIFYD_DEMO_EMAIL/NOTIFYD_DEMO_PASSWORD are not set: a locally signed delivery is verified");
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    const body = readJSON<{ webhooks: { sign: Array<{ body: string }> } }>("testdata/vectors.json").webhooks.sign[0].body;
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = createHmac("sha256", Buffer.from(secret.slice(6), "base64")).update(`msg_1.${ts}.${body}`).digest("base64");
    const ev = await verifyWebhook(secret, { "webhook-id": "msg_1", "webhook-timestamp": ts, "webhook-signature": `v1,${sig}` }, body);
    assert.equal(ev.type, "notification.delivered");
    return;
  }
  const got: Array<{ headers: IncomingMessage["headers"]; body: Buffer }> = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (ch: Buffer) => chunks.push(ch));
    req.on("end", () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const hook = await dashboard<{ webhook: { id: string }; secret: string }>("POST", "/v1/webhooks", { url, events: ["notification.delivered"] });
  try {
    const r = await c.send({ channel: "sms", recipient: { address: phone() }, content: { text: "webhook" } });
    await c.waitForNotification(r.requestId, { timeoutMs: 30_000 });
    const deadline = Date.now() + 30_000;
    let delivery: (typeof got)[number] | undefined;
    while (!delivery && Date.now() < deadline) {
      delivery = got.find((d) => JSON.parse(d.body.toString("utf8")).data?.requestId === r.requestId);
      if (!delivery) await new Promise((res) => setTimeout(res, 100));
    }
    assert.ok(delivery, "no webhook delivery for the request within 30 s");
    const headers = delivery.headers as Record<string, string>;
    const ev = await verifyWebhook(hook.secret, headers, delivery.body);
    assert.equal(ev.type, "notification.delivered");
    assert.equal(ev.data.requestId, r.requestId);
    assert.equal(ev.data.status, "sent");
    const tampered = Buffer.from(delivery.body.toString("utf8").replace('"sent"', '"failed"'));
    await assert.rejects(verifyWebhook(hook.secret, headers, tampered), (err: unknown) => err instanceof WebhookVerificationError && err.reason === "signature");
  } finally {
    await dashboard("DELETE", `/v1/webhooks/${hook.webhook.id}`);
    receiver.close();
  }
});

/** Polls run id until `done` holds for it (30 s at most). */
async function waitRun(c: Notifyd, id: string, what: string, done: (r: WorkflowRun) => boolean): Promise<WorkflowRun> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await c.getWorkflowRun(id);
    if (done(r)) return r;
    assert.ok(Date.now() < deadline, `run ${id}: ${what} not within 30 s: ${JSON.stringify(r)}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

test("live: workflows: trigger, the run and its send, an idempotent repeat, cancel, and a topic", async (t) => {
  const c = client(t);
  if (!c) return;
  if (!hasDashboard) {
    skipOrFail(t, "NOTIFYD_DEMO_EMAIL/NOTIFYD_DEMO_PASSWORD are not set: no workflow can be defined");
    return;
  }
  // An SMS template, a one-step workflow that sends it, and one that waits an hour first.
  const code = `${run}-hello`;
  const tpl = await dashboard<{ template: { id: string } }>("POST", "/v1/templates", { code, channel: "sms", name: code });
  await dashboard("POST", `/v1/templates/${tpl.template.id}/versions`, { text: "Hello {{name}} from a workflow" });
  await dashboard("POST", `/v1/templates/${tpl.template.id}/versions/1/publish`);
  const hello = `${run}-hello`;
  const later = `${run}-later`;
  const send = { key: "sms", type: "send", channel: "sms", templateCode: code };
  await dashboard("POST", "/v1/workflows", { key: hello, name: "SDK hello", publish: true, steps: [send] });
  await dashboard("POST", "/v1/workflows", { key: later, name: "SDK later", publish: true, steps: [{ key: "wait", type: "delay", duration: "1h" }, send] });
  const id = `${run}-wf.1`;
  const to = phone();
  await c.putRecipient(id, { name: "Kim", phone: to });

  const idem = `${run}-wf-once`;
  const first = await c.triggerWorkflow(hello, { recipients: [id], payload: { name: "Kim" }, idempotencyKey: idem });
  assert.equal(first.runs.length, 1);
  assert.deepEqual([first.runs[0].recipientId, first.runs[0].deduplicated], [id, false]);
  const runId = first.runs[0].runId;
  const r = await waitRun(c, runId, "the send step's request", (x) => Boolean(x.steps?.find((s) => s.key === "sms")?.requestId));
  assert.deepEqual([r.workflowKey, r.version, r.recipientId, r.payload], [hello, 1, id, { name: "Kim" }]);
  const step = r.steps!.find((s) => s.key === "sms")!;
  assert.equal(step.type, "send");
  assert.deepEqual(r.requestIds, [step.requestId]);
  const sent = await c.waitForNotification(step.requestId!, { timeoutMs: 30_000 });
  assert.equal(sent.status, "sent", JSON.stringify(sent));
  assert.deepEqual([sent.recipientId, sent.recipientAddress], [id, to]);
  assert.equal((await c.waitForWorkflowRun(runId, { timeoutMs: 30_000 })).status, "completed");

  const again = await c.triggerWorkflow(hello, { recipients: [id], payload: { name: "Kim" }, idempotencyKey: idem });
  assert.deepEqual(again.runs, [{ runId, recipientId: id, deduplicated: true }]);
  const runs = await c.listWorkflowRuns({ workflow: hello, recipientId: id });
  assert.deepEqual(runs.runs.map((x) => x.id), [runId], "the repeat started no run");
  assert.equal(runs.hasNext, false);

  // Cancel by cancellation key: the run waiting an hour ends canceled, with no send.
  const cancelKey = `${run}-thread`;
  const waiting = await c.triggerWorkflow(later, { recipients: [id], payload: { name: "Kim" }, cancellationKey: cancelKey });
  assert.equal(waiting.runs[0].deduplicated, false);
  const pending = await waitRun(c, waiting.runs[0].runId, "the delay step", (x) => Boolean(x.steps?.some((s) => s.key === "wait")));
  assert.equal(pending.status, "running");
  assert.equal(pending.cancellationKey, cancelKey);
  assert.deepEqual(await c.cancelWorkflow(later, cancelKey), { canceledRuns: 1 });
  const canceled = await c.getWorkflowRun(waiting.runs[0].runId);
  assert.equal(canceled.status, "canceled");
  assert.deepEqual(canceled.requestIds, []);
  assert.deepEqual(await c.cancelWorkflow(later, cancelKey), { canceledRuns: 0 });

  // A topic: subscribe, trigger by topic, unsubscribe.
  const topic = `${run}-news`;
  assert.deepEqual(await c.subscribeToTopic(topic, id), { subscription: { topic, recipientId: id }, created: true });
  assert.equal((await c.subscribeToTopic(topic, id)).created, false);
  assert.deepEqual(await c.listTopicSubscribers(topic), { subscribers: [id], cursor: null, hasNext: false });
  const byTopic = await c.triggerWorkflow(hello, { topic, payload: { name: "subscriber" } });
  assert.equal(byTopic.runs.length, 1);
  assert.deepEqual([byTopic.runs[0].recipientId, byTopic.runs[0].deduplicated], [id, false]);
  const topicRun = await c.waitForWorkflowRun(byTopic.runs[0].runId, { timeoutMs: 30_000 });
  assert.equal(topicRun.status, "completed", JSON.stringify(topicRun));
  assert.equal((await c.waitForNotification(topicRun.requestIds[0], { timeoutMs: 30_000 })).status, "sent");
  await c.unsubscribeFromTopic(topic, id);
  assert.deepEqual((await c.listTopicSubscribers(topic)).subscribers, []);
  await assert.rejects(c.unsubscribeFromTopic(topic, id), (err: unknown) => err instanceof ProblemError && err.status === 404);
  await assert.rejects(c.triggerWorkflow(`${run}-nope`, { recipients: [id] }), (err: unknown) => err instanceof ProblemError && err.status === 404);
  await c.deleteRecipient(id);
});
