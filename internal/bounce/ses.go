package bounce

import (
	"encoding/json"
	"strings"
	"time"
)

// sesEvent covers both SES formats an SNS topic carries: identity
// notifications ("notificationType") and configuration-set event
// publishing ("eventType"). Only Bounce and Complaint matter here.
type sesEvent struct {
	NotificationType string `json:"notificationType"`
	EventType        string `json:"eventType"`
	Mail             struct {
		MessageID   string   `json:"messageId"`
		Destination []string `json:"destination"`
	} `json:"mail"`
	Bounce *struct {
		BounceType        string `json:"bounceType"`
		BounceSubType     string `json:"bounceSubType"`
		FeedbackID        string `json:"feedbackId"`
		Timestamp         string `json:"timestamp"`
		BouncedRecipients []struct {
			EmailAddress   string `json:"emailAddress"`
			Status         string `json:"status"`
			DiagnosticCode string `json:"diagnosticCode"`
		} `json:"bouncedRecipients"`
	} `json:"bounce"`
	Complaint *struct {
		ComplaintFeedbackType string `json:"complaintFeedbackType"`
		FeedbackID            string `json:"feedbackId"`
		Timestamp             string `json:"timestamp"`
		ComplainedRecipients  []struct {
			EmailAddress string `json:"emailAddress"`
		} `json:"complainedRecipients"`
	} `json:"complaint"`
	Delivery *struct {
		Timestamp    string   `json:"timestamp"`
		Recipients   []string `json:"recipients"`
		SMTPResponse string   `json:"smtpResponse"`
	} `json:"delivery"`
}

// ParseSES reads the SES event JSON of an SNS Notification's Message.
// snsID (the SNS MessageId) names the event when SES gives no feedbackId.
// Delivery yields delivery events (issue 35); other event types (Send,
// Open, ...) yield none.
func ParseSES(message, snsID string, now time.Time) ([]Event, error) {
	var e sesEvent
	if err := json.Unmarshal([]byte(message), &e); err != nil {
		return nil, malformed("SNS Message is not an SES event")
	}
	typ := e.NotificationType
	if typ == "" {
		typ = e.EventType
	}
	mid := clip(e.Mail.MessageID, 256)
	var out []Event
	switch typ {
	case "Bounce":
		if e.Bounce == nil {
			return nil, malformed("SES Bounce event lacks bounce")
		}
		class := Undetermined
		switch e.Bounce.BounceType {
		case "Permanent":
			class = Permanent
		case "Transient":
			class = Transient
		}
		id := e.Bounce.FeedbackID
		if id == "" {
			id = snsID
		}
		at := parseTime(e.Bounce.Timestamp, now)
		for _, r := range e.Bounce.BouncedRecipients {
			addr := normalizeAddress(r.EmailAddress)
			if addr == "" {
				continue
			}
			detail := strings.TrimSpace(strings.Join(nonEmpty(e.Bounce.BounceType, e.Bounce.BounceSubType, r.Status, r.DiagnosticCode), " "))
			out = append(out, Event{Type: TypeBounce, BounceType: class, MessageID: mid, Recipient: addr,
				Detail: clip(detail, 1000), EventID: clip("ses:"+id+":"+addr, 600), OccurredAt: at})
		}
	case "Complaint":
		if e.Complaint == nil {
			return nil, malformed("SES Complaint event lacks complaint")
		}
		id := e.Complaint.FeedbackID
		if id == "" {
			id = snsID
		}
		at := parseTime(e.Complaint.Timestamp, now)
		for _, r := range e.Complaint.ComplainedRecipients {
			addr := normalizeAddress(r.EmailAddress)
			if addr == "" {
				continue
			}
			out = append(out, Event{Type: TypeComplaint, MessageID: mid, Recipient: addr,
				Detail: clip(e.Complaint.ComplaintFeedbackType, 1000), EventID: clip("ses:"+id+":"+addr, 600), OccurredAt: at})
		}
	case "Delivery":
		if e.Delivery == nil {
			return nil, nil // nothing to read: no recipient is named
		}
		at := parseTime(e.Delivery.Timestamp, now)
		for _, r := range e.Delivery.Recipients {
			if addr := normalizeAddress(r); addr != "" {
				out = append(out, Event{Type: TypeDelivery, MessageID: mid, Recipient: addr, Detail: clip(e.Delivery.SMTPResponse, 1000),
					EventID: clip("ses:"+snsID+":"+addr, 600), OccurredAt: at})
			}
		}
	}
	return out, nil
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
