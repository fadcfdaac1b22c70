// Hand-written models of notifyd's Notification API. Each interface names
// the OpenAPI schema (openapi/openapi.yaml, served at GET /openapi.yaml) it
// follows with a `@schema` tag; test/models.test.ts checks that every field
// named here exists in that schema and that every field the schema
// requires is here. `@event` marks the webhook delivery body, checked
// against the golden vectors (sdk/testdata/vectors.json) instead.

/** The channel values of SPEC. `chata_bot` and `chatb_bot` are accepted but in preparation for sending. */
export type Channel =
  | "sms"
  | "msgr_alimtalk"
  | "email"
  | "push_mobile"
  | "chata_webhook"
  | "chatb_webhook"
  | "chata_bot"
  | "chatb_bot";

export type NotificationStatus = "queued" | "processing" | "sent" | "failed" | "canceled";
export type JobStatus = "scheduled" | "queued" | "processing" | "retrying" | "dead_letter" | "completed" | "failed" | "canceled";
export type OtpChannel = "sms" | "msgr_alimtalk" | "email";
export type OtpMode = "code" | "link";
export type StringMap = Record<string, string>;

/**
 * Who receives a send: exactly one of `address` and `id` (the external id
 * of a recipient profile).
 * @schema Recipient
 */
export interface Recipient {
  address?: string;
  id?: string;
  name?: string;
}

/**
 * `text` is required unless `templateCode` names a template.
 * @schema Content
 */
export interface Content {
  text?: string;
  title?: string;
  html?: string;
  templateCode?: string;
  templateVariables?: StringMap;
}

/** @schema ChannelFallbackStep */
export interface ChannelFallbackStep {
  channel: Channel;
  recipient?: Recipient;
  content?: Content;
}

/** @schema SendWindowIn */
export interface SendWindow {
  /** `HH:MM-HH:MM` */
  hours: string;
  days?: Array<"mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun">;
  timeZone?: string;
}

/**
 * The body of `POST /v1/notifications` and of each bulk item. A scheduled
 * send sets `scheduledAt` (strict ISO 8601, future); a template send sets
 * `content.templateCode`; a send to a profile sets `recipient.id`.
 * When `idempotencyKey` is absent the SDK generates one, so that a retry
 * after a network error cannot send twice.
 * @schema SendRequest
 */
export interface SendRequest {
  channel: Channel;
  recipient: Recipient;
  content: Content;
  idempotencyKey?: string;
  scheduledAt?: string;
  preferredProviderAccountIds?: string[];
  metadata?: StringMap;
  category?: string;
  locale?: string;
  urgent?: boolean;
  sendWindow?: SendWindow;
  channelFallback?: ChannelFallbackStep[];
}

/** @schema SendResult */
export interface SendResult {
  status: NotificationStatus;
  requestId: string;
  queueJobId: string | null;
  deduplicated: boolean;
  scheduledAt: string | null;
}

/** @schema BulkSendRequest */
export interface BulkSendRequest {
  items: SendRequest[];
  lane?: "transactional" | "bulk";
}

/** @schema BulkSendResult */
export interface BulkSendResult {
  status: string;
  total: number;
  queued: number;
  deduplicated: number;
  items: SendResult[];
}

/** @schema CancelResult */
export interface CancelResult {
  requestId: string;
  status: NotificationStatus;
  canceled: boolean;
}

/** @schema ErrorInfo */
export interface ErrorInfo {
  code: string;
  message: string;
}

/** @schema QueueJob */
export interface QueueJob {
  id: string;
  queueJobId: string;
  status: JobStatus;
  attemptsMade: number;
  maxAttempts: number;
  queuedAt: string | null;
  scheduledAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  lastError: ErrorInfo | null;
}

/** @schema Attempt */
export interface Attempt {
  notificationJobId: string | null;
  providerAccountId: string;
  providerKind: string;
  providerDisplayName: string;
  status: "success" | "failure";
  failureCode: string | null;
  failureMessage: string | null;
  providerMessageId: string | null;
  startedAt: string;
  finishedAt: string | null;
  channel?: Channel;
}

/** @schema ChannelFallbackProgress */
export interface ChannelFallbackProgress {
  currentStep: number;
  currentChannel: Channel;
  steps: Array<{
    step: number;
    channel: Channel;
    recipientAddress: string;
    templateCode: string | null;
    status: "pending" | "active" | "sent" | "failed" | "canceled" | "skipped";
  }>;
}

