// The Notification API's request signature (API-DECISIONS section 3), as
// the Go client (client/client.go) computes it.

import { hex, hmacSha256, randomBytes, sha256 } from "./crypto.js";

/** Lower-case hex SHA-256 of the raw body (of "" when there is none). */
export async function bodySha256(body: string | Uint8Array | ArrayBuffer = ""): Promise<string> {
  return hex(await sha256(body));
}

/**
 * The signed string: METHOD (upper case), the request target exactly as
 * sent (path plus `?query`), X-Timestamp, X-Nonce and the body's hex
 * SHA-256, joined by line feeds.
 */
export async function stringToSign(
  method: string,
  target: string,
  timestamp: string,
  nonce: string,
  body: string | Uint8Array | ArrayBuffer = "",
): Promise<string> {
  return [method.toUpperCase(), target, timestamp, nonce, await bodySha256(body)].join("\n");
}

/** The X-Signature value: lower-case hex HMAC-SHA256(hmacSecret, string to sign). */
export async function sign(
  hmacSecret: string,
  method: string,
  target: string,
  timestamp: string,
  nonce: string,
  body: string | Uint8Array | ArrayBuffer = "",
): Promise<string> {
  return hex(await hmacSha256(hmacSecret, await stringToSign(method, target, timestamp, nonce, body)));
}

/** A random nonce: 32 hex characters. */
export async function newNonce(): Promise<string> {
  return hex(await randomBytes(16));
}

export interface SignInput {
  apiKey: string;
  hmacSecret: string;
  method: string;
  /** Path plus `?query`, exactly as the request line will carry it. */
  target: string;
  body?: string | Uint8Array | ArrayBuffer;
  /** Unix seconds; now when absent. */
  timestamp?: number | string;
  /** A fresh random nonce when absent. */
  nonce?: string;
}

/** The four signature headers of one request. Every retry must be signed anew. */
export async function signHeaders(input: SignInput): Promise<Record<string, string>> {
  const timestamp = String(input.timestamp ?? Math.floor(Date.now() / 1000));
  const nonce = input.nonce ?? (await newNonce());
  return {
    "X-API-Key": input.apiKey,
    "X-Timestamp": timestamp,
    "X-Nonce": nonce,
    "X-Signature": await sign(input.hmacSecret, input.method, input.target, timestamp, nonce, input.body ?? ""),
  };
}
