package bounce

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

type postmarkEvent struct {
	RecordType  string          `json:"RecordType"`
	ID          json.RawMessage `json:"ID"`
	Type        string          `json:"Type"`
	MessageID   string          `json:"MessageID"`
	Description string          `json:"Description"`
	Details     string          `json:"Details"`
	Email       string          `json:"Email"`
	BouncedAt   string          `json:"BouncedAt"`
	// Delivery webhooks (issue 35).
	Recipient   string `json:"Recipient"`
	DeliveredAt string `json:"DeliveredAt"`
}

// postmarkHard are the bounce types after which Postmark itself stops
// sending to the address.
var postmarkHard = map[string]bool{"HardBounce": true, "BadEmailAddress": true, "ManuallyDeactivated": true}

// postmarkSoft are the types that say a delivery failed for now.
var postmarkSoft = map[string]bool{"Transient": true, "SoftBounce": true, "DnsError": true}

// ParsePostmark reads a Postmark bounce, spam-complaint or delivery
// webhook. Other record types (Open, Click, ...) yield no events; bounce types
// that are not delivery failures (AutoResponder, Unsubscribe, ...) are
// kept as undetermined bounces, which do not suppress.
func ParsePostmark(body []byte, now time.Time) ([]Event, error) {
	var e postmarkEvent
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, malformed("Postmark webhook is not a JSON object")
	}
	rt := e.RecordType
	if rt == "" && e.Type != "" {
		rt = "Bounce" // the legacy bounce hook carries no RecordType
	}
	var typ, class string
	if rt == "Delivery" {
		addr := normalizeAddress(e.Recipient)
		if addr == "" || e.MessageID == "" {
			return nil, malformed("Postmark Delivery webhook lacks Recipient or MessageID")
		}
		return []Event{{Type: TypeDelivery, MessageID: clip(e.MessageID, 256), Recipient: addr, Detail: clip(e.Details, 1000),
			EventID: clip("postmark:delivery:"+e.MessageID+":"+addr, 600), OccurredAt: parseTime(e.DeliveredAt, now)}}, nil
	}
	switch {
	case rt == "SpamComplaint" || (rt == "Bounce" && e.Type == "SpamComplaint"):
		typ = TypeComplaint
	case rt == "Bounce":
		typ, class = TypeBounce, Undetermined
		if postmarkHard[e.Type] {
			class = Permanent
		} else if postmarkSoft[e.Type] {
			class = Transient
		}
	default:
		return nil, nil
	}
	addr := normalizeAddress(e.Email)
	if addr == "" || e.MessageID == "" {
		return nil, malformed("Postmark webhook lacks Email or MessageID")
	}
	id := strings.Trim(string(e.ID), `"`)
	if _, err := strconv.ParseInt(id, 10, 64); err != nil {
		id = e.MessageID + ":" + e.Type
	}
	detail := strings.Join(nonEmpty(e.Type, e.Description, e.Details), " ")
	return []Event{{Type: typ, BounceType: class, MessageID: clip(e.MessageID, 256), Recipient: addr,
		Detail: clip(detail, 1000), EventID: clip("postmark:"+id+":"+addr, 600), OccurredAt: parseTime(e.BouncedAt, now)}}, nil
}
