// The notifyd client: signed Notification API calls with retries.

import { toArrayBuffer, uuid4 } from "./crypto.js";
import { ConnectionError, NotifydError, ProblemError, WaitTimeoutError } from "./errors.js";
import type {
  BulkSendResult,
  CancelResult,
  Category,
  InboxToken,
  NotificationRequest,
  NotificationStatus,
  OtpSendRequest,
  OtpSendResult,
  OtpSession,
  OtpVerifyResult,
  PreferenceLink,
  Preferences,
  RecipientBulkItem,
  RecipientBulkResult,
  RecipientInput,
  RecipientPage,
  RecipientProfile,
  SendRequest,
  SendResult,
  TopicSubscriberPage,
  TopicSubscription,
  WorkflowCancelResult,
  WorkflowRun,
  WorkflowRunPage,
  WorkflowTriggerRequest,
  WorkflowTriggerResult,
} from "./models.js";
import { signHeaders } from "./signing.js";

export interface NotifydOptions {
  /** The server, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** `<key_id>.<key_secret>` */
  apiKey: string;
  hmacSecret: string;
  /**
   * Further tries after a network error or a timeout (default 2), for the
   * calls that are safe to repeat: sends and workflow triggers (with their
   * idempotency key), reads, cancels, the recipient and preference writes
   * and topic subscriptions. OTP send, resend and verify are never
   * repeated: the server has no idempotency key for them, and a repeat
   * could send a second code or spend an attempt. An answer of the server,
   * error or not, is never retried.
   */
  maxRetries?: number;
  /** Wait before the first retry in milliseconds, doubled for each next one (default 500). */
  retryDelayMs?: number;
  /** Timeout of one try in milliseconds (default 30000). */
  timeoutMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

export interface CallOptions {
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
}

export interface PollOptions extends CallOptions {
  /** Give up after this long (default 60000 ms). */
  timeoutMs?: number;
  /** Poll interval (default 500 ms). */
  intervalMs?: number;
}

export interface WaitOptions extends PollOptions {
  /** The statuses to wait for (default the final ones: sent, failed, canceled). */
  until?: NotificationStatus[];
}

interface Call extends CallOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  retry: boolean;
}

const finalStatuses: NotificationStatus[] = ["sent", "failed", "canceled"];

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

const seg = encodeURIComponent;

/** Reads with get until done holds, every intervalMs, for timeoutMs at most. */
async function poll<T extends { status: string }>(
  get: () => Promise<T>,
  done: (t: T) => boolean,
  what: string,
  options: PollOptions,
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const r = await get();
    if (done(r)) {
      return r;
    }
    if (Date.now() >= deadline) {
      throw new WaitTimeoutError(`notifyd: ${what} still ${r.status}`);
    }
    await sleep(options.intervalMs ?? 500, options.signal);
  }
}