/**
 * A notification request as the status lookup answers it.
 * @schema NotificationRequest
 */
export interface NotificationRequest {
  requestId: string;
  workspaceId: string;
  channel: Channel;
  status: NotificationStatus;
  recipientAddress: string;
  recipientId?: string | null;
  requestedAt: string;
  scheduledAt: string | null;
  selectedProviderAccountId: string | null;
  selectedProviderMessageId: string | null;
  finalErrorCode: string | null;
  finalErrorMessage: string | null;
  job: QueueJob | null;
  attempts: Attempt[];
  deliveredChannel?: Channel | null;
  channelFallback?: ChannelFallbackProgress | null;
  /** Signed with a test-mode key: answered by the built-in simulator, no vendor called. */
  test?: boolean;
}

/** @schema OtpSendRequest */
export interface OtpSendRequest {
  channel: OtpChannel;
  /** Phone number or email address. */
  to: string;
  mode?: OtpMode;
  purpose?: string;
  brandName?: string;
  recipientName?: string;
  /** Required for `msgr_alimtalk`. */
  templateCode?: string;
  templateVariables?: StringMap;
  preferredProviderAccountIds?: string[];
  /** The end user's IP address as your backend saw it (fraud guard). */
  clientIp?: string;
}

/** @schema OtpSendResult */
export interface OtpSendResult {
  verificationId: string;
  status: "pending";
  mode: OtpMode;
  channel: OtpChannel;
  expiresAt: string;
  resendAvailableAt: string;
}

/** @schema OtpVerifyResult */
export interface OtpVerified {
  status: "verified";
  verificationToken: string;
  verifiedAt: string;
}

/** @schema OtpVerifyResult */
export interface OtpVerifyFailed {
  status: "failed";
  reason: "expired" | "not_code_mode" | "too_many_attempts" | "invalid_code";
  attemptsRemaining: number;
}

/** A verify answers 200 either way: the outcome is in `status`. */
export type OtpVerifyResult = OtpVerified | OtpVerifyFailed;

/** @schema OtpSession */
export interface OtpSession {
  verificationId: string;
  status: "pending" | "verified" | "expired" | "failed" | "canceled";
  channel: OtpChannel;
  mode: OtpMode;
  purpose: string;
  recipientMasked: string;
  attempts: number;
  resendCount: number;
  expiresAt: string;
  verifiedAt: string | null;
  resendAvailableAt?: string;
  verificationToken?: string;
}

/**
 * The fields of a recipient put, patch or bulk item. A put empties every
 * field not given; a patch changes only those given; null clears one.
 * @schema RecipientInput
 */
export interface RecipientInput {
  name?: string | null;
  phone?: string | null;
  email?: string | null;
  pushTokens?: string[] | null;
  chatTargets?: StringMap | null;
  timeZone?: string | null;
  locale?: string | null;
  attributes?: StringMap | null;
}

/** @schema RecipientBulkItem */
export interface RecipientBulkItem extends RecipientInput {
  externalId: string;
}

/** @schema RecipientProfile */
export interface RecipientProfile {
  externalId: string;
  name: string | null;
  phone: string | null;
  email: string | null;
  pushTokens: string[];
  chatTargets: StringMap;
  timeZone: string | null;
  locale: string | null;
  attributes: StringMap;
  createdAt: string;
  updatedAt: string;
}

/** @schema RecipientPage */
export interface RecipientPage {
  recipients: RecipientProfile[];
  cursor: string | null;
  hasNext: boolean;
}

/** @schema RecipientBulkResult */
export interface RecipientBulkResult {
  total: number;
  created: number;
  updated: number;
}

/**
 * Per channel a switch, and per category key a switch per channel; a
 * channel left out is no choice.
 * @schema Preferences
 */
export interface Preferences {
  channels?: Partial<Record<Channel, boolean>>;
  categories?: Record<string, Partial<Record<Channel, boolean>>>;
}

/** @schema PreferenceLinkBody */
export interface PreferenceLink {
  url: string;
  expiresAt: string;
}

/**
 * A recipient token of the in-app inbox, for the person's browser or app.
 * @schema InboxToken
 */
export interface InboxToken {
  token: string;
  expiresAt: string;
}

