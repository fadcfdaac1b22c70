// Package client is a Go client for notifyd: it signs Notification API
// requests (API-DECISIONS section 3) and carries dashboard bearer tokens.
// The tests, the benchmarks and `notifyd send` use it.
package client

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Client talks to one notifyd server.
type Client struct {
	BaseURL    string
	HTTP       *http.Client
	APIKey     string // <key_id>.<key_secret>
	HMACSecret string
	Token      string // dashboard access token
	// Now is the clock used for X-Timestamp; nil means time.Now.
	Now func() time.Time
}

// New returns a client for baseURL.
func New(baseURL string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// Response is a raw answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Decode unmarshals the body into v.
func (r *Response) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// Data unmarshals the Notification API envelope's data into v.
func (r *Response) Data(v any) error {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		return err
	}
	return json.Unmarshal(env.Data, v)
}

// Problem is a problem+json error body.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Code     string `json:"code"`
	Instance string `json:"instance"`
}

// Problem decodes the body as a problem.
func (r *Response) Problem() Problem {
	var p Problem
	_ = json.Unmarshal(r.Body, &p)
	return p
}

// StringToSign is the signed string: METHOD, target, timestamp, nonce and
// the hex SHA-256 of the body, joined by line feeds.
func StringToSign(method, target, timestamp, nonce string, body []byte) string {
	sum := sha256.Sum256(body)
	return strings.ToUpper(method) + "\n" + target + "\n" + timestamp + "\n" + nonce + "\n" + hex.EncodeToString(sum[:])
}

// Sign returns the X-Signature value for a request.
func Sign(hmacSecret, method, target, timestamp, nonce string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(hmacSecret))
	mac.Write([]byte(StringToSign(method, target, timestamp, nonce, body)))
	return hex.EncodeToString(mac.Sum(nil))
}

// NewNonce returns a random nonce.
func NewNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// SignHeaders sets the four signature headers on req for body.
func (c *Client) SignHeaders(req *http.Request, body []byte) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	ts := strconv.FormatInt(now().Unix(), 10)
	nonce := NewNonce()
	req.Header.Set("X-API-Key", c.APIKey)
	req.Header.Set("X-Timestamp", ts)
	req.Header.Set("X-Nonce", nonce)
	req.Header.Set("X-Signature", Sign(c.HMACSecret, req.Method, req.URL.RequestURI(), ts, nonce, body))
}

// Signed sends a signed Notification API request; v is marshalled to JSON
// unless it is nil or already []byte.
func (c *Client) Signed(ctx context.Context, method, path string, v any) (*Response, error) {
	return c.do(ctx, method, path, v, true)
}

// Dashboard sends a Dashboard API request with the bearer token.
func (c *Client) Dashboard(ctx context.Context, method, path string, v any) (*Response, error) {
	return c.do(ctx, method, path, v, false)
}

func (c *Client) do(ctx context.Context, method, path string, v any, signed bool) (*Response, error) {
	var body []byte
	switch b := v.(type) {
	case nil:
	case []byte:
		body = b
	default:
		var err error
		if body, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if signed {
		c.SignHeaders(req, body)
	} else if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: rb}, nil
}

// Login opens a dashboard session and keeps its token.
func (c *Client) Login(ctx context.Context, email, password string) error {
	r, err := c.Dashboard(ctx, "POST", "/v1/auth/login", map[string]string{"email": email, "password": password})
	if err != nil {
		return err
	}
	if r.Status != http.StatusOK {
		return fmt.Errorf("login: %d %s", r.Status, r.Problem().Detail)
	}
	var out struct {
		AccessToken string `json:"accessToken"`
	}
	if err := r.Decode(&out); err != nil {
		return err
	}
	c.Token = out.AccessToken
	return nil
}

// CreateAPIKey creates a key with scopes and returns a copy of c that
// signs with it.
func (c *Client) CreateAPIKey(ctx context.Context, name string, scopes ...string) (*Client, string, error) {
	r, err := c.Dashboard(ctx, "POST", "/v1/api-keys", map[string]any{"name": name, "scopes": scopes})
	if err != nil {
		return nil, "", err
	}
	if r.Status != http.StatusCreated {
		return nil, "", fmt.Errorf("create api key: %d %s", r.Status, r.Problem().Detail)
	}
	var out struct {
		APIKey struct {
			ID string `json:"id"`
		} `json:"apiKey"`
		Key        string `json:"key"`
		HMACSecret string `json:"hmacSecret"`
	}
	if err := r.Decode(&out); err != nil {
		return nil, "", err
	}
	cp := *c
	cp.APIKey, cp.HMACSecret, cp.Token = out.Key, out.HMACSecret, ""
	return &cp, out.APIKey.ID, nil
}
