package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	send := func(key string) notify.WorkflowStep {
		return notify.WorkflowStep{Key: key, Type: notify.StepSend, Channel: "inapp", TemplateCode: "note"}
	}
	delay := notify.WorkflowStep{Key: "wait", Type: notify.StepDelay, Duration: "10m"}
	branch := func(c notify.WorkflowCondition, then, els string) notify.WorkflowStep {
		return notify.WorkflowStep{Key: "check", Type: notify.StepBranch, Conditions: []notify.WorkflowCondition{c}, Then: then, Else: els}
	}
	unread := notify.WorkflowCondition{Step: "inapp", State: "unread"}
	sms := notify.WorkflowStep{Key: "sms", Type: notify.StepSend, Channel: "sms", Fallback: []string{"email"}, TemplateCode: "note"}
	for _, c := range []struct {
		name   string
		steps  []notify.WorkflowStep
		detail string // "" when valid
	}{
		{"escalation", []notify.WorkflowStep{send("inapp"), delay, branch(unread, "", ""), sms}, ""},
		{"jump ahead", []notify.WorkflowStep{send("inapp"), branch(notify.WorkflowCondition{Payload: "plan", Value: "pro"}, "sms", "end"), delay, sms}, ""},
		{"no steps", nil, "steps must hold 1 to 50 steps"},
		{"no send", []notify.WorkflowStep{delay}, "steps must hold at least one send step: a workflow without one sends nothing"},
		{"bad key", []notify.WorkflowStep{{Key: "a b", Type: notify.StepSend}}, "steps[0].key must be 1 to 64 letters, digits, '-' or '_'"},
		{"end key", []notify.WorkflowStep{{Key: "end", Type: notify.StepSend}}, `steps[0].key must not be "end", which a branch uses to end the run`},
		{"duplicate key", []notify.WorkflowStep{send("a"), send("a")}, `steps[1].key "a" is also the key of steps[0]`},
		{"unknown type", []notify.WorkflowStep{{Key: "a", Type: "wait"}}, "steps[0].type must be one of send, delay, branch, throttle, digest"},
		{"send without channel", []notify.WorkflowStep{{Key: "a", Type: "send", TemplateCode: "x"}}, "steps[0].channel is required for a send step"},
		{"send bad channel", []notify.WorkflowStep{{Key: "a", Type: "send", Channel: "fax", TemplateCode: "x"}}, `steps[0].channel "fax" is not a channel`},
		{"send without template", []notify.WorkflowStep{{Key: "a", Type: "send", Channel: "sms"}}, "steps[0].templateCode is required for a send step"},
		{"fallback repeats", []notify.WorkflowStep{{Key: "a", Type: "send", Channel: "sms", Fallback: []string{"sms"}, TemplateCode: "x"}},
			`steps[0].fallback[0] "sms" repeats a channel of the step`},
		{"delay without time", []notify.WorkflowStep{send("a"), {Key: "w", Type: "delay"}}, "steps[1].duration or steps[1].until is required for a delay step"},
		{"delay both", []notify.WorkflowStep{send("a"), {Key: "w", Type: "delay", Duration: "1m", Until: "at"}},
			"steps[1].duration and steps[1].until are exclusive: a delay waits for one of them"},
		{"delay too short", []notify.WorkflowStep{send("a"), {Key: "w", Type: "delay", Duration: "10ms"}},
			`steps[1].duration must be a duration such as "10m" or "1h", from 1s to 2160h0m0s`},
		{"cycle", []notify.WorkflowStep{send("inapp"), delay, branch(unread, "inapp", "")},
			`steps[2].then: step "inapp" does not come after this branch; a jump back would make a cycle`},
		{"self loop", []notify.WorkflowStep{send("inapp"), branch(unread, "", "check")},
			`steps[1].else: step "check" does not come after this branch; a jump back would make a cycle`},
		{"unknown target", []notify.WorkflowStep{send("inapp"), branch(unread, "nowhere", "")}, `steps[1].then: no step "nowhere" (a step key, or "end")`},
		{"condition on a later step", []notify.WorkflowStep{branch(unread, "", ""), send("inapp")},
			`steps[0].conditions[0].step: step "inapp" does not come before this branch`},
		{"condition on a delay", []notify.WorkflowStep{send("inapp"), delay, branch(notify.WorkflowCondition{Step: "wait", State: "read"}, "", "")},
			`steps[2].conditions[0].step: step "wait" is not a send step, so it has no message`},
		{"unknown state", []notify.WorkflowStep{send("inapp"), branch(notify.WorkflowCondition{Step: "inapp", State: "opened"}, "", "")},
			"steps[1].conditions[0].state must be one of delivered, failed, read, unread, seen, unseen"},
		{"two subjects", []notify.WorkflowStep{send("inapp"), branch(notify.WorkflowCondition{Step: "inapp", Payload: "x", State: "read"}, "", "")},
			"steps[1].conditions[0] must name exactly one of payload, attribute or step"},
		{"bad op", []notify.WorkflowStep{send("inapp"), branch(notify.WorkflowCondition{Attribute: "tier", Op: "gt"}, "", "")},
			"steps[1].conditions[0].op must be one of eq, ne, exists, missing"},
		{"throttle limit", []notify.WorkflowStep{{Key: "t", Type: "throttle", Window: "1h"}, send("a")}, "steps[0].limit must be from 1 to 10000 runs"},
		{"throttle window", []notify.WorkflowStep{{Key: "t", Type: "throttle", Limit: 1}, send("a")},
			`steps[0].window must be a duration such as "10m" or "1h", from 1s to 720h0m0s`},
		{"digest type", []notify.WorkflowStep{{Key: "d", Type: "digest", Window: "1m", WindowType: "rolling"}, send("a")},
			"steps[0].windowType must be fromFirst or fixed"},
		{"digest items", []notify.WorkflowStep{{Key: "d", Type: "digest", Window: "1m", MaxItems: 5000}, send("a")},
			"steps[0].maxItems must be from 1 to 1000"},
	} {
		err := Check(c.steps)
		if c.detail == "" {
			require.NoError(t, err, c.name)
			continue
		}
		e, ok := notify.AsError(err)
		require.True(t, ok, c.name)
		require.Equal(t, 400, e.Status(), c.name)
		require.Equal(t, c.detail, e.Detail, c.name)
	}
}

func TestVariables(t *testing.T) {
	t.Parallel()
	r := &notify.WorkflowRun{RecipientID: "u-1", Payload: map[string]any{"title": "Hi", "n": float64(3), "ok": true,
		"tags": []any{"a"}, "bad-name": "x"},
		Digest: &notify.WorkflowDigestResult{Count: 2, Items: []map[string]any{{"title": "A"}, {"title": "B"}}}}
	v := Variables(r)
	require.Equal(t, map[string]string{"recipientId": "u-1", "title": "Hi", "n": "3", "ok": "true", "tags": `["a"]`,
		"digestCount": "2", "digestItems": `[{"title":"A"},{"title":"B"}]`, "item1_title": "A", "item2_title": "B"}, v)
}
