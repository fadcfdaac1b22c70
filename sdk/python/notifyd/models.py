"""Hand-written models of notifyd's Notification API, as TypedDicts: the
JSON objects themselves, with camelCase keys as on the wire.

SCHEMAS names the OpenAPI schema (openapi/openapi.yaml, served at
GET /openapi.yaml) each model follows; tests/test_models.py checks that
every key declared here exists in that schema and that every key the
schema requires is declared. EVENTS are the webhook delivery body's
models, checked against the golden vectors (sdk/testdata/vectors.json).
"""

# No `from __future__ import annotations` here: TypedDict reads
# NotRequired from the evaluated annotations.

from typing import Any, Literal, NotRequired, TypedDict

Channel = Literal["sms", "msgr_alimtalk", "email", "push_mobile", "chata_webhook", "chatb_webhook",
                  "chata_bot", "chatb_bot"]
NotificationStatus = Literal["queued", "processing", "sent", "failed", "canceled"]
JobStatus = Literal["scheduled", "queued", "processing", "retrying", "dead_letter", "completed", "failed",
                    "canceled"]
OtpChannel = Literal["sms", "msgr_alimtalk", "email"]
OtpMode = Literal["code", "link"]


class Recipient(TypedDict, total=False):
    """Who receives a send: exactly one of ``address`` and ``id`` (the
    external id of a recipient profile)."""
    address: str
    id: str
    name: str


class Content(TypedDict, total=False):
    """``text`` is required unless ``templateCode`` names a template."""
    text: str
    title: str
    html: str
    templateCode: str
    templateVariables: dict[str, str]


class ChannelFallbackStep(TypedDict):
    channel: Channel
    recipient: NotRequired[Recipient]
    content: NotRequired[Content]


class SendWindow(TypedDict):
    hours: str  # HH:MM-HH:MM
    days: NotRequired[list[Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]]]
    timeZone: NotRequired[str]


class SendRequest(TypedDict):
    """The body of ``POST /v1/notifications`` and of each bulk item. A
    scheduled send sets ``scheduledAt`` (strict ISO 8601, future); a
    template send ``content.templateCode``; a send to a profile
    ``recipient.id``. Without ``idempotencyKey`` the SDK generates one, so
    a retry after a network error cannot send twice."""
    channel: Channel
    recipient: Recipient
    content: Content
    idempotencyKey: NotRequired[str]
    scheduledAt: NotRequired[str]
    preferredProviderAccountIds: NotRequired[list[str]]
    metadata: NotRequired[dict[str, str]]
    category: NotRequired[str]
    locale: NotRequired[str]
    urgent: NotRequired[bool]
    sendWindow: NotRequired[SendWindow]
    channelFallback: NotRequired[list[ChannelFallbackStep]]


class SendResult(TypedDict):
    status: NotificationStatus
    requestId: str
    queueJobId: str | None
    deduplicated: bool
    scheduledAt: str | None


class BulkSendRequest(TypedDict):
    items: list[SendRequest]
    lane: NotRequired[Literal["transactional", "bulk"]]


class BulkSendResult(TypedDict):
    status: str
    total: int
    queued: int
    deduplicated: int
    items: list[SendResult]


class CancelResult(TypedDict):
    requestId: str
    status: NotificationStatus
    canceled: bool


class ErrorInfo(TypedDict):
    code: str
    message: str


class QueueJob(TypedDict):
    id: str
    queueJobId: str
    status: JobStatus
    attemptsMade: int
    maxAttempts: int
    queuedAt: str | None
    scheduledAt: str | None
    startedAt: str | None
    finishedAt: str | None
    lastError: ErrorInfo | None


class Attempt(TypedDict):
    notificationJobId: str | None
    providerAccountId: str
    providerKind: str
    providerDisplayName: str
    status: Literal["success", "failure"]
    failureCode: str | None
    failureMessage: str | None
    providerMessageId: str | None
    startedAt: str
    finishedAt: str | None
    channel: NotRequired[Channel]


class ChannelFallbackProgress(TypedDict):
    currentStep: int
    currentChannel: Channel
    steps: list[dict[str, object]]


class NotificationRequest(TypedDict):
    """A notification request as the status lookup answers it."""
    requestId: str
    workspaceId: str
    channel: Channel
    status: NotificationStatus
    recipientAddress: str
    recipientId: NotRequired[str | None]
    requestedAt: str
    scheduledAt: str | None
    selectedProviderAccountId: str | None
    selectedProviderMessageId: str | None
    finalErrorCode: str | None
    finalErrorMessage: str | None
    job: QueueJob | None
    attempts: list[Attempt]
    deliveredChannel: NotRequired[Channel | None]
    channelFallback: NotRequired[ChannelFallbackProgress | None]
    test: NotRequired[bool]  # signed with a test-mode key: the built-in simulator answered, no vendor


