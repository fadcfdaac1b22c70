package provider

import (
	"encoding/json"
	"net/url"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// Spec is a provider kind written against its typed configuration C: a
// struct of string fields whose json tags are the configJson keys, each
// documented where C is declared. The registry entry it makes (Kind)
// decodes an account's configJson into a C and checks the required keys
// before the adapter's constructor runs, so no adapter reads configJson
// keys itself and every kind refuses a missing key with the same error.
type Spec[C any] struct {
	ID       string
	Channel  notify.Channel
	Required []string
	Optional []string
	Batch    BatchDefaults
	// Idempotent is Kind.Idempotent.
	Idempotent bool
	// Defaults, when set, fills in values derived from others (a key that
	// falls back to another, a default display name) before the required
	// keys are checked.
	Defaults func(*C)
	// New builds a provider for one account from its checked Config;
	// deps has HTTP and Now set. It checks what the keys must look like
	// (a URL, a region name) and returns invalid_request *Error otherwise.
	New func(c C, deps Deps) (Provider, error)
	// IdentityRequired are keys the identity API needs besides Required;
	// they are checked first.
	IdentityRequired []string
	// Identities builds the vendor's sender-identity API; nil when the
	// vendor has none.
	Identities func(c C, deps Deps) (notify.IdentityAPI, error)
	// Receipts is Kind.Receipts.
	Receipts string
}

// Kind is the registry entry of s.
func (s Spec[C]) Kind() Kind {
	k := Kind{
		ID:         s.ID,
		Channel:    s.Channel,
		Required:   s.Required,
		Optional:   s.Optional,
		Batch:      s.Batch,
		Idempotent: s.Idempotent,
		Receipts:   s.Receipts,
		New: func(cfg Config, deps Deps) (Provider, error) {
			c, err := s.Config(cfg)
			if err != nil {
				return nil, err
			}
			return s.New(c, deps.withDefaults())
		},
	}
	if s.Identities != nil {
		k.Identities = func(cfg Config, deps Deps) (notify.IdentityAPI, error) {
			if err := Require(cfg, s.IdentityRequired...); err != nil {
				return nil, err
			}
			c, err := s.Config(cfg)
			if err != nil {
				return nil, err
			}
			return s.Identities(c, deps.withDefaults())
		}
	}
	return k
}

// Config decodes cfg into a C, applies Defaults and checks the required
// keys: a missing or empty one is an invalid_request *Error naming it.
func (s Spec[C]) Config(cfg Config) (C, *Error) {
	var c C
	if err := recode(cfg, &c); err != nil {
		return c, Errorf(notify.FailureInvalidRequest, "configJson: %v", err)
	}
	if s.Defaults != nil {
		s.Defaults(&c)
	}
	// Checked on the decoded values, so that Defaults count.
	var got Config
	if err := recode(c, &got); err != nil {
		return c, Errorf(notify.FailureInvalidRequest, "configJson: %v", err)
	}
	return c, Require(got, s.Required...)
}

// recode moves in into out through JSON: configJson is an object of
// strings, and a Config's fields are strings tagged with its keys.
func recode(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// withDefaults fills what the caller left unset: the shared guarded
// client and the wall clock.
func (d Deps) withDefaults() Deps {
	if d.HTTP == nil {
		d.HTTP = DefaultHTTPClient()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return d
}

// Endpoint is the base_url key of the kinds that call a vendor API root;
// a kind's Config embeds it.
type Endpoint struct {
	// BaseURL replaces the scheme and host of the vendor's API root (the
	// simulator, a test server); its path is ignored.
	BaseURL string `json:"base_url"`
}

// Root returns the vendor API root for an account: defaultRoot, or the
// scheme and host of BaseURL (PROVIDERS "Decisions": the documented paths
// stay, so any path in base_url is ignored). A BaseURL that is not an
// absolute http(s) URL is an invalid_request *Error.
func (e Endpoint) Root(defaultRoot string) (string, *Error) {
	if e.BaseURL == "" {
		return defaultRoot, nil
	}
	u, err := HTTPURL("base_url", e.BaseURL)
	if err != nil {
		return "", err
	}
	return u.Scheme + "://" + u.Host, nil
}

// HTTPURL parses raw, the value of configJson key, as an absolute http(s)
// URL; anything else is an invalid_request *Error naming key.
func HTTPURL(key, raw string) (*url.URL, *Error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, Errorf(notify.FailureInvalidRequest, "%s must be an absolute http(s) URL", key)
	}
	return u, nil
}
