// Package snshttp is the HTTP side of SES callbacks: it verifies the
// signature of an Amazon SNS message with the signing certificate fetched
// from its SigningCertURL, and confirms a subscription by visiting its
// SubscribeURL. The daemon builds it with the SSRF-guarded client and
// gives it to the suppressions room, which reads the payloads through the
// pure internal/bounce and reaches HTTP only through this port.
package snshttp

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // SNS SignatureVersion 1 is SHA1withRSA
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/bounce"
)

// Verifier checks SNS signatures, fetching signing certificates through
// the given (SSRF-guarded) client and caching them per URL.
type Verifier struct {
	Client *http.Client
	Policy bounce.SNSPolicy

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
func (v *Verifier) Verify(ctx context.Context, m *bounce.SNSMessage) error {
	var h crypto.Hash
	switch m.SignatureVersion {
	case "1":
		h = crypto.SHA1
	case "2":
		h = crypto.SHA256
	default:
		return fmt.Errorf("%w: SignatureVersion must be 1 or 2", bounce.ErrSignature)
	}
	u, err := v.policy().CheckURL(m.SigningCertURL)
	if err != nil {
		return err
	}
	if !strings.HasSuffix(u.Path, ".pem") {
		return fmt.Errorf("%w: SigningCertURL must name a .pem file", bounce.ErrSignature)
	}
	sig, err := base64.StdEncoding.DecodeString(m.Signature)
	if err != nil {
		return fmt.Errorf("%w: Signature is not base64", bounce.ErrSignature)
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
		return fmt.Errorf("%w: SNS signature does not match", bounce.ErrSignature)
	}
	return nil
}

// TrustHost adds a trusted host[:port] at run time (the demo's in-process
// simulator, whose address is known only after start).
func (v *Verifier) TrustHost(host string) {
	v.mu.Lock()
	v.Policy.ExtraHosts = append(append([]string(nil), v.Policy.ExtraHosts...), host)
	v.mu.Unlock()
}

func (v *Verifier) policy() bounce.SNSPolicy {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.Policy
}

func (v *Verifier) cert(ctx context.Context, u string) (*rsa.PublicKey, error) {
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

func (v *Verifier) fetch(ctx context.Context, u string) (*rsa.PublicKey, error) {
	body, err := v.get(ctx, u, 64<<10)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(body)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%w: signing certificate is not a PEM certificate", bounce.ErrSignature)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: signing certificate does not parse", bounce.ErrSignature)
	}
	key, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: signing certificate has no RSA key", bounce.ErrSignature)
	}
	now := time.Now()
	if now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
		return nil, fmt.Errorf("%w: signing certificate is not valid now", bounce.ErrSignature)
	}
	return key, nil
}

func (v *Verifier) get(ctx context.Context, u string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", bounce.ErrFetch, err)
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
		return nil, fmt.Errorf("%w: %v", bounce.ErrFetch, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", bounce.ErrFetch, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %s answered %d", bounce.ErrFetch, u, resp.StatusCode)
	}
	return body, nil
}

// Confirm visits a verified SubscriptionConfirmation's SubscribeURL, which
// is how an HTTP endpoint confirms an SNS subscription.
func (v *Verifier) Confirm(ctx context.Context, m *bounce.SNSMessage) error {
	u, err := v.policy().CheckURL(m.SubscribeURL)
	if err != nil {
		return err
	}
	_, err = v.get(ctx, u.String(), 64<<10)
	return err
}
