package service

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

// detail is err's 400 detail.
func detail(t *testing.T, err error) string {
	t.Helper()
	e, ok := notify.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, notify.CodeValidation, e.Code)
	return e.Detail
}

// A layout's header and footer count toward the bound of the part they
// wrap, and the fields are named after the prefix (issue 29).
func TestRenderMessageBounds(t *testing.T) {
	vars := map[string]string{"a": strings.Repeat("a", 10_000), "q": `"`}
	body := message{Title: "t", Text: strings.Repeat("x", 60_000), HTML: "<p>{{q}}</p>"}
	l := &notify.Layout{Text: "{{a}}{{a}}{{a}}{{a}}{{ content }}", HTML: "<main>{{content}}{{q}}</main>"}
	m, err := renderMessage(body, l, vars, "")
	require.NoError(t, err)
	require.Len(t, m.Text, 100_000, "exactly the bound")
	require.Equal(t, "<main><p>&#34;</p>&#34;</main>", m.HTML)

	l.Text += "!"
	_, err = renderMessage(body, l, vars, "items[3].")
	require.Equal(t, "items[3].content.text must be at most 100000 characters after template variables are put in", detail(t, err))
	var tl *renderedTooLarge
	require.ErrorAs(t, err, &tl, "a field rule a bulk send refuses the call with")

	_, err = renderMessage(message{Title: "{{a}}", Text: "t"}, nil, vars, "channelFallback[0].")
	require.Equal(t, "channelFallback[0].content.title must be at most 200 characters after template variables are put in", detail(t, err))
	_, err = renderMessage(message{Title: "Hi {{s}}", Text: "t"}, nil, map[string]string{"s": "x\r\nBcc: y@example.net"}, "")
	require.Equal(t, "content.title must not contain control characters", detail(t, err))
	require.False(t, errors.As(err, &tl), "not a bound: a bulk send leaves the item out")
}

// The fan-out skips (and counts) a subscriber whose attributes break the
// subject, and fails for good on one rendered over a bound (issue 29).
func TestRenderBatchBounds(t *testing.T) {
	s := &Service{jobAttempts: 3}
	now := time.Now()
	c := &notify.Campaign{ID: "c", Channel: notify.ChannelEmail, Subject: "{{s}}", ContentText: "{{t}}", ContentHTML: "<p>{{h}}</p>"}
	sub := func(id string, attrs map[string]string) *notify.Subscriber {
		return &notify.Subscriber{ID: id, Address: id + "@example.com", Attributes: attrs}
	}
	accepts, recips, failed, err := s.renderBatch(c, []*notify.Subscriber{
		sub("a", map[string]string{"s": "ok"}), sub("b", map[string]string{"s": "x\ny"}), sub("c", map[string]string{"s": "x\u2028y"}),
	}, now)
	require.NoError(t, err)
	require.Len(t, accepts, 1)
	require.Len(t, recips, 3)
	require.Equal(t, 2, failed)
	require.Equal(t, "ok", accepts[0].Request.Title)

	_, _, _, err = s.renderBatch(c, []*notify.Subscriber{sub("a", nil), sub("b", map[string]string{"t": strings.Repeat("가", 100_001)})}, now)
	var perm *fanoutRenderFailure
	require.ErrorAs(t, err, &perm)
	require.True(t, perm.Permanent())
	require.Equal(t, "contentText must be at most 100000 characters after subscriber attributes are put in (subscriber b)", err.Error())
}
