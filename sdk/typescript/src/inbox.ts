// Recipient tokens of the in-app inbox, minted offline with the
// workspace's inbox secret (POST /v1/inbox-settings/rotate-secret shows
// it once): the same token as POST /v1/recipients/{externalId}/inbox-token
// answers, byte for byte (sdk/testdata/vectors.json, inboxTokens).

import { hmacSha256, toBytes } from "./crypto.js";

/** The longest a recipient token may live (the server refuses longer ones). */
export const maxInboxTokenTtlSeconds = 24 * 60 * 60;

/**
 * A recipient token naming the profile `externalId` of the workspace
 * `workspaceId`, expiring at `expires` (a Date, or Unix seconds), at most
 * 24 hours ahead. Give it to that person's browser or app for `/v1/inbox`;
 * it stops working when it expires or the inbox secret rotates. Keep the
 * secret in your backend: never mint tokens in a browser.
 */
export async function mintInboxToken(
  secret: string,
  workspaceId: string,
  externalId: string,
  expires: Date | number,
): Promise<string> {
  const exp = typeof expires === "number" ? Math.floor(expires) : Math.floor(expires.getTime() / 1000);
  // The payload as Go's encoding/json writes it ({ws, sub, exp}, no
  // spaces, <, > and & escaped), so the token equals the server's.
  const payload = JSON.stringify({ ws: workspaceId, sub: externalId, exp })
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
  const head = "v1." + base64Url(toBytes(payload));
  return head + "." + base64Url(await hmacSha256(secret, head));
}

/** Unpadded base64url of bytes. */
function base64Url(bytes: Uint8Array): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += alphabet[(n >> 18) & 63] + alphabet[(n >> 12) & 63];
    if (i + 1 < bytes.length) out += alphabet[(n >> 6) & 63];
    if (i + 2 < bytes.length) out += alphabet[n & 63];
  }
  return out;
}