class OtpSendRequest(TypedDict):
    channel: OtpChannel
    to: str  # phone number or email address
    mode: NotRequired[OtpMode]
    purpose: NotRequired[str]
    brandName: NotRequired[str]
    recipientName: NotRequired[str]
    templateCode: NotRequired[str]  # required for msgr_alimtalk
    templateVariables: NotRequired[dict[str, str]]
    preferredProviderAccountIds: NotRequired[list[str]]
    clientIp: NotRequired[str]  # the end user's IP address (fraud guard)


class OtpSendResult(TypedDict):
    verificationId: str
    status: Literal["pending"]
    mode: OtpMode
    channel: OtpChannel
    expiresAt: str
    resendAvailableAt: str


class OtpVerifyResult(TypedDict):
    """A verify answers 200 either way: ``status`` is ``verified`` (with
    ``verificationToken`` and ``verifiedAt``) or ``failed`` (with
    ``reason`` and ``attemptsRemaining``)."""
    status: Literal["verified", "failed"]
    verificationToken: NotRequired[str]
    verifiedAt: NotRequired[str]
    reason: NotRequired[Literal["expired", "not_code_mode", "too_many_attempts", "invalid_code"]]
    attemptsRemaining: NotRequired[int]


class OtpSession(TypedDict):
    verificationId: str
    status: Literal["pending", "verified", "expired", "failed", "canceled"]
    channel: OtpChannel
    mode: OtpMode
    purpose: str
    recipientMasked: str
    attempts: int
    resendCount: int
    expiresAt: str
    verifiedAt: str | None
    resendAvailableAt: NotRequired[str]
    verificationToken: NotRequired[str]


class RecipientInput(TypedDict, total=False):
    """The fields of a recipient put, patch or bulk item. A put empties
    every field not given; a patch changes only those given; None clears
    one."""
    name: str | None
    phone: str | None
    email: str | None
    pushTokens: list[str] | None
    chatTargets: dict[str, str] | None
    timeZone: str | None
    locale: str | None
    attributes: dict[str, str] | None


class RecipientBulkItem(RecipientInput):
    externalId: str  # required: this class is total, its base is not


class RecipientProfile(TypedDict):
    externalId: str
    name: str | None
    phone: str | None
    email: str | None
    pushTokens: list[str]
    chatTargets: dict[str, str]
    timeZone: str | None
    locale: str | None
    attributes: dict[str, str]
    createdAt: str
    updatedAt: str


class RecipientPage(TypedDict):
    recipients: list[RecipientProfile]
    cursor: str | None
    hasNext: bool


class RecipientBulkResult(TypedDict):
    total: int
    created: int
    updated: int


class PutRecipientResult(TypedDict):
    """What put_recipient answers: the profile, and whether the put created it (201)."""
    recipient: RecipientProfile
    created: bool


class Preferences(TypedDict, total=False):
    """Per channel a switch, and per category key a switch per channel; a
    channel left out is no choice."""
    channels: dict[str, bool]
    categories: dict[str, dict[str, bool]]


class PreferenceLink(TypedDict):
    url: str
    expiresAt: str


class InboxToken(TypedDict):
    """A recipient token of the in-app inbox, for the person's browser or app."""
    token: str
    expiresAt: str


class FrequencyCap(TypedDict):
    max: int
    windowSeconds: int
    mode: NotRequired[Literal["drop", "defer"]]


class Category(TypedDict):
    key: str
    name: str
    description: str | None
    required: bool
    defaultChannels: list[Channel]
    advertising: bool
    frequencyCap: FrequencyCap | None
    createdAt: str
    updatedAt: str


class WorkflowTriggerRequest(TypedDict, total=False):
    """The body of ``POST /v1/workflows/{key}/trigger``: ``recipients`` (1 to
    1,000 external ids of existing profiles) or ``topic`` (one run per
    subscriber). The payload's fields are the send steps' template
    variables. Without ``idempotencyKey`` the SDK generates one, so a retry
    after a network error cannot start the runs twice."""
    recipients: list[str]
    topic: str
    payload: dict[str, Any]
    idempotencyKey: str
    cancellationKey: str


class WorkflowTriggeredRun(TypedDict):
    """One run a trigger started; ``deduplicated`` when the recipient
    already had a run of the workflow with the trigger's idempotency key."""
    runId: str
    recipientId: str
    deduplicated: bool


class WorkflowTriggerResult(TypedDict):
    runs: list[WorkflowTriggeredRun]


class WorkflowCancelResult(TypedDict):
    canceledRuns: int  # how many running runs the call stopped


WorkflowRunStatus = Literal["running", "completed", "canceled", "throttled", "digested", "failed"]


class WorkflowRunStep(TypedDict):
    """A reached step of a run; a send step's ``requestId`` is its
    notification request (see get_notification)."""
    index: int
    key: str
    type: Literal["send", "delay", "branch", "throttle", "digest"]
    status: Literal["pending", "done", "failed", "canceled"]
    outcome: str | None
    requestId: str | None
    dueAt: str
    createdAt: str
    endedAt: str | None


