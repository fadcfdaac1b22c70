package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// The recipients scenario is issue 32's bulk upsert target: 100,000
// profiles written through the signed API as 100 calls of
// POST /v1/recipients/bulk with 1,000 profiles each (name, phone, email,
// a push token, time zone, locale, two attributes), one call after the
// other, on an api-role daemon. It runs twice: the first pass creates
// every profile, the second replaces them all. Target: each pass under
// 10 s.

const (
	recipientCalls   = 100
	recipientPerCall = 1000
)

func recipientBodies(pass int) ([][]byte, error) {
	bodies := make([][]byte, recipientCalls)
	for c := range bodies {
		items := make([]map[string]any, recipientPerCall)
		for i := range items {
			n := c*recipientPerCall + i
			items[i] = map[string]any{"externalId": fmt.Sprintf("user-%06d", n), "name": fmt.Sprintf("Person %d (%d)", n, pass),
				"phone": fmt.Sprintf("010-%04d-%04d", n/10000, n%10000), "email": fmt.Sprintf("user%06d@example.com", n),
				"pushTokens": []string{fmt.Sprintf("device-token-%06d-%d", n, pass)}, "timeZone": "Asia/Seoul", "locale": "ko-KR",
				"attributes": map[string]string{"plan": "pro", "pass": fmt.Sprint(pass)}}
		}
		b, err := json.Marshal(map[string]any{"items": items})
		if err != nil {
			return nil, err
		}
		bodies[c] = b
	}
	return bodies, nil
}

func (b *bench) recipients(ctx context.Context) error {
	d, _, err := b.freshAPI(ctx)
	if err != nil {
		return err
	}
	owner, _, err := apiKey(ctx, d, 1)
	if err != nil {
		return err
	}
	key, _, err := owner.CreateAPIKey(ctx, "recipients", "recipients:read", "recipients:write")
	if err != nil {
		return err
	}
	key.HTTP = owner.HTTP
	fmt.Printf("recipients: %d calls of %d profiles, signed POST /v1/recipients/bulk, one after the other (db %s)\n",
		recipientCalls, recipientPerCall, b.db)
	for pass, name := range []string{"create", "replace"} {
		bodies, err := recipientBodies(pass)
		if err != nil {
			return err
		}
		calls := make([]time.Duration, len(bodies))
		start := time.Now()
		for i, body := range bodies {
			t := time.Now()
			r, err := key.Signed(ctx, "POST", "/v1/recipients/bulk", body)
			if err != nil {
				return err
			}
			if r.Status != 200 {
				return fmt.Errorf("bulk call %d: status %d: %s", i, r.Status, r.Body)
			}
			var res struct {
				Data struct{ Total, Created, Updated int } `json:"data"`
			}
			if err := json.Unmarshal(r.Body, &res); err != nil {
				return err
			}
			if want := map[bool]int{true: recipientPerCall}[pass == 0]; res.Data.Created != want {
				return fmt.Errorf("bulk call %d (%s): created %d, want %d", i, name, res.Data.Created, want)
			}
			calls[i] = time.Since(t)
		}
		total := time.Since(start)
		slices.Sort(calls)
		fmt.Printf("  %-8s %d profiles in %s (%.0f profiles/s); a call p50 %s p99 %s max %s; target < 10s\n", name,
			recipientCalls*recipientPerCall, total.Round(time.Millisecond), float64(recipientCalls*recipientPerCall)/total.Seconds(),
			calls[len(calls)/2].Round(time.Millisecond), calls[len(calls)*99/100].Round(time.Millisecond), calls[len(calls)-1].Round(time.Millisecond))
	}
	return nil
}
