package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/notifyd/notifyd/client"
)

// Polling of `notifyd send --wait`; variables so that tests can shorten them.
var (
	sendPollInterval = 200 * time.Millisecond
	sendWaitTimeout  = 60 * time.Second
)

// sendOptions is a parsed `notifyd send` command line and environment.
type sendOptions struct {
	URL        string
	APIKey     string
	HMACSecret string
	Channel    string
	To         string
	Text       string
	Title      string
	Template   string
	Vars       map[string]string
	Wait       bool
}

// varsFlag collects repeated --var k=v.
type varsFlag map[string]string

func (v varsFlag) String() string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k+"="+v[k])
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

func (v varsFlag) Set(s string) error {
	k, val, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", s)
	}
	v[k] = val
	return nil
}

// parseSendArgs reads the flags of `notifyd send` and, for the key, secret
// and URL, the environment (getenv).
func parseSendArgs(args []string, getenv func(string) string, stderr io.Writer) (sendOptions, error) {
	o := sendOptions{Vars: map[string]string{}}
	fs := flag.NewFlagSet("send", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: notifyd send --channel CHANNEL --to ADDRESS (--text TEXT | --template CODE) [flags]

Sends one notification through POST /v1/notifications, signed with
NOTIFYD_API_KEY and NOTIFYD_HMAC_SECRET from the environment, and prints
the response data as JSON. Exits 0 when accepted (or, with --wait, sent).

`)
		fs.PrintDefaults()
	}
	defURL := getenv("NOTIFYD_URL")
	if defURL == "" {
		defURL = "http://127.0.0.1:8080"
	}
	fs.StringVar(&o.URL, "url", defURL, "server base URL (NOTIFYD_URL)")
	fs.StringVar(&o.Channel, "channel", "", "channel: sms, msgr_alimtalk, email, push_mobile, chata_webhook, chatb_webhook, chata_bot, chatb_bot")
	fs.StringVar(&o.To, "to", "", "recipient address: phone, email, device token, chat channel or label")
	fs.StringVar(&o.Text, "text", "", "body text (required unless --template)")
	fs.StringVar(&o.Title, "title", "", "title: email subject, push title")
	fs.StringVar(&o.Template, "template", "", "template code")
	fs.Var(varsFlag(o.Vars), "var", "template variable NAME=VALUE (repeatable)")
	fs.BoolVar(&o.Wait, "wait", false, "poll until the notification is sent, failed or canceled (60 s at most)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	o.APIKey, o.HMACSecret = getenv("NOTIFYD_API_KEY"), getenv("NOTIFYD_HMAC_SECRET")
	var missing []string
	if o.Channel == "" {
		missing = append(missing, "--channel")
	}
	if o.To == "" {
		missing = append(missing, "--to")
	}
	if o.Text == "" && o.Template == "" {
		missing = append(missing, "--text or --template")
	}
	if o.APIKey == "" {
		missing = append(missing, "NOTIFYD_API_KEY")
	}
	if o.HMACSecret == "" {
		missing = append(missing, "NOTIFYD_HMAC_SECRET")
	}
	if len(missing) > 0 {
		return o, fmt.Errorf("send needs %s (notifyd send --help)", strings.Join(missing, ", "))
	}
	if u, err := url.Parse(o.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return o, fmt.Errorf("--url must be an http(s) URL, got %q", o.URL)
	}
	return o, nil
}

// body is the POST /v1/notifications body.
func (o sendOptions) body() map[string]any {
	content := map[string]any{}
	if o.Text != "" {
		content["text"] = o.Text
	}
	if o.Title != "" {
		content["title"] = o.Title
	}
	if o.Template != "" {
		content["templateCode"] = o.Template
	}
	if len(o.Vars) > 0 {
		content["templateVariables"] = o.Vars
	}
	return map[string]any{"channel": o.Channel, "recipient": map[string]any{"address": o.To}, "content": content}
}

func send(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseSendArgs(args, os.Getenv, stderr)
	if err != nil {
		return err
	}
	c := client.New(o.URL)
	c.APIKey, c.HMACSecret = o.APIKey, o.HMACSecret
	r, err := c.Signed(ctx, http.MethodPost, "/v1/notifications", o.body())
	if err != nil {
		return err
	}
	if r.Status != http.StatusCreated {
		return problemError(r)
	}
	var accepted struct {
		RequestID string `json:"requestId"`
		Status    string `json:"status"`
	}
	if err := printData(stdout, r, &accepted); err != nil {
		return err
	}
	if !o.Wait {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, sendWaitTimeout)
	defer cancel()
	path := "/v1/notifications/" + url.PathEscape(accepted.RequestID)
	for {
		r, err := c.Signed(wctx, http.MethodGet, path, nil)
		if err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				return fmt.Errorf("notification %s: not finished after %s", accepted.RequestID, sendWaitTimeout)
			}
			return err
		}
		if r.Status != http.StatusOK {
			return problemError(r)
		}
		var rec struct {
			Status            string  `json:"status"`
			FinalErrorCode    *string `json:"finalErrorCode"`
			FinalErrorMessage *string `json:"finalErrorMessage"`
		}
		if err := r.Data(&rec); err != nil {
			return err
		}
		switch rec.Status {
		case "sent":
			return printData(stdout, r, nil)
		case "failed", "canceled":
			if err := printData(stdout, r, nil); err != nil {
				return err
			}
			msg := ""
			if rec.FinalErrorCode != nil {
				msg = ": " + *rec.FinalErrorCode
			}
			if rec.FinalErrorMessage != nil {
				msg += " " + *rec.FinalErrorMessage
			}
			return fmt.Errorf("notification %s %s%s", accepted.RequestID, rec.Status, msg)
		}
		select {
		case <-wctx.Done():
			_ = printData(stdout, r, nil)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("notification %s: still %s after %s", accepted.RequestID, rec.Status, sendWaitTimeout)
		case <-time.After(sendPollInterval):
		}
	}
}

// printData prints the envelope's data indented and, when v is not nil,
// decodes it into v.
func printData(w io.Writer, r *client.Response, v any) error {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		return fmt.Errorf("unexpected answer (HTTP %d): %s", r.Status, bytes.TrimSpace(r.Body))
	}
	if v != nil {
		if err := json.Unmarshal(env.Data, v); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, env.Data, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}

// problemError turns an error answer into an error naming its detail.
func problemError(r *client.Response) error {
	p := r.Problem()
	if p.Detail == "" && p.Title == "" {
		return fmt.Errorf("HTTP %d: %s", r.Status, bytes.TrimSpace(r.Body))
	}
	msg := p.Detail
	if msg == "" {
		msg = p.Title
	}
	if p.Code != "" {
		msg += " (" + p.Code + ")"
	}
	return errors.New("HTTP " + fmt.Sprint(r.Status) + ": " + msg)
}
