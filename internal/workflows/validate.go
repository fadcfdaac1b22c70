package workflows

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Bounds of a definition.
const (
	MaxSteps       = 50
	MaxConditions  = 20
	MaxKey         = 64
	MaxName        = 120
	MaxDelay       = 90 * 24 * time.Hour
	MaxWindow      = 30 * 24 * time.Hour
	MaxThrottle    = 10_000
	DefaultItems   = 100
	MaxDigestItems = 1_000
	// endTarget ends the run from a branch.
	endTarget = "end"
)

// The message states a branch may test on an earlier send step.
var messageStates = []string{"delivered", "failed", "read", "unread", "seen", "unseen"}

// The operators of payload and attribute conditions.
var conditionOps = []string{"eq", "ne", "exists", "missing"}

// CheckKey holds a workflow or step key to 1 to 64 letters, digits, '-'
// and '_': it is a path segment and a template's reference.
func CheckKey(field, key string) error {
	ok := key != "" && len(key) <= MaxKey
	for i := 0; ok && i < len(key); i++ {
		c := key[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
	}
	if !ok {
		return notify.Invalid("%s must be 1 to %d letters, digits, '-' or '_'", field, MaxKey)
	}
	return nil
}

// parseSpan reads a duration such as "10m" or "1h30m" between 1 s and max.
func parseSpan(field, s string, max time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Second || d > max {
		return 0, notify.Invalid("%s must be a duration such as \"10m\" or \"1h\", from 1s to %s", field, max)
	}
	return d, nil
}

// Check validates steps without the database: the fields each type
// needs, unique keys, branch targets that exist and lie ahead (a target
// behind its branch would loop: refused as a cycle), conditions on
// earlier send steps only, and at least one send step.
func Check(steps []notify.WorkflowStep) error {
	if len(steps) == 0 || len(steps) > MaxSteps {
		return notify.Invalid("steps must hold 1 to %d steps", MaxSteps)
	}
	index := map[string]int{}
	for i, st := range steps {
		f := fmt.Sprintf("steps[%d].key", i)
		if err := CheckKey(f, st.Key); err != nil {
			return err
		}
		if st.Key == endTarget {
			return notify.Invalid("%s must not be %q, which a branch uses to end the run", f, endTarget)
		}
		if j, dup := index[st.Key]; dup {
			return notify.Invalid("%s %q is also the key of steps[%d]", f, st.Key, j)
		}
		index[st.Key] = i
	}
	sends := 0
	for i, st := range steps {
		p := fmt.Sprintf("steps[%d].", i)
		var err error
		switch st.Type {
		case notify.StepSend:
			sends++
			err = checkSend(p, st)
		case notify.StepDelay:
			err = checkDelay(p, st)
		case notify.StepBranch:
			err = checkBranch(p, i, st, steps, index)
		case notify.StepThrottle:
			err = checkThrottle(p, st)
		case notify.StepDigest:
			err = checkDigest(p, st)
		default:
			err = notify.Invalid("%stype must be one of send, delay, branch, throttle, digest", p)
		}
		if err != nil {
			return err
		}
	}
	if sends == 0 {
		return notify.Invalid("steps must hold at least one send step: a workflow without one sends nothing")
	}
	return nil
}

func checkSend(p string, st notify.WorkflowStep) error {
	ch := notify.Channel(st.Channel)
	if st.Channel == "" {
		return notify.Invalid("%schannel is required for a send step", p)
	}
	if !ch.Valid() {
		return notify.Invalid("%schannel %q is not a channel", p, st.Channel)
	}
	if len(st.Fallback) > notify.MaxFallbackSteps {
		return notify.Invalid("%sfallback must hold at most %d channels", p, notify.MaxFallbackSteps)
	}
	seen := map[string]bool{st.Channel: true}
	for j, c := range st.Fallback {
		if !notify.Channel(c).Valid() {
			return notify.Invalid("%sfallback[%d] %q is not a channel", p, j, c)
		}
		if seen[c] {
			return notify.Invalid("%sfallback[%d] %q repeats a channel of the step", p, j, c)
		}
		seen[c] = true
	}
	if st.TemplateCode == "" {
		return notify.Invalid("%stemplateCode is required for a send step", p)
	}
	if err := usecase.MaxLen(p+"templateCode", st.TemplateCode, 120); err != nil {
		return err
	}
	return usecase.MaxLen(p+"category", st.Category, 120)
}

func checkDelay(p string, st notify.WorkflowStep) error {
	switch {
	case st.Duration != "" && st.Until != "":
		return notify.Invalid("%sduration and %suntil are exclusive: a delay waits for one of them", p, p)
	case st.Duration != "":
		_, err := parseSpan(p+"duration", st.Duration, MaxDelay)
		return err
	case st.Until != "":
		return usecase.MaxLen(p+"until", st.Until, 120)
	}
	return notify.Invalid("%sduration or %suntil is required for a delay step", p, p)
}

func checkBranch(p string, i int, st notify.WorkflowStep, steps []notify.WorkflowStep, index map[string]int) error {
	if len(st.Conditions) == 0 || len(st.Conditions) > MaxConditions {
		return notify.Invalid("%sconditions must hold 1 to %d conditions", p, MaxConditions)
	}
	for j, c := range st.Conditions {
		cp := fmt.Sprintf("%sconditions[%d].", p, j)
		n := 0
		for _, s := range []string{c.Payload, c.Attribute, c.Step} {
			if s != "" {
				n++
			}
		}
		if n != 1 {
			return notify.Invalid("%s must name exactly one of payload, attribute or step", strings.TrimSuffix(cp, "."))
		}
		if c.Step != "" {
			k, ok := index[c.Step]
			switch {
			case !ok:
				return notify.Invalid("%sstep: no step %q", cp, c.Step)
			case k >= i:
				return notify.Invalid("%sstep: step %q does not come before this branch", cp, c.Step)
			case steps[k].Type != notify.StepSend:
				return notify.Invalid("%sstep: step %q is not a send step, so it has no message", cp, c.Step)
			}
			if !slices.Contains(messageStates, c.State) {
				return notify.Invalid("%sstate must be one of %s", cp, strings.Join(messageStates, ", "))
			}
			continue
		}
		if c.State != "" {
			return notify.Invalid("%sstate applies to a step condition only", cp)
		}
		op := cmpOr(c.Op, "eq")
		if !slices.Contains(conditionOps, op) {
			return notify.Invalid("%sop must be one of %s", cp, strings.Join(conditionOps, ", "))
		}
	}
	for _, t := range []struct{ name, target string }{{"then", st.Then}, {"else", st.Else}} {
		if t.target == "" || t.target == endTarget {
			continue
		}
		k, ok := index[t.target]
		switch {
		case !ok:
			return notify.Invalid("%s%s: no step %q (a step key, or \"end\")", p, t.name, t.target)
		case k <= i:
			return notify.Invalid("%s%s: step %q does not come after this branch; a jump back would make a cycle", p, t.name, t.target)
		}
	}
	return nil
}

func checkThrottle(p string, st notify.WorkflowStep) error {
	if st.Limit < 1 || st.Limit > MaxThrottle {
		return notify.Invalid("%slimit must be from 1 to %d runs", p, MaxThrottle)
	}
	if _, err := parseSpan(p+"window", st.Window, MaxWindow); err != nil {
		return err
	}
	return usecase.MaxLen(p+"keyField", st.KeyField, 120)
}

func checkDigest(p string, st notify.WorkflowStep) error {
	if _, err := parseSpan(p+"window", st.Window, MaxWindow); err != nil {
		return err
	}
	if st.WindowType != "" && st.WindowType != "fromFirst" && st.WindowType != "fixed" {
		return notify.Invalid("%swindowType must be fromFirst or fixed", p)
	}
	if st.MaxItems < 0 || st.MaxItems > MaxDigestItems {
		return notify.Invalid("%smaxItems must be from 1 to %d", p, MaxDigestItems)
	}
	return usecase.MaxLen(p+"keyField", st.KeyField, 120)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkReferences holds the steps to the workspace: every send step's
// template exists on its channel and its category exists.
func checkReferences(ctx context.Context, tx notify.Tx, ws string, steps []notify.WorkflowStep) error {
	for i, st := range steps {
		if st.Type != notify.StepSend {
			continue
		}
		p := fmt.Sprintf("steps[%d].", i)
		if !usecase.Storable(st.TemplateCode) {
			return notify.Invalid("%stemplateCode: no such template on channel %s", p, st.Channel)
		}
		if _, err := tx.FindTemplateByCode(ctx, ws, st.TemplateCode, notify.Channel(st.Channel)); err != nil {
			if notify.IsNotFound(err) {
				return notify.Invalid("%stemplateCode: no template %q on channel %s", p, st.TemplateCode, st.Channel)
			}
			return err
		}
		if st.Category == "" {
			continue
		}
		if !usecase.Storable(st.Category) {
			return notify.Invalid("%scategory: no such category", p)
		}
		if _, err := tx.FindCategory(ctx, ws, st.Category); err != nil {
			if notify.IsNotFound(err) {
				return notify.Invalid("%scategory: no category %q", p, st.Category)
			}
			return err
		}
	}
	return nil
}
