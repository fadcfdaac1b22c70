// Package fcm is the push_gateway adapter: Firebase Cloud Messaging HTTP v1
// (PROVIDERS.md "push_gateway -> Firebase Cloud Messaging HTTP v1").
//
// The OAuth2 JWT-bearer grant is done here with crypto/rsa rather than
// golang.org/x/oauth2/google: it is one signed JWT and one form POST, and
// doing it through provider.Do keeps the token call's raw answer (and the
// SSRF-guarded client) like every other vendor call.
package fcm

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// KindID is the providerKind this package implements.
const KindID = "push_gateway"

// DefaultRoot is FCM's API root; configJson base_url replaces it.
const DefaultRoot = "https://fcm.googleapis.com"

// defaultTokenURI is Google's token endpoint, for a service account whose
// JSON lacks token_uri.
const defaultTokenURI = "https://oauth2.googleapis.com/token"

const (
	scope     = "https://www.googleapis.com/auth/firebase.messaging"
	grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	// tokenLifetime is the longest assertion lifetime Google accepts.
	tokenLifetime = time.Hour
	// tokenMargin renews a cached token this long before it expires, so a
	// token does not lapse between the check and the vendor's.
	tokenMargin = time.Minute
	// concurrency bounds the per-message calls of one Send, as the admin
	// SDK's SendEach does.
	concurrency = 16
)

// redacted stands in for secrets in logged requests and answers.
const redacted = "[redacted]"

// Config is the configJson of a push_gateway account.
type Config struct {
	// ServiceAccountJSON is the Google service-account key file, as a string.
	ServiceAccountJSON string `json:"push_service_account_json"`
	// Endpoint's base_url replaces the scheme and host of DefaultRoot; the
	// token endpoint is the JSON's token_uri.
	provider.Endpoint
}

// serviceAccount holds the fields of the key file the grant needs.
type serviceAccount struct {
	ProjectID    string `json:"project_id"`
	PrivateKeyID string `json:"private_key_id"`
	PrivateKey   string `json:"private_key"`
	ClientEmail  string `json:"client_email"`
	TokenURI     string `json:"token_uri"`
}

var spec = provider.Spec[Config]{
	ID:       KindID,
	Channel:  notify.ChannelPush,
	Required: []string{"push_service_account_json"},
	Batch:    provider.BatchDefaults{CallsPerSecond: 20, Window: 300 * time.Millisecond, MaxSize: 500},
	New:      newProvider,
}

// Kind describes push_gateway for the registry.
func Kind() provider.Kind { return spec.Kind() }

// Provider sends through one Firebase project.
type Provider struct {
	sa      serviceAccount
	key     *rsa.PrivateKey
	sendURL string
	http    *http.Client
	now     func() time.Time

	mu     sync.Mutex // guards token and expiry, and serializes fetches
	token  string
	expiry time.Time
}

// Interface guard.
var _ provider.Provider = (*Provider)(nil)

// newProvider builds a provider. A malformed service-account JSON or
// private key, or a bad base_url, is an invalid_request *provider.Error.
func newProvider(c Config, deps provider.Deps) (provider.Provider, error) {
	sa, key, perr := parseServiceAccount(c.ServiceAccountJSON)
	if perr != nil {
		return nil, perr
	}
	root, perr := c.Root(DefaultRoot)
	if perr != nil {
		return nil, perr
	}
	return &Provider{
		sa:      sa,
		key:     key,
		sendURL: root + "/v1/projects/" + url.PathEscape(sa.ProjectID) + "/messages:send",
		http:    deps.HTTP,
		now:     deps.Now,
	}, nil
}

