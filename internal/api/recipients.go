package api

import (
	"encoding/json"
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/recipients"
	"github.com/notifyd/notifyd/internal/usecase"
)

// recipientsAPI serves the recipient profiles (issue 32) on both APIs: a
// signed request needs recipients:read or recipients:write, a dashboard
// one the roles of subscribers (reads for every role, writes for
// operator and up, erasure for admin and up).
type recipientsAPI struct {
	*API
	room *recipients.Service
}

func (a recipientsAPI) routes() []Route {
	all, op, admin := notify.RolesAll, notify.RolesOperator, notify.RolesAdmin
	read, write := notify.ScopeRecipientsRead, notify.ScopeRecipientsWrite
	return []Route{
		{Method: "GET", Path: "/v1/recipients", auth: authEither, Roles: all, Scope: read, h: a.handleList},
		{Method: "POST", Path: "/v1/recipients/bulk", auth: authEither, Roles: op, Scope: write, h: a.handleBulk},
		{Method: "GET", Path: "/v1/recipients/{externalId}", auth: authEither, Roles: all, Scope: read, h: a.handleGet},
		{Method: "PUT", Path: "/v1/recipients/{externalId}", auth: authEither, Roles: op, Scope: write, h: a.handlePut},
		{Method: "PATCH", Path: "/v1/recipients/{externalId}", auth: authEither, Roles: op, Scope: write, h: a.handlePatch},
		{Method: "DELETE", Path: "/v1/recipients/{externalId}", auth: authEither, Roles: admin, Scope: write, h: a.handleDelete},
	}
}

// caller is who acts on a route of both APIs: the member or the key.
func (c *call) caller() usecase.Caller { return usecase.Caller{Actor: c.actor, Key: c.key} }

// recipientJSON is a profile as both APIs show it: an absent text field
// is null, absent lists and maps are empty.
type recipientJSON struct {
	ExternalID  string            `json:"externalId"`
	Name        *string           `json:"name"`
	Phone       *string           `json:"phone"`
	Email       *string           `json:"email"`
	PushTokens  []string          `json:"pushTokens"`
	ChatTargets map[string]string `json:"chatTargets"`
	TimeZone    *string           `json:"timeZone"`
	Locale      *string           `json:"locale"`
	Attributes  map[string]string `json:"attributes"`
	CreatedAt   string            `json:"createdAt"`
	UpdatedAt   string            `json:"updatedAt"`
}

func recipientBody(r *notify.Recipient) recipientJSON {
	out := recipientJSON{ExternalID: r.ExternalID, Name: strOrNil(r.Name), Phone: strOrNil(r.Phone), Email: strOrNil(r.Email),
		PushTokens: r.PushTokens, ChatTargets: make(map[string]string, len(r.ChatTargets)), TimeZone: strOrNil(r.TimeZone),
		Locale: strOrNil(r.Locale), Attributes: r.Attributes, CreatedAt: Timestamp(r.CreatedAt), UpdatedAt: Timestamp(r.UpdatedAt)}
	for ch, v := range r.ChatTargets {
		out.ChatTargets[string(ch)] = v
	}
	if out.PushTokens == nil {
		out.PushTokens = []string{}
	}
	if out.Attributes == nil {
		out.Attributes = map[string]string{}
	}
	return out
}

// recipientFieldsIn are the fields of a put, a patch and a bulk item.
type recipientFieldsIn struct {
	Name        Optional[string]            `json:"name"`
	Phone       Optional[string]            `json:"phone"`
	Email       Optional[string]            `json:"email"`
	PushTokens  Optional[[]string]          `json:"pushTokens"`
	ChatTargets Optional[map[string]string] `json:"chatTargets"`
	TimeZone    Optional[string]            `json:"timeZone"`
	Locale      Optional[string]            `json:"locale"`
	Attributes  Optional[map[string]string] `json:"attributes"`
}

// present maps a present field onto a pointer; null is the empty value.
func present[T any](o Optional[T], empty T) *T {
	switch {
	case !o.Set:
		return nil
	case o.Null:
		return &empty
	}
	return &o.Value
}

