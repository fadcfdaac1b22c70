// The golden vectors (sdk/testdata/vectors.json), computed by the Go
// implementation: this SDK must sign and verify exactly as Go does.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  WebhookVerificationError,
  bodySha256,
  mintInboxToken,
  sign,
  signHeaders,
  stringToSign,
  verifyWebhook,
  verifyWebhookSignature,
} from "../dist/index.js";
import { readJSON } from "./helpers.js";

interface Vectors {
  signing: Array<{
    name: string;
    method: string;
    target: string;
    body: string;
    timestamp: string;
    nonce: string;
    apiKey: string;
    hmacSecret: string;
    bodySha256: string;
    stringToSign: string;
    headers: Record<string, string>;
  }>;
  webhooks: {
    sign: Array<{ name: string; secret: string; id: string; timestamp: number; body: string; signature: string }>;
    verify: Array<{
      name: string;
      secret: string;
      headers: Record<string, string>;
      body: string;
      now: number;
      toleranceSeconds: number;
      valid: boolean;
      error: string;
    }>;
  };
  inboxTokens: Array<{ name: string; secret: string; workspaceId: string; externalId: string; exp: number; token: string }>;
}

const v = readJSON<Vectors>("testdata/vectors.json");

for (const c of v.inboxTokens) {
  test(`inbox token: ${c.name}`, async () => {
    assert.equal(await mintInboxToken(c.secret, c.workspaceId, c.externalId, c.exp), c.token);
    assert.equal(await mintInboxToken(c.secret, c.workspaceId, c.externalId, new Date(c.exp * 1000 + 999)), c.token, "a Date, to the second");
  });
}

test("the vectors file has cases of every kind", () => {
  assert.ok(v.signing.length >= 5);
  assert.ok(v.webhooks.sign.length >= 2);
  assert.ok(v.webhooks.verify.filter((c) => c.valid).length >= 3);
  assert.ok(v.webhooks.verify.filter((c) => !c.valid).length >= 10);
  assert.ok(v.inboxTokens.length >= 2);
});

for (const s of v.signing) {
  test(`signing: ${s.name}`, async () => {
    assert.equal(await bodySha256(s.body), s.bodySha256);
    assert.equal(await stringToSign(s.method, s.target, s.timestamp, s.nonce, s.body), s.stringToSign);
    assert.equal(await sign(s.hmacSecret, s.method, s.target, s.timestamp, s.nonce, s.body), s.headers["X-Signature"]);
    // The body as bytes signs the same as the string.
    const bytes = new TextEncoder().encode(s.body);
    const headers = await signHeaders({
      apiKey: s.apiKey,
      hmacSecret: s.hmacSecret,
      method: s.method,
      target: s.target,
      body: bytes,
      timestamp: Number(s.timestamp),
      nonce: s.nonce,
    });
    assert.deepEqual(headers, s.headers);
  });
}

for (const s of v.webhooks.sign) {
  test(`webhook signed by notifyd: ${s.name}`, async () => {
    const headers = { "webhook-id": s.id, "webhook-timestamp": String(s.timestamp), "webhook-signature": s.signature };
    const ev = await verifyWebhook(s.secret, headers, s.body, { now: s.timestamp * 1000 });
    assert.deepEqual(ev, JSON.parse(s.body));
    // As bytes and through a Fetch Headers object too.
    await verifyWebhookSignature(s.secret, new Headers(headers), new TextEncoder().encode(s.body), {
      now: new Date(s.timestamp * 1000),
    });
  });
}

for (const c of v.webhooks.verify) {
  test(`webhook verify: ${c.name}`, async () => {
    const run = verifyWebhookSignature(c.secret, c.headers, c.body, {
      now: c.now * 1000,
      toleranceSeconds: c.toleranceSeconds,
    });
    if (c.valid) {
      await run;
      return;
    }
    await assert.rejects(run, (err: unknown) => {
      assert.ok(err instanceof WebhookVerificationError, String(err));
      assert.equal(err.reason, c.error);
      return true;
    });
  });
}

test("signing and verifying without a global WebCrypto (Node 18 has none): node:crypto's is imported", async () => {
  const desc = Object.getOwnPropertyDescriptor(globalThis, "crypto");
  assert.ok(desc?.configurable, "globalThis.crypto cannot be removed here");
  delete (globalThis as { crypto?: unknown }).crypto;
  try {
    assert.equal((globalThis as { crypto?: unknown }).crypto, undefined);
    const s = v.signing[0];
    assert.equal(await sign(s.hmacSecret, s.method, s.target, s.timestamp, s.nonce, s.body), s.headers["X-Signature"]);
    const w = v.webhooks.sign[0];
    const headers = { "webhook-id": w.id, "webhook-timestamp": String(w.timestamp), "webhook-signature": w.signature };
    await verifyWebhookSignature(w.secret, headers, w.body, { now: w.timestamp * 1000 });
    assert.match((await signHeaders({ apiKey: "k", hmacSecret: "s", method: "GET", target: "/" }))["X-Nonce"], /^[0-9a-f]{32}$/);
  } finally {
    Object.defineProperty(globalThis, "crypto", desc);
  }
});
