package web

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/providers"
	"github.com/notifyd/notifyd/internal/sends"
)

// providerPages serve the provider and route pages.
type providerPages struct{ *Console }

// routes mirror the Dashboard API's provider and route routes
// (same roles): register, edit, enable/disable, test-send, and the
// routes' atomic replace.
func (c providerPages) routes() []Route {
	all, op := notify.RolesAll, notify.RolesOperator
	return []Route{
		{Method: "GET", Path: "/providers", Auth: Member, Roles: all, h: c.providersPage},
		{Method: "POST", Path: "/providers", Auth: Member, Roles: op, h: c.createProvider},
		{Method: "GET", Path: "/providers/{id}", Auth: Member, Roles: all, h: c.providerPage},
		{Method: "POST", Path: "/providers/{id}", Auth: Member, Roles: op, h: c.updateProvider},
		{Method: "POST", Path: "/providers/{id}/enable", Auth: Member, Roles: op, h: c.enableProvider(true)},
		{Method: "POST", Path: "/providers/{id}/disable", Auth: Member, Roles: op, h: c.enableProvider(false)},
		{Method: "POST", Path: "/providers/{id}/test-send", Auth: Member, Roles: op, h: c.testSend},
		{Method: "POST", Path: "/routes", Auth: Member, Roles: op, h: c.saveRoutes},
	}
}

// routeRow is one route as the routes form shows it: Index is its place
// in the posted list.
type routeRow struct {
	Index                int
	Channel              notify.Channel
	ProviderID, Name     string
	KindName             string
	Priority             int
	Enabled              bool
	ProviderEnabled      bool
	First, Last, Unknown bool
	Key                  string // "channel/providerId", the form value
}

// channelRoutes are one channel's routes in priority order.
type channelRoutes struct {
	Channel notify.Channel
	Rows    []routeRow
}

type providersData struct {
	Providers []*providers.ProviderView
	Kinds     []providers.ProviderKind
	Channels  []channelRoutes
	// Unrouted are the providers not routed on their channel yet.
	Unrouted []*notify.ProviderAccount
	// Version is the routes' fingerprint: a save from a page showing
	// other routes is refused rather than overwriting them.
	Version string
	// Kind and Name refill the register form after a problem (never the
	// configJson: it is write-only).
	Kind, Name string
}

func (c providerPages) providersData(x *Ctx) (*providersData, error) {
	ps, err := c.rooms.Providers.ListProviders(x.Context(), x.Actor)
	if err != nil {
		return nil, err
	}
	rs, err := c.rooms.Providers.ListRoutes(x.Context(), x.Actor)
	if err != nil {
		return nil, err
	}
	d := &providersData{Providers: ps, Kinds: c.rooms.Providers.ProviderKinds(), Version: routesVersion(rs)}
	byID := map[string]*notify.ProviderAccount{}
	for _, p := range ps {
		byID[p.Account.ID] = p.Account
	}
	routed := map[string]bool{}
	for i, r := range rs {
		if len(d.Channels) == 0 || d.Channels[len(d.Channels)-1].Channel != r.Channel {
			d.Channels = append(d.Channels, channelRoutes{Channel: r.Channel})
		}
		row := routeRow{Index: i, Channel: r.Channel, ProviderID: r.ProviderAccountID, Priority: r.Priority, Enabled: r.Enabled,
			Key: string(r.Channel) + "/" + r.ProviderAccountID}
		if p := byID[r.ProviderAccountID]; p != nil {
			row.Name, row.KindName, row.ProviderEnabled = p.DisplayName, p.ProviderKind, p.Enabled
		} else {
			row.Unknown = true
		}
		routed[row.Key] = true
		cr := &d.Channels[len(d.Channels)-1]
		cr.Rows = append(cr.Rows, row)
	}
	for i := range d.Channels {
		rows := d.Channels[i].Rows
		rows[0].First, rows[len(rows)-1].Last = true, true
	}
	for _, p := range ps {
		if !routed[string(p.Account.Channel)+"/"+p.Account.ID] {
			d.Unrouted = append(d.Unrouted, p.Account)
		}
	}
	return d, nil
}

