package api

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/notifyd/notifyd/internal/newsletter"
	"github.com/notifyd/notifyd/internal/notify"
)

// subscriberRoutes are the routes of newsletter subscribers and the unsubscribe flow.
// The unsubscribe pages are public and mounted by PublicHandlers.
func (a newsletterAPI) subscriberRoutes() []Route {
	all, op, admin := notify.RolesAll, notify.RolesOperator, notify.RolesAdmin
	return []Route{
		{Method: "GET", Path: "/v1/newsletter/subscribers", auth: authDashboard, Roles: all, h: a.handleSubscriberList},
		{Method: "POST", Path: "/v1/newsletter/subscribers", auth: authDashboard, Roles: op, h: a.handleSubscriberCreate},
		{Method: "POST", Path: "/v1/newsletter/subscribers/import", auth: authDashboard, Roles: op, h: a.handleSubscriberImport},
		{Method: "GET", Path: "/v1/newsletter/subscribers/{id}", auth: authDashboard, Roles: all, h: a.handleSubscriberGet},
		{Method: "PATCH", Path: "/v1/newsletter/subscribers/{id}", auth: authDashboard, Roles: op, h: a.handleSubscriberUpdate},
		{Method: "DELETE", Path: "/v1/newsletter/subscribers/{id}", auth: authDashboard, Roles: admin, h: a.handleSubscriberDelete},
	}
}

// subscriberJSON is a subscriber as the API shows it: never its
// unsubscribe token.
type subscriberJSON struct {
	ID             string            `json:"id"`
	Channel        notify.Channel    `json:"channel"`
	Address        string            `json:"address"`
	Name           string            `json:"name"`
	ConsentStatus  string            `json:"consentStatus"`
	ConsentSource  string            `json:"consentSource"`
	Attributes     map[string]string `json:"attributes"`
	ConsentedAt    *string           `json:"consentedAt"`
	UnsubscribedAt *string           `json:"unsubscribedAt"`
	CreatedAt      string            `json:"createdAt"`
	UpdatedAt      string            `json:"updatedAt"`
}

func subscriberBody(s *notify.Subscriber) subscriberJSON {
	attrs := s.Attributes
	if attrs == nil {
		attrs = map[string]string{}
	}
	return subscriberJSON{ID: s.ID, Channel: s.Channel, Address: s.Address, Name: s.Name, ConsentStatus: s.ConsentStatus,
		ConsentSource: s.ConsentSource, Attributes: attrs, ConsentedAt: TimestampPtr(s.ConsentedAt),
		UnsubscribedAt: TimestampPtr(s.UnsubscribedAt), CreatedAt: Timestamp(s.CreatedAt), UpdatedAt: Timestamp(s.UpdatedAt)}
}

// attributesIn maps a present attributes field; null is an empty map.
func attributesIn(o Optional[map[string]string]) map[string]string {
	if !o.Set {
		return nil
	}
	if o.Null || o.Value == nil {
		return map[string]string{}
	}
	return o.Value
}

// decodeSubscriber decodes strictly, naming a non-string attribute value
// as such (the decoder reports the map's element type).
func decodeSubscriber(body []byte, v any) error {
	err := decodeJSON(body, v)
	if e, ok := notify.AsError(err); ok && e.Detail == "attributes must be a string" {
		return notify.Invalid("attributes values must be strings")
	}
	return err
}

func (a newsletterAPI) handleSubscriberCreate(c *call) error {
	var in struct {
		Channel       Optional[string]            `json:"channel"`
		Address       Optional[string]            `json:"address"`
		Name          Optional[string]            `json:"name"`
		ConsentStatus Optional[string]            `json:"consentStatus"`
		ConsentSource Optional[string]            `json:"consentSource"`
		Attributes    Optional[map[string]string] `json:"attributes"`
		Confirmed     *bool                       `json:"confirmed"` // double opt-in (confirm.go)
	}
	if err := decodeSubscriber(c.body, &in); err != nil {
		return err
	}
	input := newsletter.SubscriberInput{Confirmed: in.Confirmed != nil && *in.Confirmed}
	var err error
	if input.Channel, err = required("channel", in.Channel); err != nil {
		return err
	}
	if input.Address, err = required("address", in.Address); err != nil {
		return err
	}
	if input.ConsentStatus, err = required("consentStatus", in.ConsentStatus); err != nil {
		return err
	}
	input.Name, input.ConsentSource, input.Attributes = clearable(in.Name), clearable(in.ConsentSource), attributesIn(in.Attributes)
	s, err := a.room.CreateSubscriber(c.ctx, c.actor, input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, map[string]any{"subscriber": subscriberBody(s)})
}

