package simulator

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ---- Slack incoming webhook -------------------------------------------

// slackWebhookStatus maps a webhook error body to its HTTP status.
var slackWebhookStatus = map[string]int{
	"invalid_payload": 400, "user_not_found": 400, "no_text": 400, "invalid_blocks": 400,
	"action_prohibited": 403, "invalid_token": 403, "channel_not_found": 404, "no_service": 404,
	"channel_is_archived": 410, "rate_limited": 429, "rollup_error": 500,
}

var slackWebhookStatusBody = map[int]string{
	400: "invalid_payload", 401: "invalid_token", 403: "action_prohibited", 404: "no_service",
	410: "channel_is_archived", 429: "rate_limited", 500: "rollup_error",
}

// slackWebhookError answers a plain-text error body like hooks.slack.com.
func slackWebhookError(w http.ResponseWriter, status int, body string) {
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	writeText(w, status, "text/html", body)
}

// slackPayload reads a message body: JSON, or a form with a payload field
// (both accepted by Slack).
func slackPayload(r *http.Request) (map[string]json.RawMessage, string) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var raw []byte
	if ct == "application/x-www-form-urlencoded" {
		form, err := parseForm(r)
		if err != nil {
			return nil, "invalid_payload"
		}
		raw = []byte(form.Get("payload"))
	} else {
		b, err := readBody(r)
		if err != nil {
			return nil, "invalid_payload"
		}
		raw = b
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(raw, &p) != nil || p == nil {
		return nil, "invalid_payload"
	}
	return p, ""
}

// slackContent checks text/blocks/attachments and returns text and the raw
// blocks; code is the Slack error on failure.
func slackContent(p map[string]json.RawMessage) (text, blocks, code string) {
	if raw, ok := p["text"]; ok && json.Unmarshal(raw, &text) != nil {
		return "", "", "invalid_payload"
	}
	if raw, ok := p["blocks"]; ok && string(raw) != "null" {
		var bl []map[string]any
		if json.Unmarshal(raw, &bl) != nil || len(bl) > 50 {
			return "", "", "invalid_blocks"
		}
		for _, b := range bl {
			if _, ok := b["type"].(string); !ok {
				return "", "", "invalid_blocks"
			}
		}
		if len(bl) > 0 {
			blocks = string(raw)
		}
	}
	hasAttachments := false
	if raw, ok := p["attachments"]; ok {
		var a []json.RawMessage
		hasAttachments = json.Unmarshal(raw, &a) == nil && len(a) > 0
	}
	if text == "" && blocks == "" && !hasAttachments {
		return "", "", "no_text"
	}
	if utf8.RuneCountInString(text) > 40000 {
		return "", "", "msg_too_long"
	}
	return text, blocks, ""
}

// slackWebhook serves POST /services/{T}/{B}/{X}: 200 "ok", no id.
func (s slackAPI) slackWebhook(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(strings.TrimPrefix(r.URL.Path, "/services/"), "/")
	if len(segs) != 3 || segs[0] == "" || segs[1] == "" || segs[2] == "" {
		slackWebhookError(w, http.StatusNotFound, "no_service")
		return
	}
	p, code := slackPayload(r)
	if code != "" {
		slackWebhookError(w, http.StatusBadRequest, code)
		return
	}
	if f, aborted := s.takeFault(r, opSend, kindChatAWebhook); aborted {
		return
	} else if f != nil {
		body, status := f.VendorCode, f.Status
		if body == "" {
			body = slackWebhookStatusBody[status]
			if body == "" {
				body = "error"
			}
		}
		if status == 0 {
			status = slackWebhookStatus[body]
			if status == 0 {
				status = http.StatusBadRequest
			}
		}
		slackWebhookError(w, status, body)
		return
	}
	text, blocks, code := slackContent(p)
	if code != "" {
		if code == "msg_too_long" {
			code = "invalid_payload"
		}
		slackWebhookError(w, http.StatusBadRequest, code)
		return
	}
	s.record(kindChatAWebhook, []Message{{
		ID: "sim-" + strconv.FormatUint(s.next(), 10), To: r.URL.Path, Text: text,
		Headers: slackMeta(p, blocks),
	}})
	writeText(w, http.StatusOK, "text/html", "ok")
}