class WorkflowDigest(TypedDict):
    count: int
    items: list[dict[str, Any]]


class WorkflowRun(TypedDict):
    id: str
    workflowKey: str
    version: int
    recipientId: str
    status: WorkflowRunStatus
    payload: dict[str, Any]
    cancellationKey: str | None
    digest: WorkflowDigest | None
    createdAt: str
    updatedAt: str
    endedAt: str | None
    steps: NotRequired[list[WorkflowRunStep]]  # the reached steps (absent before the first)
    requestIds: list[str]  # the notification requests its send steps created


class WorkflowRunPage(TypedDict):
    runs: list[WorkflowRun]
    cursor: str | None
    hasNext: bool


class TopicSubscription(TypedDict):
    topic: str
    recipientId: str


class SubscribeResult(TypedDict):
    """What subscribe_to_topic answers: the subscription, and whether the
    call created it (201; False when the profile already was subscribed)."""
    subscription: TopicSubscription
    created: bool


class TopicSubscriberPage(TypedDict):
    """Subscribers' external ids, in order."""
    subscribers: list[str]
    cursor: str | None
    hasNext: bool


class Problem(TypedDict):
    """An application/problem+json error body (ProblemError carries it)."""
    type: str
    title: str
    status: int
    detail: str
    code: str
    instance: str
    timestamp: str


class WebhookEventData(TypedDict):
    """What a webhook delivery's data says about the request."""
    requestId: str
    workspaceId: str
    channel: Channel
    status: NotificationStatus
    recipientAddress: str
    selectedProviderAccountId: str | None
    selectedProviderMessageId: str | None
    finalErrorCode: str | None
    finalErrorMessage: str | None
    metadata: dict[str, str]
    deliveredChannel: Channel | None  # the channel that delivered it, None unless sent
    fallbackStep: int | None  # the cross-channel fallback step reached, None without one
    recipientId: NotRequired[str]  # a send by recipient id
    category: NotRequired[str]  # a send with a category


class WebhookEvent(TypedDict):
    """The body of a webhook delivery."""
    type: Literal["notification.delivered", "notification.failed", "notification.canceled"]
    timestamp: str
    data: WebhookEventData


# The OpenAPI schema of each model (checked by tests/test_models.py).
SCHEMAS: dict[type, str] = {
    Recipient: "Recipient", Content: "Content", ChannelFallbackStep: "ChannelFallbackStep",
    SendWindow: "SendWindowIn", SendRequest: "SendRequest", SendResult: "SendResult",
    BulkSendRequest: "BulkSendRequest", BulkSendResult: "BulkSendResult", CancelResult: "CancelResult",
    ErrorInfo: "ErrorInfo", QueueJob: "QueueJob", Attempt: "Attempt",
    ChannelFallbackProgress: "ChannelFallbackProgress", NotificationRequest: "NotificationRequest",
    OtpSendRequest: "OtpSendRequest", OtpSendResult: "OtpSendResult", OtpVerifyResult: "OtpVerifyResult",
    OtpSession: "OtpSession", RecipientInput: "RecipientInput", RecipientBulkItem: "RecipientBulkItem",
    RecipientProfile: "RecipientProfile", RecipientPage: "RecipientPage",
    RecipientBulkResult: "RecipientBulkResult", Preferences: "Preferences",
    PreferenceLink: "PreferenceLinkBody", InboxToken: "InboxToken", FrequencyCap: "FrequencyCap", Category: "Category",
    Problem: "Problem",
    # Inline objects of the document, by their dotted names (sdk/openapifields).
    WorkflowTriggerRequest: "triggerWorkflow.request", WorkflowTriggeredRun: "triggerWorkflow.202.data.runs[]",
    WorkflowTriggerResult: "triggerWorkflow.202.data", WorkflowCancelResult: "cancelWorkflowRuns.200.data",
    WorkflowRunStep: "WorkflowRun.steps[]", WorkflowDigest: "WorkflowRun.digest", WorkflowRun: "WorkflowRun",
    WorkflowRunPage: "listWorkflowRuns.200", TopicSubscription: "subscribeToTopic.201",
    TopicSubscriberPage: "listTopicSubscribers.200",
}

# The webhook delivery's models: the body and its data.
EVENTS: dict[type, str] = {WebhookEvent: "body", WebhookEventData: "data"}

# Models of the SDK's own answers, in no schema.
SDK_ONLY: tuple[type, ...] = (PutRecipientResult, SubscribeResult)

__all__ = [t.__name__ for t in (*SCHEMAS, *EVENTS, *SDK_ONLY)] + [
    "Channel", "NotificationStatus", "JobStatus", "OtpChannel", "OtpMode", "WorkflowRunStatus", "SCHEMAS", "EVENTS",
    "SDK_ONLY"]
