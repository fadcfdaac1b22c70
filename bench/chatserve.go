package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/notifyd/notifyd/client"
)

// chatServe is the setup the recipient and workflow scenarios share: the
// default `notifyd serve` on a fresh database, one chata_bot account
// pointed at a new local sink, and n recipient profiles user-%05d, each
// with the chat target C%05d and what profile adds to it (nil: nothing).
// The caller closes the sink's server.
func (b *bench) chatServe(ctx context.Context, n int, profile func(i int, p map[string]any)) (*notifydProc, *sink, string, error) {
	dbURL, err := b.databaseURL()
	if err != nil {
		return nil, nil, "", err
	}
	sk, err := newSink()
	if err != nil {
		return nil, nil, "", err
	}
	p, err := b.startServe(ctx, dbURL, "all", b.conns)
	if err == nil {
		err = route(ctx, p.owner, "chata_bot", "chata_bot", map[string]string{"chata_bot_token": "xoxb-bench", "base_url": sk.root})
	}
	for c := 0; err == nil && c < n; c += 1000 {
		items := make([]map[string]any, min(1000, n-c))
		for i := range items {
			items[i] = map[string]any{"externalId": fmt.Sprintf("user-%05d", c+i), "chatTargets": map[string]string{"chata_bot": fmt.Sprintf("C%05d", c+i)}}
			if profile != nil {
				profile(c+i, items[i])
			}
		}
		var r *client.Response
		if r, err = p.owner.Dashboard(ctx, "POST", "/v1/recipients/bulk", map[string]any{"items": items}); err == nil && r.Status != http.StatusOK {
			err = fmt.Errorf("profiles: %s", r.Body)
		}
	}
	if err != nil {
		sk.srv.Close()
		return nil, nil, "", err
	}
	return p, sk, dbURL, nil
}

// chatTemplate creates and publishes a chata_bot template of text.
func chatTemplate(ctx context.Context, owner *client.Client, code, text string) error {
	var tpl struct {
		Template struct {
			ID string `json:"id"`
		} `json:"template"`
	}
	r, err := owner.Dashboard(ctx, "POST", "/v1/templates", map[string]any{"code": code, "channel": "chata_bot", "name": code})
	if err != nil || r.Status != http.StatusCreated || r.Decode(&tpl) != nil {
		return fmt.Errorf("template: %v %s", err, r.Body)
	}
	for _, c := range []struct {
		path string
		want int
		body any
	}{
		{"/v1/templates/" + tpl.Template.ID + "/versions", http.StatusCreated, map[string]any{"text": text}},
		{"/v1/templates/" + tpl.Template.ID + "/versions/1/publish", http.StatusOK, nil},
	} {
		if r, err := owner.Dashboard(ctx, "POST", c.path, c.body); err != nil || r.Status != c.want {
			return fmt.Errorf("template %s: %v %s", c.path, err, r.Body)
		}
	}
	return nil
}