export class Notifyd {
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly hmacSecret: string;
  private readonly maxRetries: number;
  private readonly retryDelayMs: number;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(options: NotifydOptions) {
    if (!options.baseUrl || !options.apiKey || !options.hmacSecret) {
      throw new NotifydError("notifyd: baseUrl, apiKey and hmacSecret are required");
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.apiKey = options.apiKey;
    this.hmacSecret = options.hmacSecret;
    this.maxRetries = Math.max(0, options.maxRetries ?? 2);
    this.retryDelayMs = options.retryDelayMs ?? 500;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    const f = options.fetch ?? globalThis.fetch;
    if (!f) {
      throw new NotifydError("notifyd: no fetch: pass options.fetch");
    }
    this.fetchImpl = f;
  }

  /**
   * A client from NOTIFYD_URL, NOTIFYD_API_KEY and NOTIFYD_HMAC_SECRET
   * (what `notifyd serve --demo` prints); `env` defaults to `process.env`.
   */
  static fromEnv(env?: Record<string, string | undefined>, options: Partial<NotifydOptions> = {}): Notifyd {
    const e = env ?? (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
    const need = (name: string): string => {
      const v = e[name];
      if (!v) {
        throw new NotifydError(`notifyd: ${name} is not set`);
      }
      return v;
    };
    return new Notifyd({
      baseUrl: need("NOTIFYD_URL"),
      apiKey: need("NOTIFYD_API_KEY"),
      hmacSecret: need("NOTIFYD_HMAC_SECRET"),
      ...options,
    });
  }

  // -- notifications ------------------------------------------------------

  /**
   * Sends one notification (`POST /v1/notifications`). Without an
   * `idempotencyKey` one is generated, so retries cannot send twice.
   */
  async send(request: SendRequest, options: CallOptions = {}): Promise<SendResult> {
    const body = await withIdempotencyKey(request);
    return this.data<SendResult>("POST", "/v1/notifications", { ...options, body, retry: true });
  }

  /** Sends up to 500 notifications in one call (`POST /v1/notifications/bulk`). */
  async sendBulk(
    items: SendRequest[],
    options: CallOptions & { lane?: "transactional" | "bulk" } = {},
  ): Promise<BulkSendResult> {
    const body = { items: await Promise.all(items.map(withIdempotencyKey)), lane: options.lane };
    return this.data<BulkSendResult>("POST", "/v1/notifications/bulk", { signal: options.signal, body, retry: true });
  }

  /** The request's record with its job and attempts (`GET /v1/notifications/{requestId}`). */
  getNotification(requestId: string, options: CallOptions = {}): Promise<NotificationRequest> {
    return this.data("GET", `/v1/notifications/${seg(requestId)}`, { ...options, retry: true });
  }

  /** Cancels a request not yet final; `canceled` says whether this call did it. */
  cancelNotification(requestId: string, options: CallOptions = {}): Promise<CancelResult> {
    return this.data("POST", `/v1/notifications/${seg(requestId)}/cancel`, { ...options, retry: true });
  }

  /** Polls the status lookup until the request is final (or in `until`). Throws WaitTimeoutError. */
  waitForNotification(requestId: string, options: WaitOptions = {}): Promise<NotificationRequest> {
    const until = options.until ?? finalStatuses;
    return poll(() => this.getNotification(requestId, options), (r) => until.includes(r.status), `request ${requestId}`, options);
  }

  // -- OTP ------------------------------------------------------------------

  /** Sends a code or link (`POST /v1/otp`). Not retried. */
  sendOtp(request: OtpSendRequest, options: CallOptions = {}): Promise<OtpSendResult> {
    return this.data("POST", "/v1/otp", { ...options, body: request, retry: false });
  }

  /** Checks a code; HTTP 200 either way, the outcome is in `status`. Not retried. */
  verifyOtp(verificationId: string, code: string, options: CallOptions = {}): Promise<OtpVerifyResult> {
    return this.data("POST", `/v1/otp/${seg(verificationId)}/verify`, { ...options, body: { code }, retry: false });
  }

  /** Sends a new code (the old one stops working). Not retried. */
  resendOtp(verificationId: string, options: CallOptions = {}): Promise<OtpSendResult> {
    return this.data("POST", `/v1/otp/${seg(verificationId)}/resend`, { ...options, retry: false });
  }

  /** The session; poll it to see a link-mode session verified. */
  getOtp(verificationId: string, options: CallOptions = {}): Promise<OtpSession> {
    return this.data("GET", `/v1/otp/${seg(verificationId)}`, { ...options, retry: true });
  }

  // -- recipients and preferences -------------------------------------------

  /** Creates or replaces a profile: fields not given are emptied. */
  async putRecipient(
    externalId: string,
    fields: RecipientInput,
    options: CallOptions = {},
  ): Promise<{ recipient: RecipientProfile; created: boolean }> {
    const r = await this.request<{ recipient: RecipientProfile }>("PUT", `/v1/recipients/${seg(externalId)}`, {
      ...options,
      body: fields,
      retry: true,
    });
    return { recipient: r.data.recipient, created: r.status === 201 };
  }

  /** Changes only the fields given (null clears one). */
  async patchRecipient(externalId: string, fields: RecipientInput, options: CallOptions = {}): Promise<RecipientProfile> {
    const path = `/v1/recipients/${seg(externalId)}`;
    return (await this.data<{ recipient: RecipientProfile }>("PATCH", path, { ...options, body: fields, retry: true }))
      .recipient;
  }

  async getRecipient(externalId: string, options: CallOptions = {}): Promise<RecipientProfile> {
    const path = `/v1/recipients/${seg(externalId)}`;
    return (await this.data<{ recipient: RecipientProfile }>("GET", path, { ...options, retry: true })).recipient;
  }

  /** Erases a profile (the key needs recipients:write; 404 when there is none). */
  async deleteRecipient(externalId: string, options: CallOptions = {}): Promise<void> {
    await this.request("DELETE", `/v1/recipients/${seg(externalId)}`, { ...options, retry: true });
  }

  /** One page of profiles, newest first; `q` searches id, name, email and phone. */
  listRecipients(
    params: { q?: string; limit?: number; cursor?: string } = {},
    options: CallOptions = {},
  ): Promise<RecipientPage> {
    return this.data("GET", "/v1/recipients", { ...options, query: params, retry: true });
  }

  /** Every profile, page after page. */
  async *iterateRecipients(
    params: { q?: string; limit?: number } = {},
    options: CallOptions = {},
  ): AsyncGenerator<RecipientProfile> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.listRecipients({ ...params, cursor }, options);
      yield* page.recipients;
      if (!page.hasNext || !page.cursor) {
        return;
      }
      cursor = page.cursor;
    }
  }

