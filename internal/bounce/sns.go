package bounce

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // SNS SignatureVersion 1 is SHA1withRSA
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
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

// SNSVerifier checks SNS signatures, fetching signing certificates through
// the given (SSRF-guarded) client and caching them per URL.
type SNSVerifier struct {
	Client *http.Client
	Policy SNSPolicy

	mu    sync.Mutex
	certs map[string]cachedCert
}

type cachedCert struct {
	key     *rsa.PublicKey
	fetched time.Time
}

// certTTL bounds how long a fetched certificate is reused; AWS rotates
// them rarely, and the URL names the certificate.
const certTTL = time.Hour

// maxCerts bounds the cache; only trusted hosts ever get in.
const maxCerts = 64

// Verify checks m's signature with the certificate at SigningCertURL.
func (v *SNSVerifier) Verify(ctx context.Context, m *SNSMessage) error {
	var h crypto.Hash
	switch m.SignatureVersion {
	case "1":
		h = crypto.SHA1
	case "2":
		h = crypto.SHA256
	default:
		return fmt.Errorf("%w: SignatureVersion must be 1 or 2", ErrSignature)
	}
	u, err := v.policy().CheckURL(m.SigningCertURL)
	if err != nil {
		return err
	}
	if !strings.HasSuffix(u.Path, ".pem") {
		return fmt.Errorf("%w: SigningCertURL must name a .pem file", ErrSignature)
	}
	sig, err := base64.StdEncoding.DecodeString(m.Signature)
	if err != nil {
		return fmt.Errorf("%w: Signature is not base64", ErrSignature)
	}
	key, err := v.cert(ctx, u.String())
	if err != nil {
		return err
	}
	var digest []byte
	if h == crypto.SHA1 {
		d := sha1.Sum([]byte(m.StringToSign())) //nolint:gosec
		digest = d[:]
	} else {
		d := sha256.Sum256([]byte(m.StringToSign()))
		digest = d[:]
	}
	if err := rsa.VerifyPKCS1v15(key, h, digest, sig); err != nil {
		return fmt.Errorf("%w: SNS signature does not match", ErrSignature)
	}
	return nil
}

// TrustHost adds a trusted host[:port] at run time (the demo's in-process
// simulator, whose address is known only after start).
func (v *SNSVerifier) TrustHost(host string) {
	v.mu.Lock()
	v.Policy.ExtraHosts = append(append([]string(nil), v.Policy.ExtraHosts...), host)
	v.mu.Unlock()
}

func (v *SNSVerifier) policy() SNSPolicy {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.Policy
}

func (v *SNSVerifier) cert(ctx context.Context, u string) (*rsa.PublicKey, error) {
	v.mu.Lock()
	c, ok := v.certs[u]
	v.mu.Unlock()
	if ok && time.Since(c.fetched) < certTTL {
		return c.key, nil
	}
	key, err := v.fetch(ctx, u)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	if v.certs == nil || len(v.certs) >= maxCerts {
		v.certs = map[string]cachedCert{}
	}
	v.certs[u] = cachedCert{key: key, fetched: time.Now()}
	v.mu.Unlock()
	return key, nil
}

// ErrFetch is a certificate or subscription URL that could not be read.
var ErrFetch = errors.New("SNS URL could not be fetched")

func (v *SNSVerifier) fetch(ctx context.Context, u string) (*rsa.PublicKey, error) {
	body, err := v.get(ctx, u, 64<<10)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(body)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%w: signing certificate is not a PEM certificate", ErrSignature)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: signing certificate does not parse", ErrSignature)
	}
	key, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: signing certificate has no RSA key", ErrSignature)
	}
	now := time.Now()
	if now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
		return nil, fmt.Errorf("%w: signing certificate is not valid now", ErrSignature)
	}
	return key, nil
}

func (v *SNSVerifier) get(ctx context.Context, u string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFetch, err)
	}
	client := v.Client
	if client == nil {
		client = http.DefaultClient
	}
	// A redirect could leave the trusted host; SNS URLs never redirect.
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFetch, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFetch, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %s answered %d", ErrFetch, u, resp.StatusCode)
	}
	return body, nil
}

// Confirm visits a verified SubscriptionConfirmation's SubscribeURL, which
// is how an HTTP endpoint confirms an SNS subscription.
func (v *SNSVerifier) Confirm(ctx context.Context, m *SNSMessage) error {
	u, err := v.policy().CheckURL(m.SubscribeURL)
	if err != nil {
		return err
	}
	_, err = v.get(ctx, u.String(), 64<<10)
	return err
}
