package bounce

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// SNS message types.
const (
	SNSNotification             = "Notification"
	SNSSubscriptionConfirmation = "SubscriptionConfirmation"
	SNSUnsubscribeConfirmation  = "UnsubscribeConfirmation"
)

// SNSMessage is the JSON document Amazon SNS posts to an HTTP(S) endpoint.
type SNSMessage struct {
	Type             string `json:"Type"`
	MessageID        string `json:"MessageId"`
	Token            string `json:"Token"`
	TopicArn         string `json:"TopicArn"`
	Subject          string `json:"Subject"`
	Message          string `json:"Message"`
	Timestamp        string `json:"Timestamp"`
	SignatureVersion string `json:"SignatureVersion"`
	Signature        string `json:"Signature"`
	SigningCertURL   string `json:"SigningCertURL"`
	SubscribeURL     string `json:"SubscribeURL"`
	UnsubscribeURL   string `json:"UnsubscribeURL"`
	// hasSubject tells an absent Subject from an empty one: only a present
	// Subject is part of the string to sign.
	hasSubject bool
}

// ParseSNS decodes an SNS HTTP(S) delivery.
func ParseSNS(body []byte) (*SNSMessage, error) {
	var m SNSMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, malformed("SNS message is not a JSON object")
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(body, &keys)
	if raw, ok := keys["Subject"]; ok && string(raw) != "null" {
		m.hasSubject = true
	}
	switch m.Type {
	case SNSNotification, SNSSubscriptionConfirmation, SNSUnsubscribeConfirmation:
	default:
		return nil, malformed("SNS Type must be Notification, SubscriptionConfirmation or UnsubscribeConfirmation")
	}
	if m.MessageID == "" || m.TopicArn == "" || m.Timestamp == "" || m.Signature == "" || m.SigningCertURL == "" {
		return nil, malformed("SNS message lacks MessageId, TopicArn, Timestamp, Signature or SigningCertURL")
	}
	if m.Type != SNSNotification && (m.SubscribeURL == "" || m.Token == "") {
		return nil, malformed("SNS confirmation lacks SubscribeURL or Token")
	}
	return &m, nil
}

// StringToSign is the canonical string of AWS's "Verifying the signatures
// of Amazon SNS messages": name and value of each signed field, each
// followed by a newline, in byte order of the names.
func (m *SNSMessage) StringToSign() string {
	var b strings.Builder
	add := func(k, v string) { b.WriteString(k + "\n" + v + "\n") }
	add("Message", m.Message)
	add("MessageId", m.MessageID)
	if m.Type == SNSNotification {
		if m.hasSubject {
			add("Subject", m.Subject)
		}
		add("Timestamp", m.Timestamp)
		add("TopicArn", m.TopicArn)
		add("Type", m.Type)
		return b.String()
	}
	add("SubscribeURL", m.SubscribeURL)
	add("Timestamp", m.Timestamp)
	add("Token", m.Token)
	add("TopicArn", m.TopicArn)
	add("Type", m.Type)
	return b.String()
}

// snsHost is the default trusted host of signing certificates and
// subscription URLs: sns.<region>.amazonaws.com (and the China partition).
var snsHost = regexp.MustCompile(`^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$`)

// SNSPolicy decides which URLs an SNS message may point at.
type SNSPolicy struct {
	// ExtraHosts are further trusted host[:port] values (a LocalStack or
	// the simulator), beside sns.<region>.amazonaws.com.
	ExtraHosts []string
	// AllowHTTP accepts plain http for ExtraHosts; only when private
	// targets are allowed (tests, demo), never for the AWS hosts.
	AllowHTTP bool
}

// CheckURL refuses a certificate or subscription URL outside the policy.
func (p SNSPolicy) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("%w: URL %q is not absolute", ErrSignature, raw)
	}
	host := strings.ToLower(u.Host)
	if u.Scheme == "https" && u.Port() == "" && snsHost.MatchString(host) {
		return u, nil
	}
	for _, h := range p.ExtraHosts {
		if strings.EqualFold(strings.TrimSpace(h), host) && (u.Scheme == "https" || (u.Scheme == "http" && p.AllowHTTP)) {
			return u, nil
		}
	}
	return nil, fmt.Errorf("%w: host %q of %s is not a trusted SNS host", ErrSignature, u.Host, u.Scheme)
}

// ErrFetch is a certificate or subscription URL that could not be read.
var ErrFetch = errors.New("SNS URL could not be fetched")
