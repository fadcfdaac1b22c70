package recipients

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/compose"
	"github.com/notifyd/notifyd/internal/mailcheck"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/otp"
	"github.com/notifyd/notifyd/internal/sendwindow"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Bounds of a profile (docs/DECISIONS.md, "Recipients").
const (
	MaxExternalID = notify.MaxExternalID
	MaxName       = 120 // SPEC's recipient.name
	MaxAddress    = 320 // SPEC's recipient.address, for every address of a profile
	MaxPushTokens = 10
	MaxTimeZone   = 64
	MaxSearch     = 320
	MaxBulk       = 1000
)

// ChatChannels are the channels whose target a profile may hold: the bot
// channels, which send to the channel named in the recipient's address.
// The webhook channels send to their provider's URL and have no
// per-person target.
var ChatChannels = []notify.Channel{notify.ChannelChatABot, notify.ChannelChatBBot}

// Fields are the fields of a profile as a caller gives them. On a put
// (and a bulk item) every field is written: nil is empty. On a patch nil
// keeps the stored value; an empty value (the API's null) clears it.
type Fields struct {
	Name        *string
	Phone       *string
	Email       *string
	PushTokens  *[]string
	ChatTargets *map[string]string
	TimeZone    *string
	Locale      *string
	Attributes  *map[string]string
}

// names lists the JSON names of the fields present, for the audit log
// (which never holds the values: an erased profile leaves no address).
func (in Fields) names() []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"name", in.Name != nil}, {"phone", in.Phone != nil}, {"email", in.Email != nil},
		{"pushTokens", in.PushTokens != nil}, {"chatTargets", in.ChatTargets != nil}, {"timeZone", in.TimeZone != nil},
		{"locale", in.Locale != nil}, {"attributes", in.Attributes != nil},
	} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// CheckExternalID holds an external id to notify.CheckExternalID's rule.
func CheckExternalID(field, id string) error { return notify.CheckExternalID(field, id) }

// address checks one address of a profile as a send checks
// recipient.address (usecase.CheckAddress: the channel's format, one
// line, SPEC's 320 characters) and returns it trimmed.
func address(field string, ch notify.Channel, v string) (string, error) {
	if err := usecase.ValidText(field, v); err != nil {
		return "", err
	}
	v = strings.TrimSpace(v)
	if err := usecase.MaxLen(field, v, MaxAddress); err != nil {
		return "", err
	}
	if err := usecase.OneLine(field, v); err != nil {
		return "", err
	}
	if v == "" {
		return "", nil
	}
	return v, usecase.CheckAddress(field, ch, v)
}

// CheckTimeZone accepts an IANA time zone name that time.LoadLocation
// knows (the zone database is embedded), but "Local", which names the
// server's zone, not a person's.
func CheckTimeZone(field, tz string) error {
	bad := notify.Invalid("%s must be an IANA time zone such as Asia/Seoul or America/New_York", field)
	if len(tz) > MaxTimeZone || tz == "Local" || !usecase.Storable(tz) {
		return bad
	}
	if _, err := sendwindow.Zone(tz); err != nil {
		return bad
	}
	return nil
}

// apply checks in, field by field, and writes what it gives onto r;
// prefix names a bulk item ("items[3].").
func apply(r *notify.Recipient, in Fields, prefix string) error {
	f := func(name string) string { return prefix + name }
	if in.Name != nil {
		v := *in.Name
		if err := usecase.ValidText(f("name"), v); err != nil {
			return err
		}
		if err := usecase.MaxLen(f("name"), v, MaxName); err != nil {
			return err
		}
		if err := usecase.OneLine(f("name"), v); err != nil {
			return err
		}
		r.Name = strings.TrimSpace(v)
	}
	if in.Phone != nil {
		v, err := address(f("phone"), notify.ChannelSMS, *in.Phone)
		if err != nil {
			return err
		}
		r.Phone = otp.NormalizePhone(v)
	}
	if in.Email != nil {
		v, err := address(f("email"), notify.ChannelEmail, *in.Email)
		if err != nil {
			return err
		}
		r.Email = mailcheck.Normalize(v)
	}
	if in.PushTokens != nil {
		tokens, err := pushTokens(f("pushTokens"), *in.PushTokens)
		if err != nil {
			return err
		}
		r.PushTokens = tokens
	}
	if in.ChatTargets != nil {
		targets, err := chatTargets(f("chatTargets"), *in.ChatTargets)
		if err != nil {
			return err
		}
		r.ChatTargets = targets
	}
	if in.TimeZone != nil {
		v := strings.TrimSpace(*in.TimeZone)
		if v != "" {
			if err := CheckTimeZone(f("timeZone"), v); err != nil {
				return err
			}
		}
		r.TimeZone = v
	}
	if in.Locale != nil {
		v := strings.TrimSpace(*in.Locale)
		if v != "" {
			canon, err := compose.ParseLocale(f("locale"), v)
			if err != nil {
				return err
			}
			v = canon
		}
		r.Locale = v
	}
	if in.Attributes != nil {
		if err := usecase.CheckAttributes(f("attributes"), *in.Attributes); err != nil {
			return err
		}
		r.Attributes = maps.Clone(*in.Attributes)
		if r.Attributes == nil {
			r.Attributes = map[string]string{}
		}
	}
	return nil
}

// pushTokens checks each token as a push_mobile address; a token given
// twice is kept once, at its first place.
func pushTokens(field string, in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	for i, v := range in {
		name := field + "[" + strconv.Itoa(i) + "]"
		tok, err := address(name, notify.ChannelPush, v)
		if err != nil {
			return nil, err
		}
		if tok == "" {
			return nil, notify.Invalid("%s must not be empty", name)
		}
		if !slices.Contains(out, tok) {
			out = append(out, tok)
		}
	}
	if len(out) > MaxPushTokens {
		return nil, notify.Invalid("%s must hold at most %d tokens", field, MaxPushTokens)
	}
	return out, nil
}

// chatTargets checks the bot channels' targets; an empty target is no
// target.
func chatTargets(field string, in map[string]string) (map[notify.Channel]string, error) {
	out := make(map[notify.Channel]string, len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		ch := notify.Channel(k)
		if !slices.Contains(ChatChannels, ch) {
			return nil, notify.Invalid("%s keys must be chata_bot or chatb_bot", field)
		}
		v, err := address(field+"."+k, ch, in[k])
		if err != nil {
			return nil, err
		}
		if v != "" {
			out[ch] = v
		}
	}
	return out, nil
}

// blank is a profile with no field, ready for a put.
func blank(ws, externalID string, now time.Time) *notify.Recipient {
	return &notify.Recipient{ID: usecase.NewID(), WorkspaceID: ws, ExternalID: externalID, PushTokens: []string{},
		ChatTargets: map[notify.Channel]string{}, Attributes: map[string]string{}, CreatedAt: now, UpdatedAt: now}
}