  /** Creates or replaces up to 1,000 profiles in one transaction. */
  upsertRecipients(items: RecipientBulkItem[], options: CallOptions = {}): Promise<RecipientBulkResult> {
    return this.data("POST", "/v1/recipients/bulk", { ...options, body: { items }, retry: true });
  }

  async getPreferences(externalId: string, options: CallOptions = {}): Promise<Preferences> {
    const path = `/v1/recipients/${seg(externalId)}/preferences`;
    return (await this.data<{ preferences: Preferences }>("GET", path, { ...options, retry: true })).preferences;
  }

  /** Replaces the recipient's preferences. */
  async putPreferences(externalId: string, preferences: Preferences, options: CallOptions = {}): Promise<Preferences> {
    const path = `/v1/recipients/${seg(externalId)}/preferences`;
    const r = await this.data<{ preferences: Preferences }>("PUT", path, { ...options, body: preferences, retry: true });
    return r.preferences;
  }

  /** A signed link to the recipient's preference page. */
  createPreferenceLink(externalId: string, options: CallOptions = {}): Promise<PreferenceLink> {
    return this.data("POST", `/v1/recipients/${seg(externalId)}/preference-link`, { ...options, retry: true });
  }

  /**
   * Mints a recipient token of the in-app inbox for the profile (the key
   * needs recipients:write; 404 when there is no such profile). It lives
   * `ttlSeconds` (60 to 86400, default 3600). mintInboxToken makes the same
   * token offline with the workspace's inbox secret.
   */
  createInboxToken(externalId: string, options: CallOptions & { ttlSeconds?: number } = {}): Promise<InboxToken> {
    const { ttlSeconds, ...call } = options;
    const body = ttlSeconds === undefined ? undefined : { ttlSeconds };
    return this.data("POST", `/v1/recipients/${seg(externalId)}/inbox-token`, { ...call, body, retry: true });
  }

  async listCategories(options: CallOptions = {}): Promise<Category[]> {
    return (await this.data<{ categories: Category[] }>("GET", "/v1/categories", { ...options, retry: true })).categories;
  }

  async getCategory(key: string, options: CallOptions = {}): Promise<Category> {
    return (await this.data<{ category: Category }>("GET", `/v1/categories/${seg(key)}`, { ...options, retry: true }))
      .category;
  }

  // -- workflows and topics -------------------------------------------------

  /**
   * Starts the published version of workflow `key`, one run per recipient
   * (or per subscriber of `topic`), answering 202 with the runs
   * (`POST /v1/workflows/{key}/trigger`). Without an `idempotencyKey` one is
   * generated, so retries cannot start the runs twice.
   */
  async triggerWorkflow(key: string, request: WorkflowTriggerRequest, options: CallOptions = {}): Promise<WorkflowTriggerResult> {
    const body = await withIdempotencyKey(request);
    return this.data("POST", `/v1/workflows/${seg(key)}/trigger`, { ...options, body, retry: true });
  }

  /** Stops every running run of workflow `key` triggered with `cancellationKey`. */
  cancelWorkflow(key: string, cancellationKey: string, options: CallOptions = {}): Promise<WorkflowCancelResult> {
    const path = `/v1/workflows/${seg(key)}/cancel`;
    return this.data("POST", path, { ...options, body: { cancellationKey }, retry: true });
  }

  /** The run with its reached steps and the requests it created (`GET /v1/workflow-runs/{id}`). */
  async getWorkflowRun(runId: string, options: CallOptions = {}): Promise<WorkflowRun> {
    const path = `/v1/workflow-runs/${seg(runId)}`;
    return (await this.data<{ run: WorkflowRun }>("GET", path, { ...options, retry: true })).run;
  }

  /** Polls the run until it has ended (its status is no longer `running`). Throws WaitTimeoutError. */
  waitForWorkflowRun(runId: string, options: PollOptions = {}): Promise<WorkflowRun> {
    return poll(() => this.getWorkflowRun(runId, options), (r) => r.status !== "running", `workflow run ${runId}`, options);
  }

