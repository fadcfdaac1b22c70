package api

import (
	"net/http"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/sends"
)

func (a sendsAPI) handleJobList(c *call) error {
	jobs, err := a.room.ListOpenJobs(c.ctx, c.actor)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(jobs))
	for i, o := range jobs {
		j := o.Job
		var lastErr any
		if j.LastErrorCode != "" {
			lastErr = map[string]any{"code": j.LastErrorCode, "message": j.LastErrorMessage}
		}
		out[i] = map[string]any{"id": j.ID, "notificationRequestId": j.RequestID, "channel": o.Channel,
			"templateCode": strOrNil(o.TemplateCode), "recipient": o.Recipient, "status": j.Status,
			"scheduledAt": TimestampPtr(j.ScheduledAt), "enqueuedAt": Timestamp(j.QueuedAt), "attemptCount": j.AttemptsMade,
			"maxAttempts": j.MaxAttempts, "nextRetryAt": TimestampPtr(j.NextRetryAt), "providerKind": strOrNil(o.ProviderKind),
			"providerDisplayName": strOrNil(o.ProviderDisplayName), "lastError": lastErr}
	}
	return c.ok(http.StatusOK, map[string]any{"jobs": out})
}

func (a sendsAPI) handleJobCancel(c *call) error {
	if err := a.room.CancelScheduledJob(c.ctx, c.actor, c.r.PathValue("id")); err != nil {
		return err
	}
	return c.noContent()
}

func (a sendsAPI) handleAttemptList(c *call) error {
	q := c.r.URL.Query()
	f := notify.AttemptFilter{RequestID: q.Get("requestId")}
	var err error
	if f.Limit, err = intParam(q.Get("limit"), "limit"); err != nil {
		return err
	}
	if f.Before, err = decodeCursor(q.Get("cursor")); err != nil {
		return err
	}
	page, err := a.room.ListAttempts(c.ctx, c.actor, f)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(page.Attempts))
	for i, at := range page.Attempts {
		// The content the attempt's channel sent (a step of a cross-channel
		// fallback has its own).
		r := page.Requests[i].ForChannel(at.Channel)
		m := attemptBody(at)
		m["id"], m["notificationRequestId"], m["channel"] = at.ID, at.RequestID, at.Channel
		vars := r.TemplateVariables
		if vars == nil {
			vars = map[string]string{}
		}
		m["request"] = map[string]any{
			"templateCode":    strOrNil(r.TemplateCode),
			"recipient":       map[string]any{"address": r.RecipientAddress, "name": strOrNil(r.RecipientName)},
			"variables":       vars,
			"metadata":        r.Metadata,
			"renderedContent": map[string]any{"title": strOrNil(r.Title), "text": strOrNil(r.Text), "html": strOrNil(r.HTML)},
			"providerCall":    rawJSON(at.RequestJSON),
		}
		m["response"] = rawJSON(at.ResponseJSON)
		out[i] = m
	}
	return c.ok(http.StatusOK, map[string]any{"attempts": out, "cursor": encodeCursor(page.Cursor), "hasNext": page.HasNext})
}

func (a sendsAPI) handleDeadLetterList(c *call) error {
	items, count, err := a.room.ListDeadLetters(c.ctx, c.actor)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(items))
	for i, d := range items {
		out[i] = map[string]any{"jobId": d.JobID, "jobName": "dispatch",
			"data":         map[string]any{"notificationRequestId": d.RequestID, "workspaceId": d.WorkspaceID, "channel": d.Channel},
			"failedReason": d.FailedReason, "failedAt": Timestamp(d.FailedAt), "attemptsMade": d.AttemptsMade}
	}
	return c.ok(http.StatusOK, map[string]any{"items": out, "count": count})
}

func (a sendsAPI) handleMetrics(c *call) error {
	q := c.r.URL.Query()
	now := a.now()
	from, to := now.Add(-24*time.Hour), now
	var err error
	if v := q.Get("from"); v != "" {
		if from, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return notify.Invalid("from must be an ISO 8601 date-time")
		}
	}
	if v := q.Get("to"); v != "" {
		if to, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return notify.Invalid("to must be an ISO 8601 date-time")
		}
	}
	if from.After(to) {
		return notify.Invalid("from must not be after to")
	}
	interval, err := receiptInterval(q.Get("interval"), from, to)
	if err != nil {
		return err
	}
	counts, err := a.room.Metrics(c.ctx, c.actor, from, to)
	if err != nil {
		return err
	}
	rates, err := a.room.DeliveryRates(c.ctx, c.actor, from, to, interval)
	if err != nil {
		return err
	}
	byStatus, testByStatus := map[string]int{}, map[string]int{}
	for _, s := range notify.RequestStatuses {
		byStatus[string(s)] = counts.ByStatus[string(s)]
		testByStatus[string(s)] = counts.TestByStatus[string(s)]
	}
	return c.ok(http.StatusOK, map[string]any{"from": Timestamp(from), "to": Timestamp(to), "totalRequests": counts.TotalRequests,
		"byStatus": byStatus, "byChannel": counts.ByChannel, "totalAttempts": counts.TotalAttempts,
		"successAttempts": counts.SuccessAttempts, "failedAttempts": counts.FailedAttempts,
		// The part of the request counts that is test traffic (issue 36).
		"testRequests": map[string]any{"total": counts.TestRequests, "byStatus": testByStatus},
		// Delivery rates from the vendors' reports (issue 35).
		"receipts": receiptStatsBody(rates)})
}

func (a sendsAPI) handleDeadLetterReplay(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	d, err := a.room.ReplayDeadLetter(c.ctx, c.actor, c.r.PathValue("jobId"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"replayed": 1, "jobId": d.JobID, "notificationRequestId": d.RequestID,
		"status": notify.StatusQueued})
}

func (a sendsAPI) handleDeadLetterReplaySet(c *call) error {
	var in struct {
		Channel     *string `json:"channel"`
		FailureCode *string `json:"failureCode"`
		From        *string `json:"from"`
		To          *string `json:"to"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	n, err := a.room.ReplayDeadLetters(c.ctx, c.actor, sends.ReplayInput{Channel: in.Channel, FailureCode: in.FailureCode,
		From: in.From, To: in.To})
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"replayed": n})
}