// routesVersion fingerprints the routes (channel, provider, priority,
// enabled, in order).
func routesVersion(rs []*notify.Route) string {
	h := sha256.New()
	for _, r := range rs {
		fmt.Fprintf(h, "%s/%s/%d/%t\n", r.Channel, r.ProviderAccountID, r.Priority, r.Enabled)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func (c providerPages) providersPage(x *Ctx) error {
	d, err := c.providersData(x)
	if err != nil {
		return err
	}
	return x.Render(http.StatusOK, "providers.html", &Page{Title: "Providers & routes", Data: d})
}

// formConfig reads the configJson textarea: "" is none (keep it, on an
// edit); anything else must be a JSON object of strings.
func formConfig(v string) (map[string]string, bool, error) {
	if strings.TrimSpace(v) == "" {
		return nil, false, nil
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(v), &raw); err != nil || raw == nil {
		return nil, false, notify.Invalid("configJson must be a JSON object of strings")
	}
	cfg, err := providers.ProviderConfig(raw)
	return cfg, err == nil, err
}

func (c providerPages) createProvider(x *Ctx) error {
	f := x.R.PostForm
	name := f.Get("displayName")
	enabled := f.Get("enabled") != ""
	in := providers.ProviderInput{ProviderKind: f.Get("providerKind"), DisplayName: &name, Enabled: &enabled}
	cfg, set, err := formConfig(f.Get("configJson"))
	if err == nil {
		in.ConfigJSON, in.SetConfig = cfg, set
		var p *notify.ProviderAccount
		if p, err = c.rooms.Providers.CreateProvider(x.Context(), x.Actor, in); err == nil {
			return x.Redirect("/providers/"+p.ID, Flash{Kind: "info", Text: "Provider " + p.DisplayName + " registered."})
		}
	}
	// A problem shows the form again (kind and name; the configJson is
	// never written back).
	e := problemOf(c.log, x.R, err)
	if e.Status() >= 500 {
		return err
	}
	d, derr := c.providersData(x)
	if derr != nil {
		return derr
	}
	d.Kind, d.Name = in.ProviderKind, name
	return x.Render(e.Status(), "providers.html", &Page{Title: "Providers & routes", Problem: e, Data: d})
}

// testForm is the test-send form's values (shown again after a problem).
type testForm struct {
	Mode, Address, Name, Title, Text, TemplateCode, Variables string
}

type providerData struct {
	*providers.ProviderView
	// Test is the request of the last test-send (?test=id), shown as its
	// result.
	Test *sends.RequestDetail
	Form testForm
}

func (c providerPages) renderProvider(x *Ctx, status int, problem *notify.Error, d *providerData) error {
	return x.Render(status, "provider.html", &Page{Title: "Provider " + d.Account.DisplayName, Section: "/providers",
		Problem: problem, Data: d})
}

func (c providerPages) providerPage(x *Ctx) error {
	v, err := c.rooms.Providers.GetProvider(x.Context(), x.Actor, x.R.PathValue("id"))
	if err != nil {
		return err
	}
	d := &providerData{ProviderView: v, Form: testForm{Mode: "test"}}
	if id := x.R.URL.Query().Get("test"); id != "" {
		// Only a request of this workspace sent through this provider
		// is shown as its test result.
		if t, err := c.rooms.Sends.GetRequestOf(x.Context(), x.Actor, id); err == nil && len(t.Attempts) > 0 &&
			t.Attempts[0].ProviderAccountID == v.Account.ID {
			d.Test = t
		}
	}
	return c.renderProvider(x, http.StatusOK, nil, d)
}

// updateProvider saves the edit form: name and enabled always, the
// configJson only when a new one is typed (it is never shown).
func (c providerPages) updateProvider(x *Ctx) error {
	id, f := x.R.PathValue("id"), x.R.PostForm
	name, enabled := f.Get("displayName"), f.Get("enabled") != ""
	in := providers.ProviderInput{DisplayName: &name, Enabled: &enabled}
	cfg, set, err := formConfig(f.Get("configJson"))
	if err == nil {
		in.ConfigJSON, in.SetConfig = cfg, set
		var p *notify.ProviderAccount
		if p, err = c.rooms.Providers.UpdateProvider(x.Context(), x.Actor, id, in); err == nil {
			text := "Provider " + p.DisplayName + " saved."
			if set {
				text = "Provider " + p.DisplayName + " saved with its new configuration."
			}
			return x.Redirect("/providers/"+p.ID, Flash{Kind: "info", Text: text})
		}
	}
	return c.providerProblem(x, err, testForm{Mode: "test"})
}

// providerProblem shows the provider's page again with a 4xx problem
// (a 502 test-send failure too); other errors are the error page.
func (c providerPages) providerProblem(x *Ctx, err error, form testForm) error {
	e := problemOf(c.log, x.R, err)
	if e.Status() == http.StatusNotFound || (e.Status() >= 500 && e.Code != notify.CodeProviderFailed) {
		return err
	}
	v, gerr := c.rooms.Providers.GetProvider(x.Context(), x.Actor, x.R.PathValue("id"))
	if gerr != nil {
		return gerr
	}
	return c.renderProvider(x, e.Status(), e, &providerData{ProviderView: v, Form: form})
}

func (c providerPages) enableProvider(on bool) func(x *Ctx) error {
	return func(x *Ctx) error {
		p, err := c.rooms.Providers.UpdateProvider(x.Context(), x.Actor, x.R.PathValue("id"), providers.ProviderInput{Enabled: &on})
		if err != nil {
			return err
		}
		state := "disabled"
		if on {
			state = "enabled"
		}
		back := "/providers"
		if x.R.PostForm.Get("back") == "provider" {
			back += "/" + p.ID
		}
		return x.Redirect(back, Flash{Kind: "info", Text: "Provider " + p.DisplayName + " " + state + "."})
	}
}

// testSend sends once through the provider (SPEC test-send) and shows the
// recorded request as the result; a failure shows the form again with the
// provider's reason.
func (c providerPages) testSend(x *Ctx) error {
	f := x.R.PostForm
	form := testForm{Mode: f.Get("mode"), Address: f.Get("address"), Name: f.Get("name"), Title: f.Get("title"), Text: f.Get("text"),
		TemplateCode: f.Get("templateCode"), Variables: f.Get("variables")}
	in := providers.TestSendInput{Mode: form.Mode, RecipientAddress: form.Address, RecipientName: form.Name, TemplateCode: form.TemplateCode}
	if form.Text != "" {
		in.Text = &form.Text
	}
	if form.Title != "" {
		in.Title = &form.Title
	}
	var err error
	if strings.TrimSpace(form.Variables) != "" {
		if json.Unmarshal([]byte(form.Variables), &in.TemplateVariables) != nil {
			err = notify.Invalid("Template variables must be a JSON object of strings")
		}
	}
	if err == nil {
		var r *notify.Request
		if r, err = c.rooms.Providers.TestSend(x.Context(), x.Actor, x.R.PathValue("id"), in); err == nil {
			return x.Redirect("/providers/"+x.R.PathValue("id")+"?test="+r.ID, Flash{Kind: "info", Text: "Test-send " + string(r.Status) + "."})
		}
	}
	return c.providerProblem(x, err, form)
}

// routeItem is one route of a routes form.
type routeItem struct {
	channel, providerID string
	enabled             bool
}

// saveRoutes applies the button pressed (up, down, remove, add, or save)
// to the routes the form shows and saves them with the service's atomic
// replace (PUT /v1/routes), priorities 1, 2, … per channel in the order
// shown. A form showing other routes than the saved ones is refused.
func (c providerPages) saveRoutes(x *Ctx) error {
	f := x.R.PostForm
	current, err := c.rooms.Providers.ListRoutes(x.Context(), x.Actor)
	if err != nil {
		return err
	}
	if f.Get("version") == "" || f.Get("version") != routesVersion(current) {
		return x.Redirect("/providers#routes", Flash{Kind: "error",
			Text: "The routes changed since this page was loaded; nothing was saved. Here they are now."})
	}
	if len(f["route"]) > 200 {
		return notify.Invalid("routes must hold at most 200 routes")
	}
	on := map[string]bool{}
	for _, k := range f["enabled"] {
		on[k] = true
	}
	var items []routeItem
	for _, k := range f["route"] {
		ch, pid, ok := strings.Cut(k, "/")
		if !ok {
			return notify.Invalid("The routes form is malformed; reload the page")
		}
		items = append(items, routeItem{channel: ch, providerID: pid, enabled: on[k]})
	}
	if items, err = moveRoute(items, f.Get("move"), f.Get("add")); err != nil {
		return err
	}
	in := make([]providers.RouteInput, len(items))
	next := map[string]int{}
	for i, it := range items {
		next[it.channel]++
		enabled := it.enabled
		in[i] = providers.RouteInput{Channel: it.channel, ProviderAccountID: it.providerID, Priority: next[it.channel], Enabled: &enabled}
	}
	if _, err := c.rooms.Providers.ReplaceRoutes(x.Context(), x.Actor, in); err != nil {
		e := problemOf(c.log, x.R, err)
		if e.Status() >= 500 {
			return err
		}
		return x.Redirect("/providers#routes", Flash{Kind: "error", Text: "Routes not saved: " + e.Detail})
	}
	return x.Redirect("/providers#routes", Flash{Kind: "info", Text: "Routes saved."})
}

// moveRoute applies a routes-form button: "up/N" and "down/N" swap route
// N with its neighbour of the same channel, "remove/N" drops it, "add"
// appends the route add ("channel/providerId") last of its channel, ""
// saves as shown.
func moveRoute(items []routeItem, move, add string) ([]routeItem, error) {
	if move == "" {
		return items, nil
	}
	if move == "add" {
		ch, pid, ok := strings.Cut(add, "/")
		if !ok {
			return nil, notify.Invalid("Choose a provider to add")
		}
		return append(items, routeItem{channel: ch, providerID: pid, enabled: true}), nil
	}
	verb, n, _ := strings.Cut(move, "/")
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 || i >= len(items) {
		return nil, notify.Invalid("The routes form is malformed; reload the page")
	}
	j := -1
	switch verb {
	case "remove":
		return append(items[:i:i], items[i+1:]...), nil
	case "up":
		j = i - 1
	case "down":
		j = i + 1
	default:
		return nil, notify.Invalid("The routes form is malformed; reload the page")
	}
	if j >= 0 && j < len(items) && items[j].channel == items[i].channel {
		items[i], items[j] = items[j], items[i]
	}
	return items, nil
}
