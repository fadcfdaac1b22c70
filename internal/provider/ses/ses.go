// Package ses is the maily_email adapter: Amazon SES API v2 SendEmail
// (PROVIDERS.md "maily_email -> Amazon SES API v2").
//
// Requests are signed with the AWS SDK's own SigV4 signer but sent by
// provider.Do, so the raw answer is kept for attempt history; the sesv2
// client would hide it behind typed results.
package ses

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// KindID is the providerKind this package implements.
const KindID = "maily_email"

// sendPath is SendEmail's documented path; base_url keeps it.
const sendPath = "/v2/email/outbound-emails"

// signingService is SigV4's service name for SES (v1 and v2 alike).
const signingService = "ses"

// Config is the decoded configJson of a maily_email account.
type Config struct {
	AccessKeyID     string `json:"maily_access_key_id"`
	SecretAccessKey string `json:"maily_secret_access_key"`
	// Region picks the endpoint host and the SigV4 scope, e.g. us-east-1.
	Region    string `json:"maily_region"`
	FromEmail string `json:"maily_from_email"`
	// FromName is the optional display name of FromEmailAddress.
	FromName string `json:"maily_from_name"`
	// ConfigurationSet is sent as ConfigurationSetName when set.
	ConfigurationSet string `json:"maily_configuration_set"`
	// BaseURL replaces the scheme and host of the regional endpoint.
	BaseURL string `json:"base_url"`
}

// Kind describes maily_email for the registry.
func Kind() provider.Kind {
	return provider.Kind{
		ID:       KindID,
		Channel:  notify.ChannelEmail,
		Required: []string{"maily_access_key_id", "maily_secret_access_key", "maily_region", "maily_from_email"},
		Optional: []string{"maily_from_name", "maily_configuration_set"},
		// SES v2 has no batch API for distinct messages (SendBulkEmail is
		// template-only), so messages go one per call, unthrottled here.
		Batch:      provider.BatchDefaults{MaxSize: 1},
		New:        New,
		Identities: NewIdentities,
	}
}

// Provider sends through one SES account and region.
type Provider struct {
	cfg    Config
	from   string
	url    string
	root   string
	creds  aws.Credentials
	signer *v4.Signer
	http   *http.Client
	now    func() time.Time
}

// Interface guards.
var (
	_ provider.Provider                                               = (*Provider)(nil)
	_ func(provider.Config, provider.Deps) (provider.Provider, error) = New
)

// regionRE keeps the region to a DNS label run, since it becomes part of
// the endpoint host.
var regionRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// New builds a provider; a missing key, a malformed region or a bad
// base_url is an invalid_request *provider.Error.
func New(cfg provider.Config, deps provider.Deps) (provider.Provider, error) {
	if err := provider.Require(cfg, Kind().Required...); err != nil {
		return nil, err
	}
	c := Config{
		AccessKeyID:      cfg["maily_access_key_id"],
		SecretAccessKey:  cfg["maily_secret_access_key"],
		Region:           cfg["maily_region"],
		FromEmail:        cfg["maily_from_email"],
		FromName:         cfg["maily_from_name"],
		ConfigurationSet: cfg["maily_configuration_set"],
		BaseURL:          cfg["base_url"],
	}
	if !regionRE.MatchString(c.Region) {
		return nil, provider.Errorf(notify.FailureInvalidRequest, "maily_region %q is not a region name", c.Region)
	}
	root, err := provider.APIRoot(cfg, "https://email."+c.Region+".amazonaws.com")
	if err != nil {
		return nil, err
	}
	client := deps.HTTP
	if client == nil {
		client = provider.DefaultHTTPClient()
	}
	now := deps.Now
	if now == nil {
		now = time.Now
	}
	return &Provider{
		cfg:    c,
		from:   FormatFrom(c.FromName, c.FromEmail),
		url:    root + sendPath,
		root:   root,
		creds:  aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, Source: "configJson"},
		signer: v4.NewSigner(),
		http:   client,
		now:    now,
	}, nil
}

// FormatFrom builds FromEmailAddress. SES does not encode display names
// itself: a non-ASCII name must arrive as an RFC 2047 encoded word, and an
// ASCII name with specials is quoted (RFC 5322). CR and LF are dropped so a
// name cannot add a header.
func FormatFrom(name, addr string) string {
	name = strings.TrimSpace(strings.NewReplacer("\r", "", "\n", "").Replace(name))
	switch {
	case name == "":
		return addr
	case !isASCII(name):
		return mime.QEncoding.Encode("UTF-8", name) + " <" + addr + ">"
	case needsQuoting(name):
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `" <` + addr + ">"
	}
	return name + " <" + addr + ">"
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// needsQuoting reports whether name is not a run of atext words.
func needsQuoting(name string) bool {
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == ' ':
		case strings.ContainsRune("!#$%&'*+-/=?^_`{|}~", r):
		default:
			return true
		}
	}
	return false
}

