package workflows

import (
	"encoding/json"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/notifyd/notifyd/internal/compose"
	"github.com/notifyd/notifyd/internal/notify"
)

// holds reports whether every condition holds for the run.
func (x *exec) holds(cs []notify.WorkflowCondition) (bool, error) {
	var attrs map[string]string
	for _, c := range cs {
		var ok bool
		switch {
		case c.Step != "":
			var err error
			if ok, err = x.messageIs(c.Step, c.State); err != nil {
				return false, err
			}
		case c.Payload != "":
			v, present := x.run.Payload[c.Payload]
			ok = compare(c.Op, present && v != nil, scalar(v), c.Value)
		default:
			if attrs == nil {
				p, err := x.tx.FindRecipient(x.ctx, x.run.WorkspaceID, x.run.RecipientID)
				if err != nil && !notify.IsNotFound(err) {
					return false, err
				}
				attrs = map[string]string{}
				if p != nil && p.Attributes != nil {
					attrs = p.Attributes
				}
			}
			v, present := attrs[c.Attribute]
			ok = compare(c.Op, present, v, c.Value)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

func compare(op string, present bool, v, want string) bool {
	switch op {
	case "exists":
		return present
	case "missing":
		return !present
	case "ne":
		return v != want
	}
	return present && v == want
}

// messageIs tests the state of the message an earlier send step of the
// run made: delivered (sent), failed (failed, canceled, or no request at
// all), read, unread, seen, unseen (of its in-app inbox message; a
// message of another channel is never read nor seen).
func (x *exec) messageIs(stepKey, state string) (bool, error) {
	var requestID string
	for _, st := range x.run.Steps {
		if st.Key == stepKey {
			requestID = st.RequestID
		}
	}
	var r *notify.Request
	if requestID != "" {
		var err error
		if r, err = x.tx.FindRequest(x.ctx, x.run.WorkspaceID, requestID); err != nil && !notify.IsNotFound(err) {
			return false, err
		}
	}
	failed := r == nil || r.Status == notify.StatusFailed || r.Status == notify.StatusCanceled
	switch state {
	case "delivered":
		return r != nil && r.Status == notify.StatusSent, nil
	case "failed":
		return failed, nil
	}
	read, seen := false, false
	if r != nil {
		ms, err := x.tx.FindInboxMessagesOfRequest(x.ctx, x.run.WorkspaceID, r.ID)
		if err != nil {
			return false, err
		}
		for _, m := range ms {
			read = read || m.ReadAt != nil
			seen = seen || m.SeenAt != nil || m.ReadAt != nil
		}
	}
	switch state {
	case "read":
		return read, nil
	case "unread":
		return !read, nil
	case "seen":
		return seen, nil
	}
	return !seen, nil // unseen
}

// sendOf is the message of send step idx for the run: the step's
// template filled with the run's variables, keyed by run and step.
func sendOf(r *notify.WorkflowRun, st notify.WorkflowStep, idx int) Send {
	out := Send{Channel: notify.Channel(st.Channel), RecipientID: r.RecipientID, TemplateCode: st.TemplateCode,
		Category: st.Category, Variables: Variables(r),
		Metadata:       map[string]string{"workflowKey": r.WorkflowKey, "workflowRunId": r.ID, "workflowStep": st.Key},
		IdempotencyKey: "wf:" + r.ID + ":" + strconv.Itoa(idx)}
	for _, c := range st.Fallback {
		out.Fallback = append(out.Fallback, notify.Channel(c))
	}
	return out
}

// Variables are what a send step's template may use: each payload field
// whose name is a variable name (objects and lists as JSON), recipientId,
// and after a digest digestCount, digestItems (JSON) and each item's
// fields as item1_name, item2_name, ... within a send's bounds.
func Variables(r *notify.WorkflowRun) map[string]string {
	vars := map[string]string{"recipientId": r.RecipientID}
	put := func(k, v string) {
		if len(vars) >= compose.MaxTemplateVariables || !varName(k) || len(k) > compose.MaxTemplateVariableName {
			return
		}
		if len(v) > compose.MaxTemplateVariableValue {
			v = cut(v, compose.MaxTemplateVariableValue)
		}
		vars[k] = v
	}
	for _, k := range sortedKeys(r.Payload) {
		put(k, scalar(r.Payload[k]))
	}
	if r.Digest != nil {
		put("digestCount", strconv.Itoa(r.Digest.Count))
		put("digestItems", toJSON(r.Digest.Items))
		for i, it := range r.Digest.Items {
			for _, k := range sortedKeys(it) {
				put("item"+strconv.Itoa(i+1)+"_"+k, scalar(it[k]))
			}
		}
	}
	return vars
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// varName: the names render substitutes, ASCII letters, digits and '_'.
func varName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}

// cut shortens s to at most n bytes on a rune boundary.
func cut(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func itoa(i int) string { return strconv.Itoa(i) }
