package simulator

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const (
	fcmGrantType  = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	fcmScope      = "https://www.googleapis.com/auth/firebase.messaging"
	fcmCloudScope = "https://www.googleapis.com/auth/cloud-platform"
	// fcmTokenPrefix marks access tokens of this simulator ("ya29." like Google's).
	fcmTokenPrefix = "ya29.sim."
	fcmTokenLife   = 3600 * time.Second
	// fcmClockSkew is how far iat may lie in the future.
	fcmClockSkew = 5 * time.Minute
)

// oauthError answers in the OAuth 2.0 token endpoint format (RFC 6749 5.2).
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// fcmToken serves POST /token, the service account's token_uri: the JWT
// bearer grant. The RS256 signature is not verified (the simulator has no
// public key); shape and claims are.
func (s fcmAPI) fcmToken(w http.ResponseWriter, r *http.Request) {
	form, err := parseForm(r)
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "body must be application/x-www-form-urlencoded: "+err.Error())
		return
	}
	if gt := form.Get("grant_type"); gt != fcmGrantType {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type: "+gt)
		return
	}
	if f, aborted := s.takeFault(r, opToken, kindPush); aborted {
		return
	} else if f != nil {
		status, code := f.Status, f.VendorCode
		if status == 0 {
			status = http.StatusBadRequest
		}
		if code == "" {
			code = map[int]string{400: "invalid_grant", 401: "invalid_client", 403: "access_denied", 429: "rate_limit_exceeded"}[status]
			if code == "" {
				code = "internal_failure"
			}
		}
		msg := f.Message
		if msg == "" {
			msg = "simulated fault"
		}
		oauthError(w, status, code, msg)
		return
	}
	if msg := s.checkAssertion(r, form.Get("assertion")); msg != "" {
		oauthError(w, http.StatusBadRequest, "invalid_grant", msg)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": s.signedToken(fcmTokenPrefix, s.now().Add(fcmTokenLife)),
		"expires_in":   3599, "token_type": "Bearer",
	})
}

// checkAssertion validates a JWT's shape and claims; "" means valid.
func (s fcmAPI) checkAssertion(r *http.Request, jwt string) string {
	if jwt == "" {
		return "Missing required parameter: assertion"
	}
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 || parts[2] == "" {
		return "Invalid JWT: must have three base64url parts"
	}
	// RFC 7515: base64url without padding.
	dec := base64.RawURLEncoding.Strict().DecodeString
	var header struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
		Kid string `json:"kid"`
	}
	hb, err := dec(parts[0])
	if err != nil || json.Unmarshal(hb, &header) != nil {
		return "Invalid JWT: header is not base64url JSON"
	}
	if header.Alg != "RS256" {
		return "Invalid JWT: alg must be RS256, got " + header.Alg
	}
	if _, err := dec(parts[2]); err != nil {
		return "Invalid JWT Signature."
	}
	var claims struct {
		Iss   string   `json:"iss"`
		Scope string   `json:"scope"`
		Aud   string   `json:"aud"`
		Iat   *float64 `json:"iat"`
		Exp   *float64 `json:"exp"`
	}
	pb, err := dec(parts[1])
	if err != nil || json.Unmarshal(pb, &claims) != nil {
		return "Invalid JWT: payload is not base64url JSON"
	}
	switch {
	case claims.Iss == "":
		return "Invalid JWT: iss is missing"
	case claims.Iat == nil || claims.Exp == nil:
		return "Invalid JWT: iat and exp are required"
	}
	scopeOK := false
	for _, sc := range strings.Fields(claims.Scope) {
		scopeOK = scopeOK || sc == fcmScope || sc == fcmCloudScope
	}
	if !scopeOK {
		return "Invalid JWT: scope must include " + fcmScope
	}
	// aud is the token_uri the client was given; base_url rewrites its host,
	// so only the path must be this endpoint's.
	if u, err := url.Parse(claims.Aud); err != nil || u.Scheme == "" || u.Path != r.URL.Path {
		return "Invalid JWT: aud must be the token URI, got " + claims.Aud
	}
	now := float64(s.now().Unix())
	iat, exp := *claims.Iat, *claims.Exp
	switch {
	case iat > now+fcmClockSkew.Seconds():
		return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
	case exp <= iat || exp-iat > 3600:
		return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
	case exp <= now:
		return "Invalid JWT: Token has expired."
	}
	return ""
}

