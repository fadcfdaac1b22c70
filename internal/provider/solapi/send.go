package solapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

const sendPath = "/messages/v4/send-many/detail"

// sendRequest is the body of send-many/detail.
type sendRequest struct {
	Messages        []wireMessage `json:"messages"`
	AllowDuplicates bool          `json:"allowDuplicates"`
	ShowMessageList bool          `json:"showMessageList"`
}

type wireMessage struct {
	To           string            `json:"to"`
	From         string            `json:"from"`
	Text         string            `json:"text"`
	Type         string            `json:"type,omitempty"`
	Subject      string            `json:"subject,omitempty"`
	KakaoOptions *kakaoOptions     `json:"kakaoOptions,omitempty"`
	CustomFields map[string]string `json:"customFields"`
}

type kakaoOptions struct {
	PfID       string            `json:"pfId"`
	TemplateID string            `json:"templateId"`
	Variables  map[string]string `json:"variables,omitempty"`
	// DisableSms is always true: SPEC falls back only through routing.
	DisableSms bool `json:"disableSms"`
}

// sendAnswer is the part of the send-many/detail answer the adapter reads.
type sendAnswer struct {
	MessageList       resultList `json:"messageList"`
	FailedMessageList resultList `json:"failedMessageList"`
}

type resultItem struct {
	MessageID     string              `json:"messageId"`
	To            string              `json:"to"`
	StatusCode    provider.FlexString `json:"statusCode"`
	StatusMessage string              `json:"statusMessage"`
	CustomFields  map[string]any      `json:"customFields"`
}

// nid is the correlation id the adapter put into customFields.
func (it resultItem) nid() string {
	s, _ := it.CustomFields["nid"].(string)
	return s
}

// resultList accepts a JSON array of results and also an object keyed by
// message id, the shape Solapi's list endpoints use.
type resultList []resultItem

func (l *resultList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*l = nil
		return nil
	case b[0] == '{':
		var m map[string]resultItem
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(resultList, 0, len(m))
		for _, k := range keys {
			it := m[k]
			if it.MessageID == "" {
				it.MessageID = k
			}
			out = append(out, it)
		}
		*l = out
		return nil
	}
	var a []resultItem
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	*l = a
	return nil
}

// templateID is the template id registered at Kakao when the approved
// template has one, else our template code.
func templateID(m provider.Message) string {
	if m.VendorTemplateID != "" {
		return m.VendorTemplateID
	}
	return m.TemplateCode
}

// Send sends msgs in one send-many/detail call and classifies each message
// by its own result.
func (s *sender) Send(ctx context.Context, msgs []provider.Message) []provider.Result {
	out := make([]provider.Result, len(msgs))
	var valid []int
	for i, m := range msgs {
		if err := s.check(m); err != nil {
			out[i].Err = err
			continue
		}
		valid = append(valid, i)
	}
	for start := 0; start < len(valid); start += maxPerCall {
		idx := valid[start:min(start+maxPerCall, len(valid))]
		for j, r := range s.sendBatch(ctx, msgs, idx) {
			out[idx[j]] = r
		}
	}
	return out
}

// check rejects, before any call, messages Solapi would refuse anyway.
func (s *sender) check(m provider.Message) *provider.Error {
	switch {
	case strings.TrimSpace(m.To) == "":
		return provider.Errorf(notify.FailureInvalidRequest, "recipient address is empty")
	case m.Text == "":
		return provider.Errorf(notify.FailureInvalidRequest, "message text is empty")
	case s.ata && m.SenderProfileKey == "":
		return provider.Errorf(notify.FailureInvalidRequest, "sender profile key (pfId) is missing (injected from the approved template)")
	case s.ata && templateID(m) == "":
		return provider.Errorf(notify.FailureInvalidRequest, "template id is missing (injected from the approved template)")
	}
	return nil
}

func (s *sender) wire(m provider.Message, nid string) wireMessage {
	w := wireMessage{To: m.To, From: s.from, Text: m.Text, CustomFields: map[string]string{"nid": nid}}
	if !s.ata {
		w.Subject = m.Title
		return w
	}
	w.Type = "ATA"
	w.KakaoOptions = &kakaoOptions{
		PfID:       m.SenderProfileKey,
		TemplateID: templateID(m),
		Variables:  variables(m.Variables),
		DisableSms: true,
	}
	return w
}

