package web

import (
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/notifyd/notifyd/internal/newsletter"
	"github.com/notifyd/notifyd/internal/notify"
)

// subscriberPages serve the newsletter subscriber pages.
type subscriberPages struct{ *Console }

// routes mirror the Dashboard API's subscriber routes and roles
// (internal/api/subscribers.go).
func (c subscriberPages) routes() []Route {
	return []Route{
		{Method: "GET", Path: "/newsletter/subscribers", Auth: Member, Roles: notify.RolesAll, h: c.subscribersPage},
		{Method: "POST", Path: "/newsletter/subscribers/import", Auth: Member, Roles: notify.RolesOperator, h: c.importSubscribers},
		{Method: "GET", Path: "/newsletter/subscribers/{id}", Auth: Member, Roles: notify.RolesAll, h: c.subscriberPage},
		{Method: "POST", Path: "/newsletter/subscribers/{id}", Auth: Member, Roles: notify.RolesOperator, h: c.updateSubscriber},
		{Method: "POST", Path: "/newsletter/subscribers/{id}/delete", Auth: Member, Roles: notify.RolesAdmin, h: c.deleteSubscriber},
	}
}

// subscriberPageSize is the console's subscriber page.
const subscriberPageSize = 50

type subscribersData struct {
	Search, Consent string
	Consents        []string
	Subscribers     []*notify.Subscriber
	Total           int
	From, To        int
	Prev, Next      string
	Import          *newsletter.ImportResult
}

// offsetLink is the list's URL at offset with the current filters.
func offsetLink(path string, q url.Values, offset int) string {
	v := url.Values{}
	for k, vs := range q {
		v[k] = vs
	}
	v.Del("offset")
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

func (c subscriberPages) subscribersPage(x *Ctx) error {
	return c.renderSubscribers(x, http.StatusOK, nil, nil)
}

// renderSubscribers shows the list (with an import's counts or problem).
func (c subscriberPages) renderSubscribers(x *Ctx, status int, res *newsletter.ImportResult, problem *notify.Error) error {
	q := x.R.URL.Query()
	d := subscribersData{Search: q.Get("search"), Consent: q.Get("consentStatus"), Import: res,
		Consents: []string{notify.ConsentSubscribed, notify.ConsentUnsubscribed, notify.ConsentPending}}
	f := notify.SubscriberFilter{Search: d.Search, ConsentStatus: d.Consent, Limit: subscriberPageSize}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return notify.Invalid("offset must be an integer")
		}
		f.Offset = n
	}
	subs, total, f, err := c.rooms.Newsletter.ListSubscribers(x.Context(), x.Actor, f)
	if err != nil {
		e := problemOf(c.log, x.R, err)
		if e.Status() != http.StatusBadRequest {
			return err
		}
		problem, status = e, http.StatusBadRequest
	}
	d.Subscribers, d.Total = subs, total
	if len(subs) > 0 {
		d.From, d.To = f.Offset+1, f.Offset+len(subs)
	}
	const path = "/newsletter/subscribers"
	if f.Offset > 0 {
		d.Prev = offsetLink(path, q, max(0, f.Offset-f.Limit))
	}
	if f.Offset+len(subs) < total {
		d.Next = offsetLink(path, q, f.Offset+len(subs))
	}
	return x.Render(status, "subscribers.html", &Page{Title: "Subscribers", Section: "/newsletter", Problem: problem, Data: d})
}

// csvImport reads an import's CSV file: a header row naming the columns
// ("email" or "address" required, "name" optional, every other column an
// attribute), then one subscriber a row. A row that cannot be read is an
// invalid item (the import counts it as skipped).
func csvImport(r io.Reader) ([]newsletter.ImportItem, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	head, err := cr.Read()
	if err != nil {
		return nil, notify.Invalid("The CSV file must start with a header row (email, name, attributes…)")
	}
	addrCol, nameCol := -1, -1
	for i, h := range head {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		head[i] = h
		switch strings.ToLower(h) {
		case "email", "address":
			addrCol = i
		case "name":
			nameCol = i
		}
	}
	if addrCol < 0 {
		return nil, notify.Invalid("The CSV header must name an email (or address) column")
	}
	email := string(notify.ChannelEmail)
	var items []newsletter.ImportItem
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if len(items) >= newsletter.MaxSubscriberImport {
			return nil, notify.Invalid("The CSV file must hold 1 to %d subscribers", newsletter.MaxSubscriberImport)
		}
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return nil, notify.Invalid("The CSV file could not be read")
			}
			items = append(items, newsletter.ImportItem{Invalid: true})
			continue
		}
		if len(row) == 1 && strings.TrimSpace(row[0]) == "" {
			continue // a blank line
		}
		it := newsletter.ImportItem{Channel: &email}
		if addrCol < len(row) {
			a := strings.TrimSpace(row[addrCol])
			it.Address = &a
		}
		for i, v := range row {
			switch {
			case i >= len(head) || i == addrCol:
			case i == nameCol:
				n := strings.TrimSpace(v)
				it.Name = &n
			case head[i] != "":
				if it.Attributes == nil {
					it.Attributes = map[string]string{}
				}
				it.Attributes[head[i]] = v
			}
		}
		items = append(items, it)
	}
	if len(items) == 0 {
		return nil, notify.Invalid("The CSV file must hold 1 to %d subscribers", newsletter.MaxSubscriberImport)
	}
	return items, nil
}