  /** One page of runs, newest first, of a workflow (its key), of a recipient, or both. */
  listWorkflowRuns(
    params: { workflow?: string; recipientId?: string; limit?: number; cursor?: string } = {},
    options: CallOptions = {},
  ): Promise<WorkflowRunPage> {
    return this.data("GET", "/v1/workflow-runs", { ...options, query: params, retry: true });
  }

  /** Subscribes a profile to a topic; `created` is false when it already was. */
  async subscribeToTopic(
    topic: string,
    externalId: string,
    options: CallOptions = {},
  ): Promise<{ subscription: TopicSubscription; created: boolean }> {
    const path = `/v1/topics/${seg(topic)}/subscribers/${seg(externalId)}`;
    const r = await this.request<TopicSubscription>("PUT", path, { ...options, retry: true });
    return { subscription: r.data, created: r.status === 201 };
  }

  /** Unsubscribes a profile (404 when it was not subscribed). */
  async unsubscribeFromTopic(topic: string, externalId: string, options: CallOptions = {}): Promise<void> {
    await this.request("DELETE", `/v1/topics/${seg(topic)}/subscribers/${seg(externalId)}`, { ...options, retry: true });
  }

  /** One page of a topic's subscribers (external ids, in order). */
  listTopicSubscribers(
    topic: string,
    params: { limit?: number; cursor?: string } = {},
    options: CallOptions = {},
  ): Promise<TopicSubscriberPage> {
    return this.data("GET", `/v1/topics/${seg(topic)}/subscribers`, { ...options, query: params, retry: true });
  }

  // -- the wire -------------------------------------------------------------

  private async data<T>(method: string, path: string, call: Call): Promise<T> {
    return (await this.request<T>(method, path, call)).data;
  }

  /**
   * One signed call: the body is serialized once, and those bytes are both
   * signed and sent; each try is signed anew (fresh timestamp and nonce).
   * The envelope's `data` is unwrapped; an error answer throws ProblemError.
   */
  private async request<T>(method: string, path: string, call: Call): Promise<{ status: number; data: T }> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(call.query ?? {})) {
      if (v !== undefined) {
        url.searchParams.set(k, String(v));
      }
    }
    const target = url.pathname + url.search;
    const text = call.body === undefined ? undefined : JSON.stringify(call.body);
    const body = toArrayBuffer(text ?? "");
    const tries = call.retry ? this.maxRetries + 1 : 1;
    for (let attempt = 1; ; attempt++) {
      const headers: Record<string, string> = {
        ...(await signHeaders({ apiKey: this.apiKey, hmacSecret: this.hmacSecret, method, target, body })),
        Accept: "application/json",
      };
      if (text !== undefined) {
        headers["Content-Type"] = "application/json";
      }
      let res: Response;
      let resText: string;
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new NotifydError(`timed out after ${this.timeoutMs} ms`)), this.timeoutMs);
      const onAbort = () => timeout.abort(call.signal?.reason);
      call.signal?.addEventListener("abort", onAbort, { once: true });
      try {
        res = await this.fetchImpl(url.href, {
          method,
          headers,
          body: text === undefined ? undefined : body,
          signal: timeout.signal,
        });
        resText = await res.text();
      } catch (err) {
        if (call.signal?.aborted) {
          throw call.signal.reason ?? err;
        }
        if (attempt >= tries) {
          const why = timeout.signal.aborted ? String(timeout.signal.reason?.message ?? "timeout") : String(err);
          throw new ConnectionError(`notifyd: ${method} ${target}: ${why} (${attempt} tries)`, attempt, err);
        }
        await sleep(this.retryDelayMs * 2 ** (attempt - 1), call.signal);
        continue;
      } finally {
        clearTimeout(timer);
        call.signal?.removeEventListener("abort", onAbort);
      }
      if (!res.ok) {
        throw ProblemError.fromResponse(res.status, res.statusText, resText);
      }
      return { status: res.status, data: unwrap(resText) as T };
    }
  }
}

/** The body's envelope `data`, the body itself when it has none, undefined when empty. */
function unwrap(text: string): unknown {
  if (text === "") {
    return undefined;
  }
  const v: unknown = JSON.parse(text);
  if (v && typeof v === "object" && "data" in v && "meta" in v) {
    return (v as { data: unknown }).data;
  }
  return v;
}

async function withIdempotencyKey<T extends { idempotencyKey?: string }>(r: T): Promise<T> {
  return r.idempotencyKey ? r : { ...r, idempotencyKey: await uuid4() };
}