// variables wraps each key as #{key}, the form Solapi matches against the
// template; keys that already carry the wrapper are kept.
func variables(vars map[string]string) map[string]string {
	if len(vars) == 0 {
		return nil
	}
	out := make(map[string]string, len(vars))
	for k, v := range vars {
		if !strings.HasPrefix(k, "#{") || !strings.HasSuffix(k, "}") {
			k = "#{" + k + "}"
		}
		out[k] = v
	}
	return out
}

// correlationIDs returns the nid of each message of the batch: its
// notification id, made unique within the batch when empty or repeated.
func correlationIDs(msgs []provider.Message, idx []int) []string {
	out := make([]string, len(idx))
	seen := make(map[string]bool, len(idx))
	for j, i := range idx {
		id := msgs[i].ID
		if id == "" || seen[id] {
			id = fmt.Sprintf("%s#%d", msgs[i].ID, j)
			for seen[id] {
				id += "_"
			}
		}
		seen[id] = true
		out[j] = id
	}
	return out
}

func (s *sender) sendBatch(ctx context.Context, msgs []provider.Message, idx []int) []provider.Result {
	n := len(idx)
	nids := correlationIDs(msgs, idx)
	req := sendRequest{AllowDuplicates: true, ShowMessageList: true}
	for j, i := range idx {
		req.Messages = append(req.Messages, s.wire(msgs[i], nids[j]))
	}
	body, jerr := json.Marshal(req)
	if jerr != nil {
		return failN(n, provider.Errorf(notify.FailureInvalidRequest, "encode request: %v", jerr), provider.Exchange{})
	}
	ex, raw, err := s.call(ctx, http.MethodPost, sendPath, body, req)
	if err != nil {
		return failN(n, err, ex)
	}
	if !ok(ex.Response.HTTPStatus) {
		return failN(n, requestFailure(ex.Response.HTTPStatus, raw), ex)
	}
	var a sendAnswer
	if jerr := json.Unmarshal(raw, &a); jerr != nil {
		return failN(n, provider.Errorf(notify.FailureUnknown, "solapi answer is not JSON: %s", provider.Snippet(raw, 200)), ex)
	}

	pos := make(map[string]int, n)
	for j, nid := range nids {
		pos[nid] = j
	}
	out := make([]provider.Result, n)
	done := make([]bool, n)
	apply := func(it resultItem, failed bool) {
		j, found := pos[it.nid()]
		if !found && failed {
			// Failed entries are documented with to; if customFields
			// did not come back, match the first open message to that
			// number.
			j, found = matchTo(msgs, idx, done, it.To)
		}
		if !found {
			return
		}
		c := classify(string(it.StatusCode), it.StatusMessage)
		switch {
		case failed && c.accepted:
			out[j] = provider.Result{Err: provider.Errorf(notify.FailureUnknown,
				"solapi listed the message as failed with status %s: %s", it.StatusCode, it.StatusMessage), Exchange: ex}
		case c.accepted:
			out[j] = provider.Result{MessageID: it.MessageID, Exchange: ex}
		default:
			out[j] = provider.Result{Err: c.err, Exchange: ex}
		}
		done[j] = true
	}
	for _, it := range a.MessageList {
		apply(it, false)
	}
	// Failed entries win over accepted ones for the same message.
	for _, it := range a.FailedMessageList {
		apply(it, true)
	}
	for j := range out {
		if !done[j] {
			out[j] = provider.Result{Err: provider.Errorf(notify.FailureUnknown,
				"solapi answer has no result for this message"), Exchange: ex}
		}
	}
	return out
}

// matchTo finds the first message without a result whose number is to,
// comparing digits only (Solapi strips dashes).
func matchTo(msgs []provider.Message, idx []int, done []bool, to string) (int, bool) {
	want := digits(to)
	if want == "" {
		return 0, false
	}
	for j, i := range idx {
		if !done[j] && digits(msgs[i].To) == want {
			return j, true
		}
	}
	return 0, false
}

func digits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// failN is provider.FailAll for a count instead of a slice of messages.
func failN(n int, err *provider.Error, ex provider.Exchange) []provider.Result {
	return provider.FailAll(make([]provider.Message, n), err, ex)
}