func (in recipientFieldsIn) fields() recipients.Fields {
	return recipients.Fields{Name: present(in.Name, ""), Phone: present(in.Phone, ""), Email: present(in.Email, ""),
		PushTokens: present(in.PushTokens, []string{}), ChatTargets: present(in.ChatTargets, map[string]string{}),
		TimeZone: present(in.TimeZone, ""), Locale: present(in.Locale, ""), Attributes: present(in.Attributes, map[string]string{})}
}

// decodeRecipient decodes strictly, naming a wrong element of a list or a
// map as such (the decoder names the element's type at the field).
func decodeRecipient(body []byte, v any) error {
	err := decodeJSON(body, v)
	if e, ok := notify.AsError(err); ok {
		for _, f := range []string{"pushTokens", "chatTargets", "attributes"} {
			if e.Detail == f+" must be a string" {
				noun := "values"
				if f == "pushTokens" {
					noun = "items"
				}
				return notify.Invalid("%s %s must be strings", f, noun)
			}
		}
	}
	return err
}

func (a recipientsAPI) handlePut(c *call) error {
	var in recipientFieldsIn
	if err := decodeRecipient(c.body, &in); err != nil {
		return err
	}
	r, created, err := a.room.Put(c.ctx, c.caller(), c.r.PathValue("externalId"), in.fields())
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.ok(status, map[string]any{"recipient": recipientBody(r)})
}

func (a recipientsAPI) handlePatch(c *call) error {
	var in recipientFieldsIn
	if err := decodeRecipient(c.body, &in); err != nil {
		return err
	}
	r, err := a.room.Patch(c.ctx, c.caller(), c.r.PathValue("externalId"), in.fields())
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"recipient": recipientBody(r)})
}

func (a recipientsAPI) handleGet(c *call) error {
	r, err := a.room.Get(c.ctx, c.caller(), c.r.PathValue("externalId"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"recipient": recipientBody(r)})
}

func (a recipientsAPI) handleDelete(c *call) error {
	if err := a.room.Delete(c.ctx, c.caller(), c.r.PathValue("externalId")); err != nil {
		return err
	}
	return c.noContent()
}

func (a recipientsAPI) handleList(c *call) error {
	q := c.r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit")
	if err != nil {
		return err
	}
	p, err := a.room.List(c.ctx, c.caller(), recipients.Query{Search: q.Get("q"), Limit: limit, Cursor: q.Get("cursor")})
	if err != nil {
		return err
	}
	out := make([]recipientJSON, len(p.Recipients))
	for i, r := range p.Recipients {
		out[i] = recipientBody(r)
	}
	return c.ok(http.StatusOK, map[string]any{"recipients": out, "cursor": encodeCursor(p.Cursor), "hasNext": p.HasNext})
}

// bulkRecipientIn is one item of a bulk upsert.
type bulkRecipientIn struct {
	ExternalID *string `json:"externalId"`
	recipientFieldsIn
}

func (a recipientsAPI) handleBulk(c *call) error {
	var b struct {
		Items *[]json.RawMessage `json:"items"`
	}
	if err := c.decode(&b); err != nil {
		return err
	}
	if b.Items == nil {
		return notify.Invalid("items is required")
	}
	if err := recipients.CheckBulkSize(len(*b.Items)); err != nil {
		return err
	}
	items := make([]recipients.BulkItem, len(*b.Items))
	for i, raw := range *b.Items {
		var in bulkRecipientIn
		if err := decodeRecipient(raw, &in); err != nil {
			e, _ := notify.AsError(err)
			return notify.Invalid("items[%d]: %s", i, e.Detail)
		}
		items[i] = recipients.BulkItem{ExternalID: in.ExternalID, Fields: in.fields()}
	}
	res, err := a.room.BulkPut(c.ctx, c.caller(), items)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"total": res.Total, "created": res.Created, "updated": res.Updated})
}