// parseServiceAccount decodes the key file. Its errors never quote the
// input, which holds the private key.
func parseServiceAccount(raw string) (serviceAccount, *rsa.PrivateKey, *provider.Error) {
	var sa serviceAccount
	if err := json.Unmarshal([]byte(raw), &sa); err != nil {
		return sa, nil, provider.Errorf(notify.FailureInvalidRequest, "push_service_account_json is not valid JSON")
	}
	for _, f := range []struct{ name, v string }{
		{"project_id", sa.ProjectID}, {"client_email", sa.ClientEmail}, {"private_key", sa.PrivateKey},
	} {
		if f.v == "" {
			return sa, nil, provider.Errorf(notify.FailureInvalidRequest, "push_service_account_json lacks %s", f.name)
		}
	}
	if sa.TokenURI == "" {
		sa.TokenURI = defaultTokenURI
	}
	if u, err := url.Parse(sa.TokenURI); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return sa, nil, provider.Errorf(notify.FailureInvalidRequest, "push_service_account_json token_uri is not an absolute http(s) URL")
	}
	key, err := parseKey(sa.PrivateKey)
	if err != nil {
		return sa, nil, err
	}
	return sa, key, nil
}

// parseKey reads an RSA key in PKCS#8 (what Google issues) or PKCS#1 PEM.
func parseKey(pemKey string) (*rsa.PrivateKey, *provider.Error) {
	block, _ := pem.Decode([]byte(pemKey))
	if block == nil {
		return nil, provider.Errorf(notify.FailureInvalidRequest, "push_service_account_json private_key is not PEM")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, provider.Errorf(notify.FailureInvalidRequest, "push_service_account_json private_key is not an RSA key")
		}
		return rk, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	return nil, provider.Errorf(notify.FailureInvalidRequest, "push_service_account_json private_key is not a PKCS#8 or PKCS#1 RSA key")
}

// accessToken returns the cached token, fetching one when there is none or
// it is about to expire. stale, when set, is a token the vendor refused: it
// is dropped, unless another caller has already replaced it.
func (p *Provider) accessToken(ctx context.Context, stale string) (string, provider.Exchange, *provider.Error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if stale != "" && p.token == stale {
		p.token = ""
	}
	if p.token != "" && p.now().Before(p.expiry.Add(-tokenMargin)) {
		return p.token, provider.Exchange{}, nil
	}
	tok, ttl, ex, err := p.fetchToken(ctx)
	if err != nil {
		return "", ex, err
	}
	p.token, p.expiry = tok, p.now().Add(ttl)
	return tok, ex, nil
}

// fetchToken performs the JWT-bearer grant at token_uri.
func (p *Provider) fetchToken(ctx context.Context) (string, time.Duration, provider.Exchange, *provider.Error) {
	assertion, err := p.assertion(p.now())
	if err != nil {
		return "", 0, provider.Exchange{}, provider.Errorf(notify.FailureInvalidRequest, "sign token assertion: %v", err)
	}
	form := url.Values{"grant_type": {grantType}, "assertion": {assertion}}
	ex, raw, perr := provider.Do(ctx, p.http, provider.Call{
		Method: http.MethodPost,
		URL:    p.sa.TokenURI,
		Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}},
		Body:   []byte(form.Encode()),
		Logged: map[string]string{"grant_type": grantType, "assertion": redacted},
	})
	if e := classifyToken(ex, raw, perr); e != nil {
		return "", 0, ex, e
	}
	var tr struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		TokenType   string `json:"token_type"`
	}
	if json.Unmarshal(raw, &tr) != nil || tr.AccessToken == "" {
		scrubToken(&ex)
		return "", 0, ex, provider.Errorf(notify.FailureUnknown, "token endpoint answered HTTP %d without an access_token", ex.Response.HTTPStatus)
	}
	scrubToken(&ex)
	ttl := time.Duration(tr.ExpiresIn) * time.Second
	if ttl <= tokenMargin {
		// Too short (or absent) to cache with the margin: use it once.
		ttl = tokenMargin
	}
	return tr.AccessToken, ttl, ex, nil
}

// scrubToken keeps an access token out of a recorded answer.
func scrubToken(ex *provider.Exchange) {
	if ex.Response != nil && strings.Contains(ex.Response.Body, "access_token") {
		ex.Response.Body = `{"access_token":"` + redacted + `"}`
	}
}