// fcmError answers the Google RPC error envelope, with an FcmError detail
// when fcmCode is set.
func fcmError(w http.ResponseWriter, status int, rpcStatus, fcmCode, msg string) {
	e := map[string]any{"code": status, "message": msg, "status": rpcStatus}
	if fcmCode != "" {
		details := []map[string]any{{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": fcmCode}}
		if fcmCode == "QUOTA_EXCEEDED" {
			details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
				"violations": []map[string]string{{"subject": "device", "description": "Device message rate exceeded."}}})
		}
		e["details"] = details
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, map[string]any{"error": e})
}

// fcmCodes maps an FCM error code to its HTTP status and RPC status.
var fcmCodes = map[string]struct {
	status int
	rpc    string
}{
	"INVALID_ARGUMENT":       {400, "INVALID_ARGUMENT"},
	"UNREGISTERED":           {404, "NOT_FOUND"},
	"SENDER_ID_MISMATCH":     {403, "PERMISSION_DENIED"},
	"QUOTA_EXCEEDED":         {429, "RESOURCE_EXHAUSTED"},
	"UNAVAILABLE":            {503, "UNAVAILABLE"},
	"INTERNAL":               {500, "INTERNAL"},
	"THIRD_PARTY_AUTH_ERROR": {401, "UNAUTHENTICATED"},
	"UNAUTHENTICATED":        {401, "UNAUTHENTICATED"},
}

// fcmStatusCodes picks the FCM code a bare HTTP status stands for.
var fcmStatusCodes = map[int]string{
	400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "SENDER_ID_MISMATCH", 404: "UNREGISTERED",
	429: "QUOTA_EXCEEDED", 500: "INTERNAL", 503: "UNAVAILABLE",
}

func fcmFault(w http.ResponseWriter, f *fault) {
	code := f.VendorCode
	if code == "" {
		code = fcmStatusCodes[f.Status]
	}
	c, known := fcmCodes[code]
	status, rpc := f.Status, c.rpc
	if status == 0 {
		status = c.status
	}
	if !known {
		if status == 0 {
			status = http.StatusBadRequest
		}
		rpc = "UNKNOWN"
	}
	msg := f.Message
	if msg == "" {
		msg = "Simulated fault: " + code
		if code == "UNREGISTERED" {
			msg = "Requested entity was not found."
		}
	}
	detail := code
	if code == "UNAUTHENTICATED" || code == "" {
		// Token errors carry no FcmError detail.
		detail = ""
	}
	fcmError(w, status, rpc, detail, msg)
}

var (
	fcmRequestKeys      = map[string]bool{"validate_only": true, "validateOnly": true, "message": true}
	fcmMessageKeys      = map[string]bool{"name": true, "data": true, "notification": true, "android": true, "webpush": true, "apns": true, "fcm_options": true, "fcmOptions": true, "token": true, "topic": true, "condition": true}
	fcmNotificationKeys = map[string]bool{"title": true, "body": true, "image": true}
)

// unknownKey returns the first key of obj outside allowed, as the proto
// JSON parser of FCM refuses unknown names.
func unknownKey(obj map[string]json.RawMessage, allowed map[string]bool) string {
	for k := range obj {
		if !allowed[k] {
			return k
		}
	}
	return ""
}