// slackMeta keeps blocks and the optional presentation fields.
func slackMeta(p map[string]json.RawMessage, blocks string) map[string]string {
	h := map[string]string{}
	if blocks != "" {
		h["blocks"] = blocks
	}
	for _, k := range []string{"username", "icon_emoji", "icon_url", "channel", "thread_ts"} {
		var v string
		if raw, ok := p[k]; ok && json.Unmarshal(raw, &v) == nil && v != "" {
			h[k] = v
		}
	}
	return h
}

// ---- Slack Web API chat.postMessage ---------------------------------------

func slackAPIError(w http.ResponseWriter, status int, code string) {
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, map[string]any{"ok": false, "error": code})
}

// slackChannelID resolves a channel name to a stable id; ids pass through.
func slackChannelID(ch string) string {
	if len(ch) >= 9 && strings.ContainsRune("CGD", rune(ch[0])) && strings.Trim(ch[1:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == "" {
		return ch
	}
	h := fnv.New64a()
	h.Write([]byte(strings.TrimPrefix(ch, "#")))
	return fmt.Sprintf("C%010X", h.Sum64()&0xFFFFFFFFFF)
}

// slackTS makes a Slack timestamp: the current second and a six-digit
// counter, unique unless a million ids are drawn within one second.
func (s slackAPI) slackTS() string {
	return fmt.Sprintf("%d.%06d", s.now().Unix(), s.next()%1_000_000)
}

// slackAPIPayload reads a Web API call's arguments from a JSON or form
// body of type ct, with its bearer token; code is the Slack error otherwise.
func slackAPIPayload(r *http.Request, ct string) (p map[string]json.RawMessage, token string, hasToken bool, code string) {
	token, hasToken = authToken(r, "Bearer")
	switch ct {
	case "application/json":
		b, err := readBody(r)
		if err != nil || json.Unmarshal(b, &p) != nil || p == nil {
			return nil, "", false, "invalid_json"
		}
	case "application/x-www-form-urlencoded", "multipart/form-data":
		form, err := parseForm(r)
		if err != nil {
			return nil, "", false, "invalid_form_data"
		}
		p = formPayload(form)
		if !hasToken {
			// Form posts may carry the token as a field; JSON posts may not.
			token, hasToken = form.Get("token"), form.Get("token") != ""
		}
	default:
		return nil, "", false, "invalid_form_data"
	}
	return p, token, hasToken, ""
}

// slackAPIFault answers an injected fault as the Web API does: ok false
// under HTTP 200 unless the fault names a status, 429 for rate limits.
func slackAPIFault(w http.ResponseWriter, f *fault) {
	code, status := f.VendorCode, f.Status
	if code == "" {
		switch {
		case status == 429:
			code = "ratelimited"
		case status == 401 || status == 403:
			code = "invalid_auth"
		case status >= 500:
			code = "internal_error"
		default:
			code = "invalid_arguments"
		}
	}
	if status == 0 {
		status = http.StatusOK
		if code == "ratelimited" {
			status = http.StatusTooManyRequests
		}
	}
	slackAPIError(w, status, code)
}

// slackPostMessage serves POST /api/chat.postMessage with a bot token.
func (s slackAPI) slackPostMessage(w http.ResponseWriter, r *http.Request) {
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	p, token, hasHeader, code := slackAPIPayload(r, ct)
	if code != "" {
		slackAPIError(w, http.StatusOK, code)
		return
	}
	switch {
	case !hasHeader:
		slackAPIError(w, http.StatusOK, "not_authed")
		return
	case !strings.HasPrefix(token, "xoxb-") || len(token) < 10:
		slackAPIError(w, http.StatusOK, "invalid_auth")
		return
	}
	if f, aborted := s.takeFault(r, opSend, kindChatABot); aborted {
		return
	} else if f != nil {
		slackAPIFault(w, f)
		return
	}
	var channel string
	if raw, ok := p["channel"]; ok {
		_ = json.Unmarshal(raw, &channel)
	}
	if strings.TrimSpace(channel) == "" {
		slackAPIError(w, http.StatusOK, "channel_not_found")
		return
	}
	text, blocks, code := slackContent(p)
	if code != "" {
		slackAPIError(w, http.StatusOK, code)
		return
	}
	id, ts := slackChannelID(channel), s.slackTS()
	h := slackMeta(p, blocks)
	h["channel_id"] = id
	s.record(kindChatABot, []Message{{ID: id + ":" + ts, To: channel, Text: text, Headers: h}})
	msg := map[string]any{"type": "message", "subtype": "bot_message", "text": text, "ts": ts,
		"user": "U0SIMBOT01", "bot_id": "B0SIMBOT01", "app_id": "A0SIMAPP01", "team": "T0SIMTEAM1"}
	if blocks != "" {
		msg["blocks"] = json.RawMessage(blocks)
	}
	out := map[string]any{"ok": true, "channel": id, "ts": ts, "message": msg}
	if ct == "application/json" && params["charset"] == "" {
		// Slack warns, without failing, when a JSON post names no charset.
		out["warning"] = "missing_charset"
		out["response_metadata"] = map[string]any{"warnings": []string{"missing_charset"}}
	}
	writeJSON(w, http.StatusOK, out)
}

// formPayload turns form fields into the JSON shape; blocks and
// attachments are JSON strings in a form post.
func formPayload(form url.Values) map[string]json.RawMessage {
	p := map[string]json.RawMessage{}
	for k := range form {
		v := form.Get(k)
		if (k == "blocks" || k == "attachments") && json.Valid([]byte(v)) {
			p[k] = json.RawMessage(v)
			continue
		}
		b, _ := json.Marshal(v)
		p[k] = b
	}
	return p
}

// ---- Discord ----------------------------------------------------------------

// discordStatus maps a Discord JSON error code to its HTTP status.
var discordStatus = map[int]int{
	0: 401, 10003: 404, 10015: 404, 50027: 401, 50001: 403, 50013: 403,
	50006: 400, 50035: 400, 50109: 400, 40005: 413,
}

var discordMessages = map[int]string{
	0: "401: Unauthorized", 10003: "Unknown Channel", 10015: "Unknown Webhook", 50027: "Invalid Webhook Token",
	50001: "Missing Access", 50013: "Missing Permissions", 50006: "Cannot send an empty message",
	50035: "Invalid Form Body", 50109: "The request body contains invalid JSON.", 40005: "Request entity too large",
}

// discordAPIPrefix strips "/api" and an optional "/v<N>" version.
func discordAPIPrefix(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/api")
	if !ok {
		return "", false
	}
	if v, ok := strings.CutPrefix(rest, "/v"); ok {
		i := strings.IndexByte(v, '/')
		if i <= 0 || !isDigits(v[:i]) {
			return "", false
		}
		rest = v[i:]
	}
	return rest, true
}

// discordWebhookPath matches /api[/vN]/webhooks/{id}/{token}.
func discordWebhookPath(p string) (id, token string, ok bool) {
	rest, ok := discordAPIPrefix(p)
	if !ok {
		return "", "", false
	}
	rest, ok = strings.CutPrefix(rest, "/webhooks/")
	if !ok {
		return "", "", false
	}
	id, token, ok = strings.Cut(rest, "/")
	return id, token, ok && id != "" && token != "" && !strings.Contains(token, "/")
}

// discordChannelPath matches /api[/vN]/channels/{id}/messages.
func discordChannelPath(p string) (string, bool) {
	rest, ok := discordAPIPrefix(p)
	if !ok {
		return "", false
	}
	rest, ok = strings.CutPrefix(rest, "/channels/")
	if !ok {
		return "", false
	}
	ch, ok := strings.CutSuffix(rest, "/messages")
	return ch, ok && ch != "" && !strings.Contains(ch, "/")
}

func isSnowflake(s string) bool { return len(s) <= 20 && isDigits(s) }

// discordHeaders sets the bucket headers Discord sends on every answer.
func (s discordAPI) discordHeaders(w http.ResponseWriter, remaining int) {
	h := w.Header()
	h.Set("X-RateLimit-Limit", "5")
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatFloat(float64(s.now().Add(time.Second).UnixMilli())/1000, 'f', 3, 64))
	h.Set("X-RateLimit-Reset-After", "1.000")
	h.Set("X-RateLimit-Bucket", "simulator")
}

func (s discordAPI) discordError(w http.ResponseWriter, status, code int, msg string, errs any) {
	if msg == "" {
		msg = discordMessages[code]
	}
	body := map[string]any{"code": code, "message": msg}
	if errs != nil {
		body["errors"] = errs
	}
	s.discordHeaders(w, 4)
	writeJSON(w, status, body)
}

// discordFieldError answers 50035 for one field, in Discord's nested form.
func (s discordAPI) discordFieldError(w http.ResponseWriter, field, code, msg string) {
	s.discordError(w, http.StatusBadRequest, 50035, "", map[string]any{
		field: map[string]any{"_errors": []map[string]string{{"code": code, "message": msg}}},
	})
}

func (s discordAPI) discordRateLimited(w http.ResponseWriter, msg string) {
	if msg == "" {
		msg = "You are being rate limited."
	}
	s.discordHeaders(w, 0)
	w.Header().Set("Retry-After", "1")
	w.Header().Set("X-RateLimit-Scope", "user")
	writeJSON(w, http.StatusTooManyRequests, map[string]any{"message": msg, "retry_after": 1.0, "global": false})
}

// discordFault answers a fault; webhook picks the webhook flavour of the
// codes a bare 401 or 404 stands for.
func (s discordAPI) discordFault(w http.ResponseWriter, f *fault, webhook bool) {
	status := f.Status
	code := -1
	if f.VendorCode != "" {
		code, _ = strconv.Atoi(f.VendorCode)
	}
	if status == http.StatusTooManyRequests {
		s.discordRateLimited(w, f.Message)
		return
	}
	if code == -1 {
		switch {
		case status == 401 && webhook:
			code = 50027
		case status == 401:
			code = 0
		case status == 403:
			code = 50013
		case status == 404 && webhook:
			code = 10015
		case status == 404:
			code = 10003
		case status >= 500:
			s.discordError(w, status, 0, fmt.Sprintf("%d: %s", status, http.StatusText(status)), nil)
			return
		default:
			code = 50035
		}
	}
	if status == 0 {
		status = discordStatus[code]
		if status == 0 {
			status = http.StatusBadRequest
		}
	}
	s.discordError(w, status, code, f.Message, nil)
}

type discordBody struct {
	Content     string            `json:"content"`
	Username    string            `json:"username"`
	AvatarURL   string            `json:"avatar_url"`
	TTS         bool              `json:"tts"`
	Embeds      []json.RawMessage `json:"embeds"`
	Components  []json.RawMessage `json:"components"`
	Attachments []json.RawMessage `json:"attachments"`
	StickerIDs  []string          `json:"sticker_ids"`
	Poll        json.RawMessage   `json:"poll"`
}

// discordRead decodes a JSON body, or the payload_json part of a multipart
// post, and validates content; it answers the error itself.
func (s discordAPI) discordRead(w http.ResponseWriter, r *http.Request) (*discordBody, bool) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var raw []byte
	switch ct {
	case "multipart/form-data":
		form, err := parseForm(r)
		if err != nil {
			s.discordError(w, http.StatusBadRequest, 50035, "", nil)
			return nil, false
		}
		raw = []byte(form.Get("payload_json"))
	default:
		b, err := readBody(r)
		if err != nil {
			s.discordError(w, http.StatusRequestEntityTooLarge, 40005, "", nil)
			return nil, false
		}
		raw = b
	}
	var b discordBody
	if err := json.Unmarshal(raw, &b); err != nil {
		s.discordError(w, http.StatusBadRequest, 50109, "", nil)
		return nil, false
	}
	return &b, true
}

