import type { Problem } from "./models.js";

/** The base class of every error this SDK throws. */
export class NotifydError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * An error answer of notifyd: its `application/problem+json` body. A
 * non-problem error answer (a proxy's HTML page) becomes a problem with
 * the HTTP status, the status text as title and an empty code.
 */
export class ProblemError extends NotifydError implements Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  /** SVC-40000, SVC-40100, … (SPEC "Errors"). */
  readonly code: string;
  readonly instance: string;
  readonly timestamp: string;
  /** The body as received. */
  readonly body: string;

  constructor(problem: Problem, body: string) {
    super(`${problem.status} ${problem.code || problem.title}: ${problem.detail || problem.title}`);
    this.type = problem.type;
    this.title = problem.title;
    this.status = problem.status;
    this.detail = problem.detail;
    this.code = problem.code;
    this.instance = problem.instance;
    this.timestamp = problem.timestamp;
    this.body = body;
  }

  /** The problem of an error answer. */
  static fromResponse(status: number, statusText: string, body: string): ProblemError {
    let parsed: Partial<Problem> = {};
    try {
      const v: unknown = JSON.parse(body);
      if (v && typeof v === "object") {
        parsed = v as Partial<Problem>;
      }
    } catch {
      // not JSON: described by the status alone
    }
    const str = (v: unknown, fallback = ""): string => (typeof v === "string" ? v : fallback);
    return new ProblemError(
      {
        type: str(parsed.type, "about:blank"),
        title: str(parsed.title, statusText),
        status: typeof parsed.status === "number" ? parsed.status : status,
        detail: str(parsed.detail),
        code: str(parsed.code),
        instance: str(parsed.instance),
        timestamp: str(parsed.timestamp),
      },
      body,
    );
  }
}

/** No answer: every try failed on the network (or timed out). `cause` is the last failure. */
export class ConnectionError extends NotifydError {
  constructor(
    message: string,
    readonly attempts: number,
    cause: unknown,
  ) {
    super(message, { cause });
  }
}

/** waitForNotification gave up before the request reached a final state. */
export class WaitTimeoutError extends NotifydError {}

/** Why a webhook delivery failed verification. */
export type WebhookErrorReason = "headers" | "timestamp" | "signature" | "secret";

/** A webhook delivery that must not be trusted. */
export class WebhookVerificationError extends NotifydError {
  constructor(readonly reason: WebhookErrorReason) {
    super(
      {
        headers: "webhook: missing webhook-id, webhook-timestamp or webhook-signature header",
        timestamp: "webhook: timestamp outside tolerance",
        signature: "webhook: no matching signature",
        secret: "webhook: secret is not whsec_ + base64",
      }[reason],
    );
  }
}