// fcmSend serves POST /v1/projects/{project}/messages:send.
func (s fcmAPI) fcmSend(w http.ResponseWriter, r *http.Request) {
	project := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/projects/"), "/messages:send")
	if project == "" || strings.Contains(project, "/") {
		fcmError(w, http.StatusNotFound, "NOT_FOUND", "", "Requested entity was not found.")
		return
	}
	tok, ok := authToken(r, "Bearer")
	if ok {
		_, ok = s.checkToken(fcmTokenPrefix, tok)
	}
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/"`)
		fcmError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "",
			"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.")
		return
	}
	body, err := readBody(r)
	if err != nil {
		fcmError(w, http.StatusRequestEntityTooLarge, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Request payload size exceeds the limit.")
		return
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "", "Invalid JSON payload received. "+err.Error())
		return
	}
	if k := unknownKey(req, fcmRequestKeys); k != "" {
		fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "", fmt.Sprintf("Invalid JSON payload received. Unknown name %q: Cannot find field.", k))
		return
	}
	if f, aborted := s.takeFault(r, opSend, kindPush); aborted {
		return
	} else if f != nil {
		fcmFault(w, f)
		return
	}
	m, msg := parseFCMMessage(req)
	if msg != "" {
		fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_ARGUMENT", msg)
		return
	}
	validateOnly := false
	for _, k := range []string{"validate_only", "validateOnly"} {
		if raw, ok := req[k]; ok && json.Unmarshal(raw, &validateOnly) != nil {
			fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "", "Invalid value at 'validate_only' (TYPE_BOOL)")
			return
		}
	}
	if validateOnly {
		// FCM's dry run answers a fixed fake id and sends nothing.
		writeJSON(w, http.StatusOK, map[string]string{"name": "projects/" + project + "/messages/fake_message_id"})
		return
	}
	id := fmt.Sprintf("0:%d%%%016x", s.now().UnixMicro(), s.instance^s.next())
	m.ID = "projects/" + project + "/messages/" + id
	s.record(kindPush, []Message{m})
	writeJSON(w, http.StatusOK, map[string]string{"name": m.ID})
}

// parseFCMMessage checks the message object and returns what is recorded;
// To is the token, topic or condition, Headers the data map.
func parseFCMMessage(req map[string]json.RawMessage) (Message, string) {
	var m Message
	raw, ok := req["message"]
	if !ok {
		return m, "Missing required field: message"
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &msg); err != nil || msg == nil {
		return m, "Invalid value at 'message' (type.googleapis.com/google.firebase.fcm.v1.Message)"
	}
	if k := unknownKey(msg, fcmMessageKeys); k != "" {
		return m, fmt.Sprintf("Invalid JSON payload received. Unknown name %q at 'message': Cannot find field.", k)
	}
	targets := 0
	for _, k := range []string{"token", "topic", "condition"} {
		v, ok := msg[k]
		if !ok {
			continue
		}
		var t string
		if json.Unmarshal(v, &t) != nil || strings.TrimSpace(t) == "" || strings.ContainsAny(t, " \t\n") && k != "condition" {
			return m, "Invalid value at 'message." + k + "'"
		}
		targets++
		m.To = t
	}
	if targets != 1 {
		return m, "Exactly one of message.token, message.topic or message.condition must be specified."
	}
	size := 0
	if raw, ok := msg["notification"]; ok {
		var n map[string]json.RawMessage
		if json.Unmarshal(raw, &n) != nil {
			return m, "Invalid value at 'message.notification'"
		}
		if k := unknownKey(n, fcmNotificationKeys); k != "" {
			return m, fmt.Sprintf("Invalid JSON payload received. Unknown name %q at 'message.notification': Cannot find field.", k)
		}
		for k, dst := range map[string]*string{"title": &m.Subject, "body": &m.Text} {
			if v, ok := n[k]; ok && json.Unmarshal(v, dst) != nil {
				return m, "Invalid value at 'message.notification." + k + "' (TYPE_STRING)"
			}
		}
		size += len(raw)
	}
	if raw, ok := msg["data"]; ok {
		var d map[string]any
		if json.Unmarshal(raw, &d) != nil {
			return m, "Invalid value at 'message.data'"
		}
		m.Headers = make(map[string]string, len(d))
		for k, v := range d {
			sv, ok := v.(string)
			if !ok {
				return m, fmt.Sprintf("Invalid value at 'message.data[%s].value' (TYPE_STRING)", k)
			}
			m.Headers[k] = sv
		}
		size += len(raw)
	}
	if size > 4096 {
		return m, "Message is too big"
	}
	return m, ""
}
