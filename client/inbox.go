package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"
)

// MintInboxToken makes a recipient token of the in-app inbox offline, in
// the application's backend, with the workspace's inbox secret (shown by
// POST /v1/inbox-settings/rotate-secret): the same token as POST
// /v1/recipients/{externalId}/inbox-token answers. The token names one
// recipient profile (its external id) of the workspace and expires at
// exp, at most 24 hours ahead; it stops working once the secret rotates.
func MintInboxToken(secret, workspaceID, externalID string, exp time.Time) string {
	// The server's field order, so the token is byte for byte the one the
	// signed call answers (sdk/testdata/vectors.json, inboxTokens).
	payload, _ := json.Marshal(struct {
		WS  string `json:"ws"`
		Sub string `json:"sub"`
		Exp int64  `json:"exp"`
	}{workspaceID, externalID, exp.Unix()})
	head := "v1." + base64.RawURLEncoding.EncodeToString(payload)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(head))
	return head + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}
