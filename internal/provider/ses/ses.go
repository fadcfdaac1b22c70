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
	"net/http"
	"regexp"
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

// Config is the configJson of a maily_email account.
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
	// Endpoint's base_url replaces the scheme and host of the regional
	// endpoint.
	provider.Endpoint
}

var spec = provider.Spec[Config]{
	ID:       KindID,
	Channel:  notify.ChannelEmail,
	Required: []string{"maily_access_key_id", "maily_secret_access_key", "maily_region", "maily_from_email"},
	Optional: []string{"maily_from_name", "maily_configuration_set"},
	// SES v2 has no batch API for distinct messages (SendBulkEmail is
	// template-only), so messages go one per call, unthrottled here.
	Batch:      provider.BatchDefaults{MaxSize: 1},
	Receipts:   notify.ReceiptsPushed, // SES Delivery and Bounce notifications on the callback endpoint (issue 35)
	New:        newProvider,
	Identities: newIdentities,
}

// Kind describes maily_email for the registry.
func Kind() provider.Kind { return spec.Kind() }

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

// Interface guard.
var _ provider.Provider = (*Provider)(nil)

// regionRE keeps the region to a DNS label run, since it becomes part of
// the endpoint host.
var regionRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// newProvider builds a provider; a malformed region or a bad base_url is
// an invalid_request *provider.Error.
func newProvider(c Config, deps provider.Deps) (provider.Provider, error) {
	if !regionRE.MatchString(c.Region) {
		return nil, provider.Errorf(notify.FailureInvalidRequest, "maily_region %q is not a region name", c.Region)
	}
	root, err := c.Root("https://email." + c.Region + ".amazonaws.com")
	if err != nil {
		return nil, err
	}
	return &Provider{
		cfg:    c,
		from:   provider.MailFromASCII(c.FromName, c.FromEmail),
		url:    root + sendPath,
		root:   root,
		creds:  aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, Source: "configJson"},
		signer: v4.NewSigner(),
		http:   deps.HTTP,
		now:    deps.Now,
	}, nil
}

type content struct {
	Data    string `json:"Data"`
	Charset string `json:"Charset"`
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
			Headers []provider.MailHeader `json:"Headers,omitempty"`
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
	s.Headers = provider.MailHeaders(m.Headers)
	in.ConfigurationSetName = p.cfg.ConfigurationSet
	return in
}

// Send makes one SendEmail call per message, in order.
func (p *Provider) Send(ctx context.Context, msgs []provider.Message) []provider.Result {
	return provider.SendEach(ctx, msgs, p.sendOne)
}

func (p *Provider) sendOne(ctx context.Context, m provider.Message) provider.Result {
	body, err := provider.EncodeJSON(p.input(m))
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
