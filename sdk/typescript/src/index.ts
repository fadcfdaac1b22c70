// notifyd's TypeScript SDK: signed Notification API calls, recipients and
// preferences, OTP, workflow triggers and topics, inbox recipient tokens,
// and webhook verification. No runtime dependencies.

export { Notifyd } from "./client.js";
export type { CallOptions, NotifydOptions, PollOptions, WaitOptions } from "./client.js";
export {
  ConnectionError,
  NotifydError,
  ProblemError,
  WaitTimeoutError,
  WebhookVerificationError,
} from "./errors.js";
export type { WebhookErrorReason } from "./errors.js";
export * from "./models.js";
export { bodySha256, newNonce, sign, signHeaders, stringToSign } from "./signing.js";
export type { SignInput } from "./signing.js";
export { verifyWebhook, verifyWebhookSignature } from "./webhook.js";
export { maxInboxTokenTtlSeconds, mintInboxToken } from "./inbox.js";
export type { HeadersLike, VerifyWebhookOptions } from "./webhook.js";
