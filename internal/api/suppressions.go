package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/bounce"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/suppressions"
)

// suppressionsAPI are the handlers of the suppressions room: the email
// suppression list, callback secrets and bounce/complaint intake.
type suppressionsAPI struct {
	*API
	room *suppressions.Service
}

// routes are the routes of the email suppression list and bounce/complaint intake.
func (a suppressionsAPI) routes() []Route {
	all, op, admin := notify.RolesAll, notify.RolesOperator, notify.RolesAdmin
	return []Route{
		{Method: "GET", Path: "/v1/suppressions", auth: authDashboard, Roles: all, h: a.handleSuppressionList},
		{Method: "POST", Path: "/v1/suppressions", auth: authDashboard, Roles: op, h: a.handleSuppressionCreate},
		{Method: "DELETE", Path: "/v1/suppressions/{address}", auth: authDashboard, Roles: admin, h: a.handleSuppressionDelete},

		{Method: "GET", Path: "/v1/providers/{id}/callback-secret", auth: authDashboard, Roles: all, h: a.handleCallbackSecretGet},
		{Method: "POST", Path: "/v1/providers/{id}/callback-secret/rotate", auth: authDashboard, Roles: op, h: a.handleCallbackSecretRotate},
		{Method: "POST", Path: "/v1/providers/{id}/callback-secret/finalize", auth: authDashboard, Roles: op, h: a.handleCallbackSecretFinalize},

		// Vendor callbacks: no dashboard authentication; the provider
		// account's callback secret (?token= or basic-auth password) and
		// the vendor's own signature authenticate them.
		{Method: "POST", Path: "/v1/callbacks/{providerAccountId}", auth: authPublic, ownBody: true, h: a.handleCallback},
	}
}

func suppressionBody(s *notify.Suppression) map[string]any {
	return map[string]any{"address": s.Address, "reason": s.Reason, "createdAt": Timestamp(s.CreatedAt)}
}

func (a suppressionsAPI) handleSuppressionList(c *call) error {
	q := c.r.URL.Query()
	f := notify.SuppressionFilter{Address: q.Get("address")}
	var err error
	if f.Limit, err = intParam(q.Get("limit"), "limit"); err != nil {
		return err
	}
	if q.Get("limit") != "" && f.Limit == 0 {
		return notify.Invalid("limit must be between 1 and 200")
	}
	if f.Before, err = decodeCursor(q.Get("cursor")); err != nil {
		return err
	}
	page, err := a.room.ListSuppressions(c.ctx, c.actor, f)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(page.Suppressions))
	for i, s := range page.Suppressions {
		out[i] = suppressionBody(s)
	}
	return c.ok(http.StatusOK, map[string]any{"suppressions": out, "cursor": encodeCursor(page.Cursor), "hasNext": page.HasNext})
}

func (a suppressionsAPI) handleSuppressionCreate(c *call) error {
	var in struct {
		Address *string `json:"address"`
		Reason  *string `json:"reason"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	if in.Address == nil {
		return notify.Invalid("address is required")
	}
	if in.Reason == nil {
		return notify.Invalid("reason is required")
	}
	s, err := a.room.AddSuppression(c.ctx, c.actor, *in.Address, *in.Reason)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, map[string]any{"suppression": suppressionBody(s)})
}

func (a suppressionsAPI) handleSuppressionDelete(c *call) error {
	if err := a.room.RemoveSuppression(c.ctx, c.actor, c.r.PathValue("address")); err != nil {
		return err
	}
	return c.noContent()
}

// callbackURL is where the vendor is told to post; the secret travels in
// the query (SNS and Resend), or as the basic-auth password (Postmark).
func (a suppressionsAPI) callbackURL(providerID string) string {
	return a.baseURL + "/v1/callbacks/" + providerID
}

func (a suppressionsAPI) callbackSecretBody(v *suppressions.CallbackSecretView) map[string]any {
	return map[string]any{"providerAccountId": v.ProviderAccountID, "configured": v.Configured,
		"rotationPending": v.RotationPending, "rotatedAt": TimestampPtr(v.RotatedAt), "callbackUrl": a.callbackURL(v.ProviderAccountID)}
}

func (a suppressionsAPI) handleCallbackSecretGet(c *call) error {
	v, err := a.room.GetCallbackSecret(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"callbackSecret": a.callbackSecretBody(v)})
}

func (a suppressionsAPI) handleCallbackSecretRotate(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	res, err := a.room.RotateCallbackSecret(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"callbackSecret": a.callbackSecretBody(&res.CallbackSecretView), "secret": res.Secret,
		"callbackUrlWithSecret": a.callbackURL(res.ProviderAccountID) + "?token=" + res.Secret})
}

func (a suppressionsAPI) handleCallbackSecretFinalize(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	v, err := a.room.FinalizeCallbackSecret(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"callbackSecret": a.callbackSecretBody(v)})
}

func (a suppressionsAPI) handleCallback(c *call) error {
	token := c.r.URL.Query().Get("token")
	if token == "" {
		if _, pw, ok := c.r.BasicAuth(); ok {
			token = pw
		}
	}
	h := c.r.Header
	// The body is read once the callback secret is proven.
	readBody := func() ([]byte, error) {
		err := c.readBody(maxDashboardBody)
		return c.body, err
	}
	res, err := a.room.ReceiveCallback(c.ctx, suppressions.CallbackInput{ProviderAccountID: c.r.PathValue("providerAccountId"), Token: token,
		ReadBody: readBody, Svix: bounce.SvixHeaders{ID: h.Get("svix-id"), Timestamp: h.Get("svix-timestamp"), Signature: h.Get("svix-signature")}})
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"events": res.Events, "suppressed": res.Suppressed, "confirmed": res.Confirmed})
}

// feedbackBody renders the bounces and complaints of an attempt.
func feedbackBody(fs []*notify.DeliveryFeedback) []map[string]any {
	out := make([]map[string]any, len(fs))
	for i, f := range fs {
		out[i] = map[string]any{"type": f.Type, "bounceType": strOrNil(f.BounceType), "recipient": f.RecipientAddress,
			"detail": strOrNil(f.Detail), "suppressed": f.Suppressed, "occurredAt": Timestamp(f.OccurredAt), "receivedAt": Timestamp(f.ReceivedAt)}
	}
	return out
}
