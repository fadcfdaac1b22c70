// WebCrypto, hashing and encodings, in browsers and Node 18+ alike. Node
// 18 has WebCrypto only as require("node:crypto").webcrypto (the global
// `crypto` came in Node 19), so it is imported lazily there; the module
// name is held in a variable so that bundlers leave it alone.

const encoder = new TextEncoder();
const nodeCryptoModule = "node:crypto";
let cryptoPromise: Promise<Crypto> | undefined;

/** WebCrypto: the global one, else Node's. */
export function webCrypto(): Promise<Crypto> {
  const g = (globalThis as { crypto?: Crypto }).crypto;
  if (g?.subtle) {
    return Promise.resolve(g);
  }
  cryptoPromise ??= import(/* webpackIgnore: true */ /* @vite-ignore */ nodeCryptoModule).then(
    (m: { webcrypto: Crypto }) => m.webcrypto,
  );
  return cryptoPromise;
}

/** UTF-8 bytes of a string; bytes are returned as they are. */
export function toBytes(data: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof data === "string") {
    return encoder.encode(data);
  }
  return data instanceof Uint8Array ? data : new Uint8Array(data);
}

/** A copy of the bytes as an ArrayBuffer (what WebCrypto and fetch take in every TypeScript version). */
export function toArrayBuffer(data: string | Uint8Array | ArrayBuffer): ArrayBuffer {
  return toBytes(data).slice().buffer as ArrayBuffer;
}

export function hex(bytes: ArrayBuffer | Uint8Array): string {
  let out = "";
  for (const b of new Uint8Array(bytes)) {
    out += b.toString(16).padStart(2, "0");
  }
  return out;
}

export async function sha256(data: string | Uint8Array | ArrayBuffer): Promise<Uint8Array> {
  const c = await webCrypto();
  return new Uint8Array(await c.subtle.digest("SHA-256", toArrayBuffer(data)));
}

export async function hmacSha256(key: string | Uint8Array, data: string | Uint8Array | ArrayBuffer): Promise<Uint8Array> {
  const c = await webCrypto();
  const k = await c.subtle.importKey("raw", toArrayBuffer(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await c.subtle.sign("HMAC", k, toArrayBuffer(data)));
}

export async function randomBytes(n: number): Promise<Uint8Array> {
  const c = await webCrypto();
  return c.getRandomValues(new Uint8Array(n));
}

/** A random UUID (version 4). */
export async function uuid4(): Promise<string> {
  const b = await randomBytes(16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = hex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
// Standard, padded base64, as Go's base64.StdEncoding reads it.
const strictBase64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Standard padded base64 of bytes. */
export function base64Encode(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += base64Alphabet[(n >> 18) & 63] + base64Alphabet[(n >> 12) & 63];
    out += i + 1 < bytes.length ? base64Alphabet[(n >> 6) & 63] : "=";
    out += i + 2 < bytes.length ? base64Alphabet[n & 63] : "=";
  }
  return out;
}

/** Decodes standard padded base64; undefined when s is not that. */
export function base64Decode(s: string): Uint8Array | undefined {
  if (!strictBase64.test(s)) {
    return undefined;
  }
  const body = s.replace(/=+$/, "");
  const out = new Uint8Array(Math.floor((body.length * 3) / 4));
  let bits = 0;
  let acc = 0;
  let j = 0;
  for (const ch of body) {
    acc = (acc << 6) | base64Alphabet.indexOf(ch);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[j++] = (acc >> bits) & 0xff;
    }
  }
  return out;
}

/** Compares two strings in time that depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) {
    return false;
  }
  let diff = 0;
  for (let i = 0; i < a.length; i++) {
    diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  }
  return diff === 0;
}
