package engagement

import (
	"context"
	"html"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// Instrument is the delivery engine's port: the HTML of request r's
// e-mail as it leaves at sentAt, with an open pixel and its links
// rewritten when tracking applies to r (its campaign's, category's or
// workspace's setting, unless tracking is off everywhere); otherwise
// body unchanged. The text part is never touched (docs/DECISIONS.md
// "Email engagement"). A settings read that fails leaves the mail
// untracked rather than delaying it.
func (s *Service) Instrument(ctx context.Context, r *notify.Request, ch notify.Channel, body string, sentAt time.Time) string {
	if s.off || ch != notify.ChannelEmail || body == "" || r == nil {
		return body
	}
	opens, clicks, err := s.Decide(ctx, r.WorkspaceID, r.Category, r.CampaignID)
	if err != nil {
		s.Log.WarnContext(ctx, "tracking settings unavailable; mail sent untracked", "workspace", r.WorkspaceID, "err", err)
		return body
	}
	if !opens && !clicks {
		return body
	}
	l := link{workspaceID: r.WorkspaceID, requestID: r.ID, campaignID: r.CampaignID, sentAt: sentAt}
	pixel := ""
	if opens {
		o := l
		o.kind = 'o'
		pixel = `<img src="` + s.baseURL + OpenPath + s.sign(o) + `" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0">`
	}
	if clicks {
		return s.rewriteLinks(body, l, pixel)
	}
	return withPixel(body, pixel)
}

// withPixel puts pixel before the body's last </body>, or at its end.
func withPixel(body, pixel string) string {
	if pixel == "" {
		return body
	}
	if i := lastBodyClose(body); i >= 0 {
		return body[:i] + pixel + body[i:]
	}
	return body + pixel
}

// rewriteLinks rewrites the href of every <a> tag whose URL is http(s)
// to a click link naming its index among the rewritten ones, and adds
// pixel (when not "") as withPixel does, in the same pass when it can.
// Left alone: other schemes (mailto:, tel:, anchors), the service's own
// pages (unsubscribe, preferences: under the base URL), links marked
// data-notrack, and URLs over maxLinkURL.
func (s *Service) rewriteLinks(body string, l link, pixel string) string {
	var out strings.Builder
	last, index := 0, 0
	for i := 0; i < len(body); {
		j := strings.IndexByte(body[i:], '<')
		if j < 0 {
			break
		}
		i += j
		if i+2 >= len(body) || body[i+1]|0x20 != 'a' || !isSpace(body[i+2]) {
			i++
			continue
		}
		end, hs, he, notrack := scanTag(body, i+2)
		if hs >= 0 && !notrack {
			u := strings.TrimSpace(html.UnescapeString(body[hs:he]))
			if s.trackable(u) {
				if out.Len() == 0 {
					// Room for a few tokens and the pixel: a token is
					// about 150 bytes and the link's URL.
					out.Grow(len(body) + len(pixel) + 1024)
				}
				l.kind, l.index, l.url = 'c', index, u
				index++
				out.WriteString(body[last:hs])
				out.WriteString(s.baseURL + ClickPath + s.sign(l))
				last = he
			}
		}
		i = end
	}
	if last == 0 {
		return withPixel(body, pixel)
	}
	// The tail from the last rewritten link is copied as it is; when the
	// last </body> is in it, it is the output's last too (a token holds
	// none), so the pixel goes in while copying.
	if k := lastBodyClose(body); pixel != "" && k >= last {
		out.WriteString(body[last:k])
		out.WriteString(pixel)
		out.WriteString(body[k:])
		return out.String()
	}
	out.WriteString(body[last:])
	return withPixel(out.String(), pixel)
}

// trackable reports whether u is a link to rewrite.
func (s *Service) trackable(u string) bool {
	if len(u) > maxLinkURL || len(u) < 8 {
		return false
	}
	lower := strings.ToLower(u[:8])
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return false
	}
	for i := 0; i < len(u); i++ {
		if u[i] < 0x20 || u[i] == 0x7f {
			return false // no header could carry it to the redirect
		}
	}
	return !strings.HasPrefix(u, s.baseURL+"/")
}

// scanTag reads the attributes of a tag from i (after its name) to its
// '>': it answers the index after the tag, the span of the href value
// (hs < 0 when none) and whether a data-notrack attribute is present.
func scanTag(b string, i int) (end, hs, he int, notrack bool) {
	hs, he = -1, -1
	for i < len(b) {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i >= len(b) {
			break
		}
		if b[i] == '>' {
			return i + 1, hs, he, notrack
		}
		if b[i] == '/' {
			i++
			continue
		}
		ns := i
		for i < len(b) && !isSpace(b[i]) && b[i] != '=' && b[i] != '>' && b[i] != '/' {
			i++
		}
		name := strings.ToLower(b[ns:i])
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		vs, ve := -1, -1
		if i < len(b) && b[i] == '=' {
			i++
			for i < len(b) && isSpace(b[i]) {
				i++
			}
			if i < len(b) && (b[i] == '"' || b[i] == '\'') {
				q := b[i]
				i++
				vs = i
				k := strings.IndexByte(b[i:], q)
				if k < 0 {
					return len(b), -1, -1, notrack // unterminated: leave the tag alone
				}
				i += k
				ve = i
				i++
			} else {
				vs = i
				for i < len(b) && !isSpace(b[i]) && b[i] != '>' {
					i++
				}
				ve = i
			}
		}
		switch name {
		case "href":
			if hs < 0 && vs >= 0 {
				hs, he = vs, ve
			}
		case "data-notrack":
			notrack = true
		}
	}
	return len(b), hs, he, notrack
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// lastBodyClose finds the last "</body>" in any letter case.
func lastBodyClose(s string) int {
	for i := strings.LastIndex(s, "</"); i >= 0; i = strings.LastIndex(s[:i], "</") {
		if len(s)-i >= 7 && strings.EqualFold(s[i:i+7], "</body>") {
			return i
		}
	}
	return -1
}
