package inboundhooks

import (
	"sort"
	"strconv"
	"strings"
)

// Alertmanager's webhook payload (version 4) and Grafana's alerting
// webhook, which extends it with a rendered title and message. Both say
// one notification of a group of alerts; notifyd makes it one message
// (per recipient) that sums up the group, as Alertmanager's own e-mail,
// Slack and PagerDuty receivers do, not one message per alert: a storm of
// fifty alerts is one SMS, not fifty.

// alert is one alert of a group.
type alert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     string            `json:"startsAt"`
	EndsAt       string            `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

// alertGroup is Alertmanager's payload; the fields after Alerts are
// Grafana's (Title, State, Message of unified alerting; RuleName and
// RuleURL of its legacy alerting).
type alertGroup struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   int               `json:"truncatedAlerts"`
	Status            string            `json:"status"`
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []alert           `json:"alerts"`

	Title    string `json:"title"`
	State    string `json:"state"`
	Message  string `json:"message"`
	RuleName string `json:"ruleName"`
	RuleURL  string `json:"ruleUrl"`
}

// maxListed is how many alerts a message lists one per line.
const maxListed = 20

func parseAlertmanager(p Payload) (*Message, error) {
	const f = "Alertmanager"
	var g alertGroup
	if err := decodeJSON(f, p.Body, &g); err != nil {
		return nil, err
	}
	if err := g.check(f); err != nil {
		return nil, err
	}
	if len(g.Alerts) == 0 {
		return nil, invalid(f, "alerts must hold at least one alert")
	}
	title, text := g.summary()
	return &Message{Title: title, Text: text, Vars: g.vars()}, nil
}

func parseGrafana(p Payload) (*Message, error) {
	const f = "Grafana"
	var g alertGroup
	if err := decodeJSON(f, p.Body, &g); err != nil {
		return nil, err
	}
	if err := g.check(f); err != nil {
		return nil, err
	}
	vars := g.vars()
	vars["state"], vars["message"], vars["ruleName"], vars["ruleUrl"] = g.State, g.Message, g.RuleName, g.RuleURL
	if g.Title != "" || g.Message != "" {
		// Grafana renders both with the contact point's templates.
		title, text := g.Title, plainLinks(g.Message)
		if text == "" {
			text = title
		}
		if title == "" && len(g.Alerts) > 0 {
			title, _ = g.summary()
		}
		return &Message{Title: title, Text: text, Vars: vars}, nil
	}
	if len(g.Alerts) == 0 {
		return nil, invalid(f, "title and message, or alerts, are required")
	}
	title, text := g.summary()
	return &Message{Title: title, Text: text, Vars: vars}, nil
}

// check holds the statuses to Alertmanager's two.
func (g *alertGroup) check(format string) error {
	if g.Status != "" && g.Status != "firing" && g.Status != "resolved" {
		return invalid(format, "status must be firing or resolved")
	}
	for i, a := range g.Alerts {
		if a.Status != "firing" && a.Status != "resolved" {
			return invalid(format, "alerts[%d].status must be firing or resolved", i)
		}
	}
	return nil
}

// counts are the firing and resolved alerts of the group.
func (g *alertGroup) counts() (firing, resolved int) {
	for _, a := range g.Alerts {
		if a.Status == "firing" {
			firing++
		} else {
			resolved++
		}
	}
	return firing, resolved
}

// status is the group's status, from its alerts when the payload has none.
func (g *alertGroup) status() string {
	if g.Status != "" {
		return g.Status
	}
	if f, _ := g.counts(); f > 0 {
		return "firing"
	}
	return "resolved"
}

// summary is Alertmanager's default subject, "[FIRING:2] <group label
// values> (<other common label values>)", and one line per alert:
// "FIRING <alertname> <labels that tell it from the others>: <summary>".
func (g *alertGroup) summary() (title, text string) {
	firing, _ := g.counts()
	st := strings.ToUpper(g.status())
	head := "[" + st
	if st == "FIRING" {
		head += ":" + strconv.Itoa(firing)
	}
	head += "]"
	parts := []string{head}
	if vs := sortedValues(g.GroupLabels, nil); len(vs) > 0 {
		parts = append(parts, strings.Join(vs, " "))
	} else if name := g.alertname(); name != "" {
		parts = append(parts, name)
	}
	if rest := sortedValues(g.CommonLabels, g.GroupLabels); len(rest) > 0 && len(g.GroupLabels) > 0 {
		parts = append(parts, "("+strings.Join(rest, " ")+")")
	}
	title = strings.Join(parts, " ")

	var lines []string
	for i, a := range g.Alerts {
		if i == maxListed {
			break
		}
		line := strings.ToUpper(a.Status) + " " + a.Labels["alertname"]
		var own []string
		for _, k := range sortedKeys(a.Labels) {
			if _, common := g.CommonLabels[k]; !common && k != "alertname" {
				own = append(own, k+"="+a.Labels[k])
			}
		}
		if len(own) > 0 {
			line += " " + strings.Join(own, " ")
		}
		if s := firstOf(a.Annotations, "summary", "description", "message"); s != "" {
			line += ": " + s
		}
		lines = append(lines, strings.TrimSpace(line))
	}
	if more := len(g.Alerts) - len(lines) + g.TruncatedAlerts; more > 0 {
		lines = append(lines, "… and "+strconv.Itoa(more)+" more")
	}
	return title, strings.Join(lines, "\n")
}

// alertname is the group's alert name: the common label, else the first
// alert's.
func (g *alertGroup) alertname() string {
	if n := g.CommonLabels["alertname"]; n != "" {
		return n
	}
	if len(g.Alerts) > 0 {
		return g.Alerts[0].Labels["alertname"]
	}
	return ""
}

// vars are the group's template variables: its fields, counts, the
// common labels and annotations (label_*, annotation_*) and the group
// labels (group_*).
func (g *alertGroup) vars() map[string]string {
	firing, resolved := g.counts()
	v := map[string]string{"status": g.status(), "receiver": g.Receiver, "groupKey": g.GroupKey, "externalURL": g.ExternalURL,
		"firing": strconv.Itoa(firing), "resolved": strconv.Itoa(resolved), "alertname": g.alertname(),
		"severity": g.CommonLabels["severity"]}
	first := map[string]string{}
	if len(g.Alerts) > 0 {
		first = g.Alerts[0].Annotations
	}
	for _, k := range []string{"summary", "description"} {
		v[k] = g.CommonAnnotations[k]
		if v[k] == "" {
			v[k] = first[k]
		}
	}
	putMap(v, "label_", g.CommonLabels)
	putMap(v, "annotation_", g.CommonAnnotations)
	putMap(v, "group_", g.GroupLabels)
	return v
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// firstOf is the first non-empty value of m among keys.
func firstOf(m map[string]string, keys ...string) string {
	for _, k := range keys {
		if s := strings.TrimSpace(m[k]); s != "" {
			return s
		}
	}
	return ""
}