// importSubscribers imports a CSV file (multipart form) as POST
// /v1/newsletter/subscribers/import does, and shows its counts.
func (c subscriberPages) importSubscribers(x *Ctx) error {
	fail := func(err error) error {
		e := problemOf(c.log, x.R, err)
		if e.Status() >= 500 {
			return err
		}
		return c.renderSubscribers(x, e.Status(), nil, e)
	}
	f := x.FormFile("file")
	if f == nil {
		return fail(notify.Invalid("Choose a CSV file to import"))
	}
	defer f.Close()
	items, err := csvImport(f)
	if err != nil {
		return fail(err)
	}
	in := newsletter.ImportInput{Items: items}
	if v := x.R.PostFormValue("consentStatus"); v != "" {
		in.ConsentStatus = &v
	}
	if v := strings.TrimSpace(x.R.PostFormValue("consentSource")); v != "" {
		in.ConsentSource = &v
	}
	res, err := c.rooms.Newsletter.ImportSubscribers(x.Context(), x.Actor, in)
	if err != nil {
		return fail(err)
	}
	return c.renderSubscribers(x, http.StatusOK, res, nil)
}

type subscriberData struct {
	S          *notify.Subscriber
	Attributes string
	Consents   []string
}

// formatPairs writes a map as sorted key=value lines (the form's
// textarea).
func formatPairs(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + m[k] + "\n")
	}
	return b.String()
}

// parsePairs reads key=value lines (blank lines ignored) as a map.
func parsePairs(field, text string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, notify.Invalid("%s line %d must be key=value", field, i+1)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

func (c subscriberPages) subscriberPage(x *Ctx) error {
	s, err := c.rooms.Newsletter.GetSubscriber(x.Context(), x.Actor, x.R.PathValue("id"))
	if err != nil {
		return err
	}
	return c.renderSubscriber(x, http.StatusOK, s, nil)
}

func (c subscriberPages) renderSubscriber(x *Ctx, status int, s *notify.Subscriber, problem *notify.Error) error {
	d := subscriberData{S: s, Attributes: formatPairs(s.Attributes),
		Consents: []string{notify.ConsentSubscribed, notify.ConsentUnsubscribed, notify.ConsentPending}}
	return x.Render(status, "subscriber.html", &Page{Title: "Subscriber " + s.Address, Section: "/newsletter", Problem: problem, Data: d})
}

// updateSubscriber saves the edit form as PATCH
// /v1/newsletter/subscribers/{id} does (audited subscriber.update).
func (c subscriberPages) updateSubscriber(x *Ctx) error {
	id, form := x.R.PathValue("id"), x.R.PostForm
	name, consent, source := form.Get("name"), form.Get("consentStatus"), form.Get("consentSource")
	in := newsletter.SubscriberInput{Name: &name, ConsentStatus: &consent, ConsentSource: &source}
	attrs, err := parsePairs("attributes", form.Get("attributes"))
	if err == nil {
		in.Attributes = attrs
		_, err = c.rooms.Newsletter.UpdateSubscriber(x.Context(), x.Actor, id, in)
	}
	if err != nil {
		e := problemOf(c.log, x.R, err)
		if e.Status() != http.StatusBadRequest {
			return err
		}
		s, gerr := c.rooms.Newsletter.GetSubscriber(x.Context(), x.Actor, id)
		if gerr != nil {
			return gerr
		}
		return c.renderSubscriber(x, http.StatusBadRequest, s, e)
	}
	return x.Redirect("/newsletter/subscribers/"+id, Flash{Kind: "info", Text: "Subscriber saved."})
}

func (c subscriberPages) deleteSubscriber(x *Ctx) error {
	if err := c.rooms.Newsletter.DeleteSubscriber(x.Context(), x.Actor, x.R.PathValue("id")); err != nil {
		return err
	}
	return x.Redirect("/newsletter/subscribers", Flash{Kind: "info", Text: "Subscriber deleted."})
}