/** @schema FrequencyCap */
export interface FrequencyCap {
  max: number;
  windowSeconds: number;
  mode?: "drop" | "defer";
}

/** @schema Category */
export interface Category {
  key: string;
  name: string;
  description: string | null;
  required: boolean;
  defaultChannels: Channel[];
  advertising: boolean;
  frequencyCap: FrequencyCap | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * The body of `POST /v1/workflows/{key}/trigger`: `recipients` (1 to 1,000
 * external ids of existing profiles) or `topic` (one run per subscriber).
 * The payload's fields are the send steps' template variables. Without an
 * `idempotencyKey` the SDK generates one, so that a retry after a network
 * error cannot start the runs twice.
 * @schema triggerWorkflow.request
 */
export interface WorkflowTriggerRequest {
  recipients?: string[];
  topic?: string;
  payload?: Record<string, unknown>;
  idempotencyKey?: string;
  cancellationKey?: string;
}

/**
 * One run a trigger started; `deduplicated` when the recipient already had
 * a run of the workflow with the trigger's idempotency key.
 * @schema triggerWorkflow.202.data.runs[]
 */
export interface WorkflowTriggeredRun {
  runId: string;
  recipientId: string;
  deduplicated: boolean;
}

/** @schema triggerWorkflow.202.data */
export interface WorkflowTriggerResult {
  runs: WorkflowTriggeredRun[];
}

/** @schema cancelWorkflowRuns.200.data */
export interface WorkflowCancelResult {
  /** How many running runs this call stopped. */
  canceledRuns: number;
}

export type WorkflowRunStatus = "running" | "completed" | "canceled" | "throttled" | "digested" | "failed";

/**
 * A reached step of a run; a send step's `requestId` is its notification
 * request (see getNotification).
 * @schema WorkflowRun.steps[]
 */
export interface WorkflowRunStep {
  index: number;
  key: string;
  type: "send" | "delay" | "branch" | "throttle" | "digest";
  status: "pending" | "done" | "failed" | "canceled";
  outcome: string | null;
  requestId: string | null;
  dueAt: string;
  createdAt: string;
  endedAt: string | null;
}

/** @schema WorkflowRun.digest */
export interface WorkflowDigest {
  count: number;
  items: Array<Record<string, unknown>>;
}

/** @schema WorkflowRun */
export interface WorkflowRun {
  id: string;
  workflowKey: string;
  version: number;
  recipientId: string;
  status: WorkflowRunStatus;
  payload: Record<string, unknown>;
  cancellationKey: string | null;
  digest: WorkflowDigest | null;
  createdAt: string;
  updatedAt: string;
  endedAt: string | null;
  /** The reached steps in step order (absent before the first is reached). */
  steps?: WorkflowRunStep[];
  /** The notification requests the run's send steps created. */
  requestIds: string[];
}

/** @schema listWorkflowRuns.200 */
export interface WorkflowRunPage {
  runs: WorkflowRun[];
  cursor: string | null;
  hasNext: boolean;
}

/** @schema subscribeToTopic.201 */
export interface TopicSubscription {
  topic: string;
  recipientId: string;
}

/**
 * Subscribers' external ids, in order.
 * @schema listTopicSubscribers.200
 */
export interface TopicSubscriberPage {
  subscribers: string[];
  cursor: string | null;
  hasNext: boolean;
}

/**
 * An `application/problem+json` error body.
 * @schema Problem
 */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  instance: string;
  timestamp: string;
}

/**
 * What a webhook delivery's data says about the request.
 * @event data
 */
export interface WebhookEventData {
  requestId: string;
  workspaceId: string;
  channel: Channel;
  status: NotificationStatus;
  recipientAddress: string;
  selectedProviderAccountId: string | null;
  selectedProviderMessageId: string | null;
  finalErrorCode: string | null;
  finalErrorMessage: string | null;
  metadata: StringMap;
  /** The channel that delivered the request, null unless sent. */
  deliveredChannel: Channel | null;
  /** The cross-channel fallback step reached, null without one. */
  fallbackStep: number | null;
  /** Present for a send by recipient id. */
  recipientId?: string;
  /** Present for a send with a category. */
  category?: string;
}

/**
 * The body of a webhook delivery.
 * @event body
 */
export interface WebhookEvent {
  type: "notification.delivered" | "notification.failed" | "notification.canceled";
  timestamp: string;
  data: WebhookEventData;
}