type content struct {
	Data    string `json:"Data"`
	Charset string `json:"Charset"`
}

type header struct {
	Name  string `json:"Name"`
	Value string `json:"Value"`
}

// sendEmailInput is the SendEmail request body (Simple content only).
type sendEmailInput struct {
	FromEmailAddress string `json:"FromEmailAddress"`
	Destination      struct {
		ToAddresses []string `json:"ToAddresses"`
	} `json:"Destination"`
	Content struct {
		Simple struct {
			Subject content `json:"Subject"`
			Body    struct {
				Text *content `json:"Text,omitempty"`
				HTML *content `json:"Html,omitempty"`
			} `json:"Body"`
			Headers []header `json:"Headers,omitempty"`
		} `json:"Simple"`
	} `json:"Content"`
	ConfigurationSetName string `json:"ConfigurationSetName,omitempty"`
}

func (p *Provider) input(m provider.Message) sendEmailInput {
	var in sendEmailInput
	in.FromEmailAddress = p.from
	in.Destination.ToAddresses = []string{m.To}
	s := &in.Content.Simple
	s.Subject = content{Data: m.Title, Charset: "UTF-8"}
	if m.Text != "" {
		s.Body.Text = &content{Data: m.Text, Charset: "UTF-8"}
	}
	if m.HTML != "" {
		s.Body.HTML = &content{Data: m.HTML, Charset: "UTF-8"}
	}
	names := make([]string, 0, len(m.Headers))
	for k := range m.Headers {
		names = append(names, k)
	}
	sort.Strings(names) // a stable payload for golden files and logs
	for _, k := range names {
		s.Headers = append(s.Headers, header{Name: k, Value: m.Headers[k]})
	}
	in.ConfigurationSetName = p.cfg.ConfigurationSet
	return in
}

// Send makes one SendEmail call per message, in order.
func (p *Provider) Send(ctx context.Context, msgs []provider.Message) []provider.Result {
	out := make([]provider.Result, len(msgs))
	for i, m := range msgs {
		out[i] = p.sendOne(ctx, m)
	}
	return out
}

func (p *Provider) sendOne(ctx context.Context, m provider.Message) provider.Result {
	body, err := marshal(p.input(m))
	if err != nil {
		return provider.Result{Err: provider.Errorf(notify.FailureInvalidRequest, "encode request: %v", err)}
	}
	call, perr := p.signedCall(ctx, http.MethodPost, p.url, body)
	if perr != nil {
		return provider.Result{Err: perr}
	}
	ex, raw, perr := provider.Do(ctx, p.http, call)
	if e := classify(ex, raw, perr); e != nil {
		return provider.Result{Err: e, Exchange: ex}
	}
	var r struct {
		MessageID string `json:"MessageId"`
	}
	if json.Unmarshal(raw, &r) != nil || r.MessageID == "" {
		return provider.Result{Err: provider.Errorf(notify.FailureUnknown, "HTTP %d without a MessageId", ex.Response.HTTPStatus), Exchange: ex}
	}
	return provider.Result{MessageID: r.MessageID, Exchange: ex}
}

// signedCall signs a request equal to the one provider.Do will build
// (method, URL, headers, body length) and carries its headers over.
func (p *Provider) signedCall(ctx context.Context, method, url string, body []byte) (provider.Call, *provider.Error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return provider.Call{}, provider.Errorf(notify.FailureInvalidRequest, "build request: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	sum := sha256.Sum256(body)
	if err := p.signer.SignHTTP(ctx, p.creds, req, hex.EncodeToString(sum[:]), signingService, p.cfg.Region, p.now()); err != nil {
		return provider.Call{}, provider.Errorf(notify.FailureInvalidRequest, "sign request: %v", err)
	}
	var logged any
	if body != nil {
		logged = json.RawMessage(body)
	}
	return provider.Call{
		Method: method,
		URL:    url,
		Header: req.Header,
		Body:   body,
		// The body holds no credential; the signature is in the headers,
		// which are not logged.
		Logged: logged,
	}, nil
}

// marshal encodes without HTML escaping so that "Name <addr>" and HTML
// bodies go out as written.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("marshal: %w", err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