// discordValidate checks the content rules shared by webhook and bot posts.
func (s discordAPI) discordValidate(w http.ResponseWriter, b *discordBody) bool {
	switch {
	case utf8.RuneCountInString(b.Content) > 2000:
		s.discordFieldError(w, "content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
		return false
	case len(b.Embeds) > 10:
		s.discordFieldError(w, "embeds", "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")
		return false
	case strings.TrimSpace(b.Content) == "" && len(b.Embeds) == 0 && len(b.Components) == 0 &&
		len(b.Attachments) == 0 && len(b.StickerIDs) == 0 && len(b.Poll) == 0:
		s.discordError(w, http.StatusBadRequest, 50006, "", nil)
		return false
	}
	return true
}

// nextSnowflake returns a unique, increasing Discord id built from the
// current time like the real ones.
func (s discordAPI) nextSnowflake() string {
	const discordEpoch = 1420070400000
	for {
		last := s.snowflake.Load()
		id := uint64(s.now().UnixMilli()-discordEpoch) << 22
		if id <= last {
			id = last + 1
		}
		if s.snowflake.CompareAndSwap(last, id) {
			return strconv.FormatUint(id, 10)
		}
	}
}

func (s discordAPI) discordMessage(id, channel string, b *discordBody, author map[string]any, webhookID string) map[string]any {
	embeds := b.Embeds
	if embeds == nil {
		embeds = []json.RawMessage{}
	}
	m := map[string]any{
		"id": id, "type": 0, "content": b.Content, "channel_id": channel, "author": author,
		"attachments": []any{}, "embeds": embeds, "mentions": []any{}, "mention_roles": []any{},
		"pinned": false, "mention_everyone": false, "tts": b.TTS,
		"timestamp": s.now().UTC().Format("2006-01-02T15:04:05.000000-07:00"), "edited_timestamp": nil,
		"flags": 0, "components": []any{},
	}
	if webhookID != "" {
		m["webhook_id"] = webhookID
	}
	return m
}

func discordMeta(b *discordBody) map[string]string {
	h := map[string]string{}
	if b.Username != "" {
		h["username"] = b.Username
	}
	if b.AvatarURL != "" {
		h["avatar_url"] = b.AvatarURL
	}
	if len(b.Embeds) > 0 {
		e, _ := json.Marshal(b.Embeds)
		h["embeds"] = string(e)
	}
	return h
}

// discordWebhook serves POST /api/webhooks/{id}/{token}[?wait=true]: 200 with
// the message when wait is true, else 204.
func (s discordAPI) discordWebhook(w http.ResponseWriter, r *http.Request) {
	whID, _, _ := discordWebhookPath(r.URL.Path)
	if !isSnowflake(whID) {
		s.discordFieldError(w, "webhook_id", "NUMBER_TYPE_COERCE", fmt.Sprintf("Value %q is not snowflake.", whID))
		return
	}
	wait := false
	if v := r.URL.Query().Get("wait"); v != "" {
		var err error
		if wait, err = strconv.ParseBool(v); err != nil {
			s.discordFieldError(w, "wait", "BOOLEAN_TYPE_COERCE", fmt.Sprintf("Value %q is not a valid boolean.", v))
			return
		}
	}
	b, ok := s.discordRead(w, r)
	if !ok {
		return
	}
	if f, aborted := s.takeFault(r, opSend, kindChatBWebhook); aborted {
		return
	} else if f != nil {
		s.discordFault(w, f, true)
		return
	}
	if !s.discordValidate(w, b) {
		return
	}
	id := s.nextSnowflake()
	s.record(kindChatBWebhook, []Message{{ID: id, To: r.URL.Path, Text: b.Content, Headers: discordMeta(b)}})
	s.discordHeaders(w, 4)
	if !wait {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	name := b.Username
	if name == "" {
		name = "Simulator Webhook"
	}
	h := fnv.New64a()
	h.Write([]byte(whID))
	channel := strconv.FormatUint(h.Sum64()>>2, 10)
	author := map[string]any{"bot": true, "id": whID, "username": name, "avatar": nil, "discriminator": "0000"}
	writeJSON(w, http.StatusOK, s.discordMessage(id, channel, b, author, whID))
}

// discordBot serves POST /api/v10/channels/{channel}/messages with
// "Authorization: Bot <token>".
func (s discordAPI) discordBot(w http.ResponseWriter, r *http.Request) {
	if _, ok := authToken(r, "Bot"); !ok {
		s.discordError(w, http.StatusUnauthorized, 0, "", nil)
		return
	}
	channel, _ := discordChannelPath(r.URL.Path)
	if !isSnowflake(channel) {
		s.discordFieldError(w, "channel_id", "NUMBER_TYPE_COERCE", fmt.Sprintf("Value %q is not snowflake.", channel))
		return
	}
	b, ok := s.discordRead(w, r)
	if !ok {
		return
	}
	if f, aborted := s.takeFault(r, opSend, kindChatBBot); aborted {
		return
	} else if f != nil {
		s.discordFault(w, f, false)
		return
	}
	if !s.discordValidate(w, b) {
		return
	}
	id := s.nextSnowflake()
	s.record(kindChatBBot, []Message{{ID: id, To: channel, Text: b.Content, Headers: discordMeta(b)}})
	s.discordHeaders(w, 4)
	author := map[string]any{"bot": true, "id": "1000000000000000001", "username": "Simulator Bot", "avatar": nil, "discriminator": "0000", "global_name": nil}
	writeJSON(w, http.StatusOK, s.discordMessage(id, channel, b, author, ""))
}