func (a newsletterAPI) handleSubscriberList(c *call) error {
	q := c.r.URL.Query()
	f := notify.SubscriberFilter{Channel: notify.Channel(q.Get("channel")), ConsentStatus: q.Get("consentStatus"), Search: q.Get("search")}
	var err error
	if f.Limit, err = intParam(q.Get("limit"), "limit"); err != nil {
		return err
	}
	if v := q.Get("offset"); v != "" {
		if f.Offset, err = strconv.Atoi(v); err != nil {
			return notify.Invalid("offset must be an integer")
		}
	}
	subs, total, f, err := a.room.ListSubscribers(c.ctx, c.actor, f)
	if err != nil {
		return err
	}
	out := make([]subscriberJSON, len(subs))
	for i, s := range subs {
		out[i] = subscriberBody(s)
	}
	return c.ok(http.StatusOK, map[string]any{"subscribers": out, "total": total, "limit": f.Limit, "offset": f.Offset})
}

func (a newsletterAPI) handleSubscriberGet(c *call) error {
	s, err := a.room.GetSubscriber(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"subscriber": subscriberBody(s)})
}

func (a newsletterAPI) handleSubscriberUpdate(c *call) error {
	var in struct {
		Channel       json.RawMessage             `json:"channel"`
		Address       json.RawMessage             `json:"address"`
		Name          Optional[string]            `json:"name"`
		ConsentStatus Optional[string]            `json:"consentStatus"`
		ConsentSource Optional[string]            `json:"consentSource"`
		Attributes    Optional[map[string]string] `json:"attributes"`
	}
	if err := decodeSubscriber(c.body, &in); err != nil {
		return err
	}
	if in.Channel != nil || in.Address != nil {
		return notify.Invalid("channel and address cannot be changed")
	}
	var input newsletter.SubscriberInput
	var err error
	if input.ConsentStatus, err = required("consentStatus", in.ConsentStatus); err != nil {
		return err
	}
	input.Name, input.ConsentSource, input.Attributes = clearable(in.Name), clearable(in.ConsentSource), attributesIn(in.Attributes)
	s, err := a.room.UpdateSubscriber(c.ctx, c.actor, c.r.PathValue("id"), input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"subscriber": subscriberBody(s)})
}

func (a newsletterAPI) handleSubscriberDelete(c *call) error {
	if err := a.room.DeleteSubscriber(c.ctx, c.actor, c.r.PathValue("id")); err != nil {
		return err
	}
	return c.noContent()
}

// importItemIn is one item of an import, decoded on its own so that a
// malformed item is skipped instead of failing the whole import.
type importItemIn struct {
	Channel    Optional[string]            `json:"channel"`
	Address    Optional[string]            `json:"address"`
	Name       Optional[string]            `json:"name"`
	Attributes Optional[map[string]string] `json:"attributes"`
	Confirmed  *bool                       `json:"confirmed"` // double opt-in (confirm.go)
}

func (a newsletterAPI) handleSubscriberImport(c *call) error {
	var in struct {
		Subscribers   Optional[[]json.RawMessage] `json:"subscribers"`
		ConsentStatus Optional[string]            `json:"consentStatus"`
		ConsentSource Optional[string]            `json:"consentSource"`
		Confirmed     *bool                       `json:"confirmed"` // double opt-in (confirm.go)
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	if !in.Subscribers.Set || in.Subscribers.Null {
		return notify.Invalid("subscribers is required")
	}
	input := newsletter.ImportInput{Items: make([]newsletter.ImportItem, len(in.Subscribers.Value)), ConsentSource: clearable(in.ConsentSource),
		Confirmed: in.Confirmed != nil && *in.Confirmed}
	var err error
	if input.ConsentStatus, err = required("consentStatus", in.ConsentStatus); err != nil {
		return err
	}
	if n := len(in.Subscribers.Value); n == 0 || n > newsletter.MaxSubscriberImport {
		return notify.Invalid("subscribers must hold 1 to %d items", newsletter.MaxSubscriberImport)
	}
	for i, raw := range in.Subscribers.Value {
		var it importItemIn
		item := &input.Items[i]
		// A null field is absent: a missing channel or address skips the item.
		if decodeJSON(raw, &it) != nil {
			item.Invalid = true
			continue
		}
		item.Channel, _ = required("channel", it.Channel)
		item.Address, _ = required("address", it.Address)
		item.Name, _ = required("name", it.Name)
		item.Attributes, item.Confirmed = attributesIn(it.Attributes), it.Confirmed
	}
	res, err := a.room.ImportSubscribers(c.ctx, c.actor, input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, importBody(res))
}
