"""The notifyd client: signed Notification API calls with retries."""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal, TypeVar, cast

from .errors import NotifydConnectionError, NotifydError, ProblemError, WaitTimeoutError
from .models import (
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
    PutRecipientResult,
    RecipientBulkItem,
    RecipientBulkResult,
    RecipientInput,
    RecipientPage,
    RecipientProfile,
    SendRequest,
    SendResult,
    SubscribeResult,
    TopicSubscriberPage,
    TopicSubscription,
    WorkflowCancelResult,
    WorkflowRun,
    WorkflowRunPage,
    WorkflowTriggerRequest,
    WorkflowTriggerResult,
)
from .signing import sign_headers

FINAL_STATUSES: tuple[NotificationStatus, ...] = ("sent", "failed", "canceled")

# What a try may fail with before an answer: refused, reset or dropped
# connections, timeouts, a truncated answer.
_NETWORK_ERRORS = (urllib.error.URLError, OSError, http.client.HTTPException)


def _seg(value: str) -> str:
    return urllib.parse.quote(value, safe="")


class Notifyd:
    """A client of one notifyd server, signing every call with an API key.

    ``max_retries`` (default 2) is the number of further tries after a
    network error or a timeout, for the calls that are safe to repeat:
    sends and workflow triggers (with their idempotency key), reads,
    cancels, the recipient and preference writes and topic subscriptions.
    OTP send, resend and verify are never repeated: the server has no
    idempotency key for them, and a repeat could send a second code or
    spend an attempt. An answer of the server, error or not, is never
    retried. ``retry_delay`` (seconds, default 0.5) doubles
    for each next retry; ``timeout`` (seconds, default 30) bounds one try.
    """

    def __init__(self, base_url: str, api_key: str, hmac_secret: str, *, max_retries: int = 2,
                 retry_delay: float = 0.5, timeout: float = 30.0,
                 opener: urllib.request.OpenerDirector | None = None) -> None:
        if not base_url or not api_key or not hmac_secret:
            raise NotifydError("notifyd: base_url, api_key and hmac_secret are required")
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._hmac_secret = hmac_secret
        self.max_retries = max(0, max_retries)
        self.retry_delay = retry_delay
        self.timeout = timeout
        self._opener = opener or urllib.request.build_opener()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **options: Any) -> Notifyd:
        """A client from NOTIFYD_URL, NOTIFYD_API_KEY and NOTIFYD_HMAC_SECRET
        (what ``notifyd serve --demo`` prints); ``env`` defaults to os.environ."""
        e = os.environ if env is None else env

        def need(name: str) -> str:
            v = e.get(name)
            if not v:
                raise NotifydError(f"notifyd: {name} is not set")
            return v

        return cls(need("NOTIFYD_URL"), need("NOTIFYD_API_KEY"), need("NOTIFYD_HMAC_SECRET"), **options)

    # -- notifications -------------------------------------------------------

    def send(self, request: SendRequest) -> SendResult:
        """Sends one notification (``POST /v1/notifications``). Without an
        ``idempotencyKey`` one is generated, so retries cannot send twice."""
        return cast(SendResult, self._data("POST", "/v1/notifications", body=_with_key(request), retry=True))

    def send_bulk(self, items: Iterable[SendRequest], *,
                  lane: Literal["transactional", "bulk"] | None = None) -> BulkSendResult:
        """Sends up to 500 notifications in one call (``POST /v1/notifications/bulk``)."""
        body: dict[str, Any] = {"items": [_with_key(i) for i in items]}
        if lane is not None:
            body["lane"] = lane
        return cast(BulkSendResult, self._data("POST", "/v1/notifications/bulk", body=body, retry=True))

    def get_notification(self, request_id: str) -> NotificationRequest:
        """The request's record with its job and attempts."""
        return cast(NotificationRequest, self._data("GET", f"/v1/notifications/{_seg(request_id)}", retry=True))

    def cancel_notification(self, request_id: str) -> CancelResult:
        """Cancels a request not yet final; ``canceled`` says whether this call did it."""
        path = f"/v1/notifications/{_seg(request_id)}/cancel"
        return cast(CancelResult, self._data("POST", path, retry=True))

    def wait_for_notification(self, request_id: str, *, timeout: float = 60.0, interval: float = 0.5,
                              until: Iterable[NotificationStatus] = FINAL_STATUSES) -> NotificationRequest:
        """Polls the status lookup until the request's status is in ``until``
        (the final ones by default). Raises WaitTimeoutError."""
        wanted = set(until)
        return _poll(lambda: self.get_notification(request_id), lambda r: r["status"] in wanted,
                     f"request {request_id}", timeout, interval)

    # -- OTP -------------------------------------------------------------------

    def send_otp(self, request: OtpSendRequest) -> OtpSendResult:
        """Sends a code or link (``POST /v1/otp``). Not retried."""
        return cast(OtpSendResult, self._data("POST", "/v1/otp", body=request, retry=False))

    def verify_otp(self, verification_id: str, code: str) -> OtpVerifyResult:
        """Checks a code; HTTP 200 either way, the outcome is in ``status``. Not retried."""
        path = f"/v1/otp/{_seg(verification_id)}/verify"
        return cast(OtpVerifyResult, self._data("POST", path, body={"code": code}, retry=False))

    def resend_otp(self, verification_id: str) -> OtpSendResult:
        """Sends a new code (the old one stops working). Not retried."""
        return cast(OtpSendResult, self._data("POST", f"/v1/otp/{_seg(verification_id)}/resend", retry=False))

    def get_otp(self, verification_id: str) -> OtpSession:
        """The session; poll it to see a link-mode session verified."""
        return cast(OtpSession, self._data("GET", f"/v1/otp/{_seg(verification_id)}", retry=True))

    # -- recipients and preferences ----------------------------------------------

    def put_recipient(self, external_id: str, fields: RecipientInput) -> PutRecipientResult:
        """Creates or replaces a profile: fields not given are emptied."""
        status, data = self._request("PUT", f"/v1/recipients/{_seg(external_id)}", body=fields, retry=True)
        return {"recipient": data["recipient"], "created": status == 201}

    def patch_recipient(self, external_id: str, fields: RecipientInput) -> RecipientProfile:
        """Changes only the fields given (None clears one)."""
        data = self._data("PATCH", f"/v1/recipients/{_seg(external_id)}", body=fields, retry=True)
        return cast(RecipientProfile, data["recipient"])

    def get_recipient(self, external_id: str) -> RecipientProfile:
        return cast(RecipientProfile, self._data("GET", f"/v1/recipients/{_seg(external_id)}", retry=True)["recipient"])

    def delete_recipient(self, external_id: str) -> None:
        """Erases a profile (404 when there is none)."""
        self._request("DELETE", f"/v1/recipients/{_seg(external_id)}", retry=True)

    def list_recipients(self, *, q: str | None = None, limit: int | None = None,
                        cursor: str | None = None) -> RecipientPage:
        """One page of profiles, newest first; ``q`` searches id, name, email and phone."""
        query = {"q": q, "limit": limit, "cursor": cursor}
        return cast(RecipientPage, self._data("GET", "/v1/recipients", query=query, retry=True))

    def iter_recipients(self, *, q: str | None = None, limit: int | None = None) -> Iterator[RecipientProfile]:
        """Every profile, page after page."""
        cursor: str | None = None
        while True:
            page = self.list_recipients(q=q, limit=limit, cursor=cursor)
            yield from page["recipients"]
            if not page["hasNext"] or not page["cursor"]:
                return
            cursor = page["cursor"]

    def upsert_recipients(self, items: Iterable[RecipientBulkItem]) -> RecipientBulkResult:
        """Creates or replaces up to 1,000 profiles in one transaction."""
        body = {"items": list(items)}
        return cast(RecipientBulkResult, self._data("POST", "/v1/recipients/bulk", body=body, retry=True))

    def get_preferences(self, external_id: str) -> Preferences:
        path = f"/v1/recipients/{_seg(external_id)}/preferences"
        return cast(Preferences, self._data("GET", path, retry=True)["preferences"])

    def put_preferences(self, external_id: str, preferences: Preferences) -> Preferences:
        """Replaces the recipient's preferences."""
        path = f"/v1/recipients/{_seg(external_id)}/preferences"
        return cast(Preferences, self._data("PUT", path, body=preferences, retry=True)["preferences"])

    def create_preference_link(self, external_id: str) -> PreferenceLink:
        """A signed link to the recipient's preference page."""
        path = f"/v1/recipients/{_seg(external_id)}/preference-link"
        return cast(PreferenceLink, self._data("POST", path, retry=True))

    def create_inbox_token(self, external_id: str, ttl_seconds: int | None = None) -> InboxToken:
        """Mints a recipient token of the in-app inbox for the profile (the key
        needs recipients:write; 404 when there is no such profile). It lives
        ``ttl_seconds`` (60 to 86400, default 3600). ``mint_inbox_token``
        makes the same token offline with the workspace's inbox secret."""
        path = f"/v1/recipients/{_seg(external_id)}/inbox-token"
        body = None if ttl_seconds is None else {"ttlSeconds": ttl_seconds}
        return cast(InboxToken, self._data("POST", path, body=body, retry=True))

    def list_categories(self) -> list[Category]:
        return cast(list[Category], self._data("GET", "/v1/categories", retry=True)["categories"])

    def get_category(self, key: str) -> Category:
        return cast(Category, self._data("GET", f"/v1/categories/{_seg(key)}", retry=True)["category"])

    # -- workflows and topics -------------------------------------------------------

    def trigger_workflow(self, key: str, request: WorkflowTriggerRequest) -> WorkflowTriggerResult:
        """Starts the published version of workflow ``key``, one run per
        recipient (or per subscriber of ``topic``), answering the runs
        (``POST /v1/workflows/{key}/trigger``). Without an ``idempotencyKey``
        one is generated, so retries cannot start the runs twice."""
        path = f"/v1/workflows/{_seg(key)}/trigger"
        return cast(WorkflowTriggerResult, self._data("POST", path, body=_with_key(request), retry=True))

    def cancel_workflow(self, key: str, cancellation_key: str) -> WorkflowCancelResult:
        """Stops every running run of workflow ``key`` triggered with ``cancellation_key``."""
        path = f"/v1/workflows/{_seg(key)}/cancel"
        return cast(WorkflowCancelResult, self._data("POST", path, body={"cancellationKey": cancellation_key},
                                                     retry=True))

    def get_workflow_run(self, run_id: str) -> WorkflowRun:
        """The run with its reached steps and the requests it created."""
        return cast(WorkflowRun, self._data("GET", f"/v1/workflow-runs/{_seg(run_id)}", retry=True)["run"])

    def wait_for_workflow_run(self, run_id: str, *, timeout: float = 60.0, interval: float = 0.5) -> WorkflowRun:
        """Polls the run until it has ended (its status is no longer
        ``running``). Raises WaitTimeoutError."""
        return _poll(lambda: self.get_workflow_run(run_id), lambda r: r["status"] != "running",
                     f"workflow run {run_id}", timeout, interval)

    def list_workflow_runs(self, *, workflow: str | None = None, recipient_id: str | None = None,
                           limit: int | None = None, cursor: str | None = None) -> WorkflowRunPage:
        """One page of runs, newest first, of a workflow (its key), of a recipient, or both."""
        query = {"workflow": workflow, "recipientId": recipient_id, "limit": limit, "cursor": cursor}
        return cast(WorkflowRunPage, self._data("GET", "/v1/workflow-runs", query=query, retry=True))

    def subscribe_to_topic(self, topic: str, external_id: str) -> SubscribeResult:
        """Subscribes a profile to a topic; ``created`` is False when it already was."""
        path = f"/v1/topics/{_seg(topic)}/subscribers/{_seg(external_id)}"
        status, data = self._request("PUT", path, retry=True)
        return {"subscription": cast(TopicSubscription, data), "created": status == 201}

    def unsubscribe_from_topic(self, topic: str, external_id: str) -> None:
        """Unsubscribes a profile (404 when it was not subscribed)."""
        self._request("DELETE", f"/v1/topics/{_seg(topic)}/subscribers/{_seg(external_id)}", retry=True)

    def list_topic_subscribers(self, topic: str, *, limit: int | None = None,
                               cursor: str | None = None) -> TopicSubscriberPage:
        """One page of a topic's subscribers (external ids, in order)."""
        query = {"limit": limit, "cursor": cursor}
        path = f"/v1/topics/{_seg(topic)}/subscribers"
        return cast(TopicSubscriberPage, self._data("GET", path, query=query, retry=True))

    # -- the wire --------------------------------------------------------------------

    def _data(self, method: str, path: str, **kw: Any) -> Any:
        return self._request(method, path, **kw)[1]

    def _request(self, method: str, path: str, *, query: Mapping[str, Any] | None = None,
                 body: Any = None, retry: bool) -> tuple[int, Any]:
        """One signed call: the body is serialized once, and those bytes are
        both signed and sent; each try is signed anew (fresh timestamp and
        nonce). The envelope's ``data`` is unwrapped; an error answer raises
        ProblemError."""
        target = path
        params = {k: v for k, v in (query or {}).items() if v is not None}
        if params:
            target += "?" + urllib.parse.urlencode(params)
        url = self.base_url + target
        # The target as the request line will carry it (with any path of base_url).
        split = urllib.parse.urlsplit(url)
        target = split.path + ("?" + split.query if split.query else "")
        raw = b"" if body is None else json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        tries = self.max_retries + 1 if retry else 1
        attempt = 0
        while True:
            attempt += 1
            headers = sign_headers(self._api_key, self._hmac_secret, method, target, raw)
            headers["Accept"] = "application/json"
            if body is not None:
                headers["Content-Type"] = "application/json"
            req = urllib.request.Request(url, data=raw if body is not None else None, headers=headers,
                                         method=method)
            try:
                with self._opener.open(req, timeout=self.timeout) as resp:
                    return resp.status, _unwrap(resp.read())
            except urllib.error.HTTPError as err:
                text = _read_error(err)
                raise ProblemError.from_response(err.code, str(err.reason), text) from None
            except _NETWORK_ERRORS as err:
                if attempt >= tries:
                    raise NotifydConnectionError(
                        f"notifyd: {method} {target}: {err} ({attempt} tries)", attempt) from err
                time.sleep(self.retry_delay * 2 ** (attempt - 1))


