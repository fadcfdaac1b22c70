package notify

import (
	"testing"
	"time"
)

// t0 is the tests' fixed time.
var t0 = time.Date(2026, 11, 22, 3, 25, 5, 0, time.UTC)

func TestApplyReport(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Minute)
	for _, tc := range []struct {
		name       string
		from, with string
		changed    bool
		want       string
	}{
		{"pending to delivered", ReceiptPending, ReceiptDelivered, true, ReceiptDelivered},
		{"pending to undelivered", ReceiptPending, ReceiptUndelivered, true, ReceiptUndelivered},
		{"an intermediate report changes nothing", ReceiptPending, ReceiptPending, false, ReceiptPending},
		{"final stays final", ReceiptDelivered, ReceiptUndelivered, false, ReceiptDelivered},
		{"unknown stays unknown", ReceiptUnknown, ReceiptDelivered, false, ReceiptUnknown},
	} {
		rc := &Receipt{Status: tc.from}
		if got := ApplyReport(rc, &VendorReport{Status: tc.with, Code: "c"}, now); got != tc.changed || rc.Status != tc.want {
			t.Errorf("%s: changed %v status %s, want %v %s", tc.name, got, rc.Status, tc.changed, tc.want)
		}
		if tc.changed && (rc.ReportedAt == nil || !rc.ReportedAt.Equal(now)) {
			t.Errorf("%s: a report without a time is dated now, got %v", tc.name, rc.ReportedAt)
		}
	}
}

func TestRequestReceipt(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Hour)
	older := &Receipt{ProviderMessageID: "m1", Status: ReceiptUndelivered, CreatedAt: t0, Deadline: t0.Add(72 * time.Hour)}
	newer := &Receipt{ProviderMessageID: "m2", Status: ReceiptPending, CreatedAt: t0.Add(time.Second), Deadline: t0.Add(30 * time.Minute)}
	for _, tc := range []struct {
		name string
		r    *Request
		rs   []*Receipt
		want string
	}{
		{"queued", &Request{Status: StatusQueued}, nil, ReceiptPending},
		{"failed without receipts", &Request{Status: StatusFailed}, nil, ReceiptNotTracked},
		{"sent by a kind without reports", &Request{Status: StatusSent, SelectedMessageID: "x"}, nil, ReceiptNotTracked},
		{"the sending attempt's receipt", &Request{Status: StatusSent, SelectedMessageID: "m1"}, []*Receipt{older, newer}, ReceiptUndelivered},
		{"pending past its deadline is unknown", &Request{Status: StatusSent, SelectedMessageID: "m2"}, []*Receipt{older, newer}, ReceiptUnknown},
	} {
		if got := RequestReceipt(tc.r, tc.rs, now); got.Status != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got.Status, tc.want)
		}
	}
}

func TestFallBackOnUndelivered(t *testing.T) {
	t.Parallel()
	chain := &ChannelFallback{Attempts: 3, Steps: []ChannelStep{{Channel: ChannelSMS, RecipientAddress: "010"}}}
	fresh := func() (*Request, *Job, *Receipt) {
		return &Request{ID: "r", Status: StatusSent, Channel: ChannelAlimTalk, Fallback: chain},
			&Job{ID: "j", Status: JobCompleted, AttemptsMade: 1, MaxAttempts: 3},
			&Receipt{Status: ReceiptUndelivered, CreatedAt: t0, Code: "3104"}
	}
	r, j, rc := fresh()
	moved, err := FallBackOnUndelivered(r, j, rc, time.Hour, t0.Add(time.Minute))
	if err != nil || !moved || r.Status != StatusQueued || r.FallbackStep != 1 || j.Status != JobQueued || j.MaxAttempts != 4 {
		t.Fatalf("moved %v err %v: request %s step %d, job %s max %d", moved, err, r.Status, r.FallbackStep, j.Status, j.MaxAttempts)
	}
	for name, change := range map[string]func(*Request, *Receipt){
		"delivered":          func(_ *Request, rc *Receipt) { rc.Status = ReceiptDelivered },
		"fell back already":  func(_ *Request, rc *Receipt) { rc.FellBack = true },
		"already moved on":   func(r *Request, _ *Receipt) { r.FallbackStep = 1 },
		"no chain":           func(r *Request, _ *Receipt) { r.Fallback = nil },
		"not sent any more":  func(r *Request, _ *Receipt) { r.Status = StatusQueued },
		"outside the window": func(_ *Request, rc *Receipt) { rc.CreatedAt = t0.Add(-2 * time.Hour) },
	} {
		r, j, rc := fresh()
		change(r, rc)
		if moved, err := FallBackOnUndelivered(r, j, rc, time.Hour, t0.Add(time.Minute)); moved || err != nil {
			t.Errorf("%s: moved %v err %v", name, moved, err)
		}
	}
}