// assertion builds the RS256-signed JWT of the grant.
func (p *Provider) assertion(now time.Time) (string, error) {
	header := map[string]string{"alg": "RS256", "typ": "JWT"}
	if p.sa.PrivateKeyID != "" {
		header["kid"] = p.sa.PrivateKeyID
	}
	iat := now.Unix()
	claims := map[string]any{
		"iss":   p.sa.ClientEmail,
		"scope": scope,
		"aud":   p.sa.TokenURI,
		"iat":   iat,
		"exp":   iat + int64(tokenLifetime/time.Second),
	}
	hb, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	cb, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	signingInput := enc.EncodeToString(hb) + "." + enc.EncodeToString(cb)
	sum := sha256.Sum256([]byte(signingInput))
	sig, err := rsa.SignPKCS1v15(rand.Reader, p.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signingInput + "." + enc.EncodeToString(sig), nil
}

type notification struct {
	Title string `json:"title,omitempty"`
	Body  string `json:"body,omitempty"`
}

type message struct {
	Token        string            `json:"token"`
	Notification *notification     `json:"notification,omitempty"`
	Data         map[string]string `json:"data,omitempty"`
}

func payload(m provider.Message) ([]byte, error) {
	msg := message{Token: m.To, Data: m.Data}
	if m.Title != "" || m.Text != "" {
		msg.Notification = &notification{Title: m.Title, Body: m.Text}
	}
	// Not json.Marshal: texts go out as written, without HTML escaping.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Message message `json:"message"`
	}{msg}); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Send makes one messages:send call per message, at most concurrency at a
// time, as FCM has no batch endpoint any more. One token serves them all.
func (p *Provider) Send(ctx context.Context, msgs []provider.Message) []provider.Result {
	if len(msgs) == 0 {
		return nil
	}
	tok, ex, err := p.accessToken(ctx, "")
	if err != nil {
		return provider.FailAll(msgs, err, ex)
	}
	// A refused token is renewed once per Send, however many of its
	// messages were refused with it.
	type renewed struct {
		tok string
		ex  provider.Exchange
		err *provider.Error
	}
	renew := sync.OnceValue(func() renewed {
		t, ex, err := p.accessToken(ctx, tok)
		return renewed{t, ex, err}
	})
	out := make([]provider.Result, len(msgs))
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i, m := range msgs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			r, refused := p.sendOne(ctx, m, tok)
			if refused {
				nt := renew()
				if nt.err != nil {
					r = provider.Result{Err: nt.err, Exchange: nt.ex}
				} else {
					// Retried once: a second refusal stands as unauthorized.
					r, _ = p.sendOne(ctx, m, nt.tok)
				}
			}
			out[i] = r
		}()
	}
	wg.Wait()
	return out
}

// sendOne posts one message. refused reports a 401 on the access token
// itself (not on the APNs or web-push credentials behind it), which a new
// token may cure.
func (p *Provider) sendOne(ctx context.Context, m provider.Message, tok string) (provider.Result, bool) {
	body, err := payload(m)
	if err != nil {
		return provider.Result{Err: provider.Errorf(notify.FailureInvalidRequest, "encode request: %v", err)}, false
	}
	ex, raw, perr := provider.Do(ctx, p.http, provider.Call{
		Method: http.MethodPost,
		URL:    p.sendURL,
		Header: http.Header{
			"Authorization": {"Bearer " + tok},
			"Content-Type":  {"application/json"},
		},
		Body: body,
		// The body holds the device token, no credential.
		Logged: json.RawMessage(body),
	})
	e, errorCode := classify(ex, raw, perr)
	if e != nil {
		refused := ex.Response != nil && ex.Response.HTTPStatus == http.StatusUnauthorized && errorCode != "THIRD_PARTY_AUTH_ERROR"
		return provider.Result{Err: e, Exchange: ex}, refused
	}
	var r struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Name == "" {
		return provider.Result{Err: provider.Errorf(notify.FailureUnknown, "HTTP %d without a message name", ex.Response.HTTPStatus), Exchange: ex}, false
	}
	// name is projects/{project}/messages/{id}; the id is what is looked up.
	return provider.Result{MessageID: r.Name[strings.LastIndexByte(r.Name, '/')+1:], Exchange: ex}, false
}
