// Webhook signature verification, as the Go client's VerifyWebhook
// (client/webhook.go) does it: the Standard Webhooks convention.

import { base64Decode, base64Encode, constantTimeEqual, hmacSha256, toBytes } from "./crypto.js";
import { WebhookVerificationError } from "./errors.js";
import type { WebhookEvent } from "./models.js";

/** Headers as a Fetch `Headers`, or an object such as Node's `req.headers`. */
export type HeadersLike = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Allowed distance between webhook-timestamp and now, in seconds; 0 or absent means 300. */
  toleranceSeconds?: number;
  /** The clock: a Date or Unix milliseconds; now when absent. */
  now?: Date | number;
}

function header(headers: HeadersLike, name: string): string {
  if (typeof (headers as { get?: unknown }).get === "function") {
    return (headers as { get(name: string): string | null }).get(name) ?? "";
  }
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === name) {
      return (Array.isArray(v) ? v[0] : v) ?? "";
    }
  }
  return "";
}

/**
 * Checks a webhook delivery: webhook-timestamp must be within tolerance of
 * now, and one of the space-separated `v1,<base64>` entries of
 * webhook-signature must equal base64(HMAC-SHA256(key, id + "." +
 * timestamp + "." + body)), key being the bytes of the base64 after
 * `whsec_` in secret. `body` must be the raw bytes received, before any
 * JSON parsing. During a secret rotation deliveries carry two signatures,
 * so the old or the new secret verifies. Throws WebhookVerificationError.
 */
export async function verifyWebhookSignature(
  secret: string,
  headers: HeadersLike,
  body: string | Uint8Array | ArrayBuffer,
  options: VerifyWebhookOptions = {},
): Promise<void> {
  const key = base64Decode(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
  if (!key || key.length === 0) {
    throw new WebhookVerificationError("secret");
  }
  const id = header(headers, "webhook-id");
  const ts = header(headers, "webhook-timestamp");
  const sigs = header(headers, "webhook-signature");
  if (!id || !ts || !sigs) {
    throw new WebhookVerificationError("headers");
  }
  if (!/^[+-]?\d+$/.test(ts)) {
    throw new WebhookVerificationError("timestamp");
  }
  const tolerance = options.toleranceSeconds && options.toleranceSeconds > 0 ? options.toleranceSeconds : 300;
  const nowMs = options.now === undefined ? Date.now() : options.now instanceof Date ? options.now.getTime() : options.now;
  const age = nowMs / 1000 - Number(ts);
  if (age > tolerance || age < -tolerance) {
    throw new WebhookVerificationError("timestamp");
  }
  const raw = toBytes(body);
  const prefix = toBytes(`${id}.${ts}.`);
  const signed = new Uint8Array(prefix.length + raw.length);
  signed.set(prefix);
  signed.set(raw, prefix.length);
  // Compared as the text notifyd sends (standard base64, padded).
  const want = base64Encode(await hmacSha256(key, signed));
  for (const entry of sigs.split(/\s+/)) {
    const comma = entry.indexOf(",");
    if (comma > 0 && entry.slice(0, comma) === "v1" && constantTimeEqual(entry.slice(comma + 1), want)) {
      return;
    }
  }
  throw new WebhookVerificationError("signature");
}

/** verifyWebhookSignature, then the delivery's body parsed. */
export async function verifyWebhook(
  secret: string,
  headers: HeadersLike,
  body: string | Uint8Array | ArrayBuffer,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  await verifyWebhookSignature(secret, headers, body, options);
  const text = typeof body === "string" ? body : new TextDecoder().decode(toBytes(body));
  return JSON.parse(text) as WebhookEvent;
}