_Polled = TypeVar("_Polled", NotificationRequest, WorkflowRun)


def _poll(get: Callable[[], _Polled], done: Callable[[_Polled], bool], what: str, timeout: float,
          interval: float) -> _Polled:
    """Reads with ``get`` until ``done`` holds, every ``interval`` seconds, for ``timeout`` at most."""
    deadline = time.monotonic() + timeout
    while True:
        r = get()
        if done(r):
            return r
        if time.monotonic() >= deadline:
            raise WaitTimeoutError(f"notifyd: {what} still {r['status']}")
        time.sleep(interval)


def _read_error(err: urllib.error.HTTPError) -> str:
    try:
        return err.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException):
        return ""
    finally:
        err.close()


def _unwrap(raw: bytes) -> Any:
    """The body's envelope ``data``, the body itself without one, None when empty."""
    if not raw:
        return None
    v = json.loads(raw)
    if isinstance(v, dict) and "data" in v and "meta" in v:
        return v["data"]
    return v


_Keyed = TypeVar("_Keyed", SendRequest, WorkflowTriggerRequest)


def _with_key(request: _Keyed) -> _Keyed:
    if request.get("idempotencyKey"):
        return request
    return cast(_Keyed, {**request, "idempotencyKey": str(uuid.uuid4())})
