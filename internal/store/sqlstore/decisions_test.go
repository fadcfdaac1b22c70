package sqlstore

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// TestDecisionsRoundTrip: the compact form reads back exactly the
// decisions written, derived details and odd strings included, and is
// smaller than the JSON of objects it replaced.
func TestDecisionsRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 29, 13, 30, 0, 123456789, time.UTC)
	until := at.Add(9 * time.Hour)
	cat := &notify.Category{Key: "updates"}
	allow := notify.PreferenceDecision{Allowed: true, Rule: "category.default"}
	block := notify.PreferenceDecision{Allowed: false, Rule: "recipient.category_channel"}
	ds := []notify.Decision{
		{Stage: notify.StageAcceptance, At: at, Kind: notify.DecisionAddress, Channel: "chata_bot", Outcome: notify.OutcomeResolved,
			Rule: "profile.chat", Detail: "recipient profile user-1"},
		{Stage: notify.StageAcceptance, At: at, Kind: notify.DecisionPreference, Channel: "chata_bot", Outcome: notify.OutcomeAllowed,
			Rule: string(allow.Rule), Detail: allow.Explain(cat, "chata_bot")},
		{Stage: notify.StageAcceptance, At: at, Kind: notify.DecisionPreference, Channel: "sms", Outcome: notify.OutcomeBlocked,
			Rule: string(block.Rule), Detail: block.Explain(cat, "sms")},
		{Stage: notify.StageAcceptance, At: at, Kind: notify.DecisionWindow, Channel: "sms", Outcome: notify.OutcomeHeld,
			Rule: "category", Detail: "held until the window opens", Until: &until},
		{Stage: notify.StageAcceptance, At: at, Kind: notify.DecisionWindow, Channel: "sms", Outcome: notify.OutcomeAllowed, Rule: "open"},
		// A category deleted before dispatch: the detail names none, so it is kept.
		{Stage: notify.StageDispatch, At: at.Add(time.Second), Kind: notify.DecisionPreference, Channel: "chata_bot",
			Outcome: notify.OutcomeAllowed, Rule: string(allow.Rule), Detail: allow.Explain(nil, "chata_bot")},
		{Stage: notify.StageDispatch, Kind: notify.DecisionCap, Outcome: notify.OutcomeDropped, Rule: "cap",
			Detail: "quote \" backslash \\ newline \n tab \t bell \a 한국어 \u2028 end"},
		{Stage: "later", At: at, Kind: "other", Outcome: "x", Detail: "recipient profile user-2"},
	}
	s := encodeDecisions(ds, "updates", "user-1")
	if s == nil {
		t.Fatal("nil encoding")
	}
	if !json.Valid([]byte(*s)) {
		t.Fatalf("not JSON: %s", *s)
	}
	got, err := decodeDecisions(*s, "updates", "user-1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ds) {
		t.Fatalf("round trip:\n got %+v\nwant %+v\nstored %s", got, ds, *s)
	}
	old := toJSON(ds)
	if len(*s) >= len(old)*2/3 {
		t.Errorf("compact form %d bytes, objects %d", len(*s), len(old))
	}
	if strings.Count(*s, "null") != 3 {
		t.Errorf("derived details not left out: %s", *s)
	}
	// Rows written before the compact form.
	legacy, err := decodeDecisions(old, "updates", "user-1")
	if err != nil || !reflect.DeepEqual(legacy, ds) {
		t.Fatalf("legacy form: %v %+v", err, legacy)
	}
	if encodeDecisions(nil, "", "") != nil {
		t.Error("no decisions should store NULL")
	}
	for _, bad := range []string{"[", "[[", `[["a",1,"k","c","o","r",null,0]`, `[["a","x","k","c","o","r",null,0]]`, `[["a",1,"k"]]`} {
		if _, err := decodeDecisions(bad, "", ""); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
	// Invalid UTF-8 becomes U+FFFD, as encoding/json did.
	got, err = decodeDecisions(*encodeDecisions([]notify.Decision{{Detail: "a\xffb"}}, "", ""), "", "")
	if err != nil || got[0].Detail != "a\ufffdb" {
		t.Fatalf("invalid UTF-8: %v %q", err, got)
	}
}
