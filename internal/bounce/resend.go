package bounce

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SvixTolerance is how far svix-timestamp may be from now (Svix's own
// verifiers use five minutes).
const SvixTolerance = 5 * time.Minute

// SvixHeaders are the three headers of a Svix-signed webhook.
type SvixHeaders struct {
	ID, Timestamp, Signature string
}

// VerifySvix checks a Svix signature: HMAC-SHA256 keyed with the
// base64-decoded part of the whsec_ secret, over id.timestamp.body, sent
// as one or more space-separated "v1,<base64>" values.
func VerifySvix(secret string, h SvixHeaders, body []byte, now time.Time) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(strings.TrimSpace(secret), "whsec_"))
	if err != nil || len(key) == 0 {
		return fmt.Errorf("%w: the configured webhook secret is not whsec_<base64>", ErrSignature)
	}
	if h.ID == "" || h.Timestamp == "" || h.Signature == "" {
		return fmt.Errorf("%w: svix-id, svix-timestamp and svix-signature are required", ErrSignature)
	}
	ts, err := strconv.ParseInt(h.Timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: svix-timestamp is not a number", ErrSignature)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > SvixTolerance || d < -SvixTolerance {
		return fmt.Errorf("%w: svix-timestamp outside tolerance", ErrSignature)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.ID + "." + h.Timestamp + "."))
	mac.Write(body)
	// Compared as the text Svix sends (standard base64, padded), as
	// Svix's own libraries do: a decoder would also take other spellings.
	want := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	for _, part := range strings.Fields(h.Signature) {
		ver, sig, ok := strings.Cut(part, ",")
		if ok && ver == "v1" && hmac.Equal([]byte(sig), want) {
			return nil
		}
	}
	return fmt.Errorf("%w: no svix-signature matches", ErrSignature)
}

type resendEvent struct {
	Type      string `json:"type"`
	CreatedAt string `json:"created_at"`
	Data      struct {
		EmailID string          `json:"email_id"`
		To      json.RawMessage `json:"to"`
		Bounce  *struct {
			Message string `json:"message"`
			SubType string `json:"subType"`
			Type    string `json:"type"`
		} `json:"bounce"`
	} `json:"data"`
}

// ParseResend reads a Resend webhook; email.bounced, email.complained and
// email.delivered yield events, other types none. svixID names the event for dedupe.
func ParseResend(body []byte, svixID string, now time.Time) ([]Event, error) {
	var e resendEvent
	if err := json.Unmarshal(body, &e); err != nil || e.Type == "" {
		return nil, malformed("Resend webhook is not {type, created_at, data}")
	}
	var typ, class, detail string
	switch e.Type {
	case "email.bounced":
		// Resend sends email.bounced for permanent rejections; a bounce
		// object that says otherwise is believed.
		typ, class = TypeBounce, Permanent
		if b := e.Data.Bounce; b != nil {
			switch strings.ToLower(b.Type) {
			case "", "permanent":
			case "transient":
				class = Transient
			default:
				class = Undetermined
			}
			detail = strings.Join(nonEmpty(b.Type, b.SubType, b.Message), " ")
		}
	case "email.complained":
		typ = TypeComplaint
	case "email.delivered":
		typ = TypeDelivery
	default:
		return nil, nil
	}
	if e.Data.EmailID == "" {
		return nil, malformed("Resend webhook lacks data.email_id")
	}
	var to []string
	if err := json.Unmarshal(e.Data.To, &to); err != nil {
		var one string
		if json.Unmarshal(e.Data.To, &one) != nil {
			return nil, malformed("Resend webhook data.to is not a list of addresses")
		}
		to = []string{one}
	}
	at := parseTime(e.CreatedAt, now)
	var out []Event
	for _, r := range to {
		addr := normalizeAddress(r)
		if addr == "" {
			continue
		}
		out = append(out, Event{Type: typ, BounceType: class, MessageID: clip(e.Data.EmailID, 256), Recipient: addr,
			Detail: clip(detail, 1000), EventID: clip("resend:"+svixID+":"+addr, 600), OccurredAt: at})
	}
	return out, nil
}
