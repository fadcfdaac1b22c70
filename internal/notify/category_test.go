package notify

import "testing"

// prefs builds Preferences from a channel map and category maps.
func prefs(chans map[Channel]bool, cats map[string]map[Channel]bool) *Preferences {
	return &Preferences{Channels: chans, Categories: cats}
}

// TestDecidePreference walks the precedence rule by rule: each case has
// an answer at its own level and a contrary one at every level below, so
// a rule taken out of order fails.
func TestDecidePreference(t *testing.T) {
	t.Parallel()
	mkt := &Category{Key: "marketing", DefaultChannels: []Channel{ChannelEmail}}
	sec := &Category{Key: "security", Required: true}
	plain := &Category{Key: "news"}
	sms, email, push := ChannelSMS, ChannelEmail, ChannelPush
	cases := []struct {
		name    string
		cat     *Category
		ch      Channel
		rp, def *Preferences
		want    PreferenceDecision
	}{
		{"nothing at all: allowed", nil, sms, nil, nil, PreferenceDecision{true, RuleDefault}},
		{"empty documents: allowed", nil, sms, prefs(nil, nil), prefs(map[Channel]bool{}, map[string]map[Channel]bool{}),
			PreferenceDecision{true, RuleDefault}},
		{"a category without defaults: allowed", plain, push, nil, nil, PreferenceDecision{true, RuleDefault}},

		// 1. required ignores every opt-out.
		{"required over every opt-out", sec, sms,
			prefs(map[Channel]bool{sms: false}, map[string]map[Channel]bool{"security": {sms: false}}),
			prefs(map[Channel]bool{sms: false}, map[string]map[Channel]bool{"security": {sms: false}}),
			PreferenceDecision{true, RuleRequired}},

		// 2. the recipient's category × channel.
		{"recipient category off over channel on", mkt, sms,
			prefs(map[Channel]bool{sms: true}, map[string]map[Channel]bool{"marketing": {sms: false}}),
			prefs(map[Channel]bool{sms: true}, map[string]map[Channel]bool{"marketing": {sms: true}}),
			PreferenceDecision{false, RuleRecipientCategoryChannel}},
		{"recipient category on over channel off and category defaults", mkt, sms,
			prefs(map[Channel]bool{sms: false}, map[string]map[Channel]bool{"marketing": {sms: true}}),
			prefs(map[Channel]bool{sms: false}, map[string]map[Channel]bool{"marketing": {sms: false}}),
			PreferenceDecision{true, RuleRecipientCategoryChannel}},

		// 3. the recipient's channel switch.
		{"recipient channel off", plain, sms,
			prefs(map[Channel]bool{sms: false}, map[string]map[Channel]bool{"marketing": {sms: true}, "news": {email: true}}),
			prefs(map[Channel]bool{sms: true}, map[string]map[Channel]bool{"news": {sms: true}}),
			PreferenceDecision{false, RuleRecipientChannel}},
		{"recipient channel on over the workspace and the category defaults", mkt, sms,
			prefs(map[Channel]bool{sms: true}, nil),
			prefs(map[Channel]bool{sms: false}, map[string]map[Channel]bool{"marketing": {sms: false}}),
			PreferenceDecision{true, RuleRecipientChannel}},
		{"recipient channel off without a category", nil, sms, prefs(map[Channel]bool{sms: false}, nil), nil,
			PreferenceDecision{false, RuleRecipientChannel}},

		// 4. the workspace default category × channel.
		{"workspace category off", plain, email,
			prefs(map[Channel]bool{sms: false}, map[string]map[Channel]bool{"news": {sms: true}}),
			prefs(map[Channel]bool{email: true}, map[string]map[Channel]bool{"news": {email: false}}),
			PreferenceDecision{false, RuleWorkspaceCategoryChannel}},
		{"workspace category on over category defaults", mkt, sms, nil,
			prefs(map[Channel]bool{sms: false}, map[string]map[Channel]bool{"marketing": {sms: true}}),
			PreferenceDecision{true, RuleWorkspaceCategoryChannel}},

		// 5. the workspace default channel switch.
		{"workspace channel off", plain, push, prefs(map[Channel]bool{sms: true}, nil),
			prefs(map[Channel]bool{push: false}, map[string]map[Channel]bool{"marketing": {push: true}}),
			PreferenceDecision{false, RuleWorkspaceChannel}},
		{"workspace channel on over category defaults", mkt, push, nil, prefs(map[Channel]bool{push: true}, nil),
			PreferenceDecision{true, RuleWorkspaceChannel}},
		{"workspace channel off without a category", nil, push, nil, prefs(map[Channel]bool{push: false}, nil),
			PreferenceDecision{false, RuleWorkspaceChannel}},

		// 6. the category's default channels.
		{"not among the category's default channels", mkt, sms, prefs(map[Channel]bool{email: false}, nil),
			prefs(map[Channel]bool{email: true}, nil), PreferenceDecision{false, RuleCategoryDefaultChannels}},
		{"among the category's default channels", mkt, email, nil, nil, PreferenceDecision{true, RuleCategoryDefaultChannels}},

		// Choices for another category or channel do not count.
		{"another category's choice", plain, sms, prefs(nil, map[string]map[Channel]bool{"marketing": {sms: false}}), nil,
			PreferenceDecision{true, RuleDefault}},
		{"a category choice needs a category", nil, sms, prefs(nil, map[string]map[Channel]bool{"": {sms: false}}), nil,
			PreferenceDecision{true, RuleDefault}},
		{"another channel's switch", plain, sms, prefs(map[Channel]bool{email: false}, map[string]map[Channel]bool{"news": {push: false}}),
			prefs(map[Channel]bool{push: false}, nil), PreferenceDecision{true, RuleDefault}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := DecidePreference(c.cat, c.ch, c.rp, c.def); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			sp := &SendPreferences{Category: c.cat, Recipient: c.rp, Default: c.def}
			if got := sp.Decide(c.ch); got != c.want {
				t.Errorf("SendPreferences.Decide: got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestDecidePreferenceRules: the rule names are the strings recorded on
// requests and in explanations; they must not change.
func TestDecidePreferenceRules(t *testing.T) {
	t.Parallel()
	for got, want := range map[PreferenceRule]string{
		RuleRequired: "required", RuleRecipientCategoryChannel: "recipient.category_channel",
		RuleRecipientChannel: "recipient.channel", RuleWorkspaceCategoryChannel: "workspace.category_channel",
		RuleWorkspaceChannel: "workspace.channel", RuleCategoryDefaultChannels: "category.default_channels", RuleDefault: "default",
	} {
		if string(got) != want {
			t.Errorf("rule %q, want %q", got, want)
		}
	}
}

// TestDecidePreferenceReadmeExample pins the worked example of README.md
// "Categories and preferences".
func TestDecidePreferenceReadmeExample(t *testing.T) {
	t.Parallel()
	mkt := &Category{Key: "marketing", Advertising: true, DefaultChannels: []Channel{ChannelEmail, ChannelPush}}
	sec := &Category{Key: "security", Required: true}
	news := &Category{Key: "news"}
	u42 := prefs(map[Channel]bool{ChannelSMS: false},
		map[string]map[Channel]bool{"marketing": {ChannelSMS: true, ChannelPush: false}})
	for _, c := range []struct {
		cat  *Category
		ch   Channel
		rp   *Preferences
		want PreferenceDecision
	}{
		{mkt, ChannelSMS, u42, PreferenceDecision{true, RuleRecipientCategoryChannel}},
		{mkt, ChannelEmail, u42, PreferenceDecision{true, RuleCategoryDefaultChannels}},
		{mkt, ChannelPush, u42, PreferenceDecision{false, RuleRecipientCategoryChannel}},
		{news, ChannelSMS, u42, PreferenceDecision{false, RuleRecipientChannel}},
		{sec, ChannelSMS, u42, PreferenceDecision{true, RuleRequired}},
		{mkt, ChannelSMS, nil, PreferenceDecision{false, RuleCategoryDefaultChannels}},
		{mkt, ChannelPush, nil, PreferenceDecision{true, RuleCategoryDefaultChannels}},
	} {
		if got := DecidePreference(c.cat, c.ch, c.rp, nil); got != c.want {
			t.Errorf("%s on %s: got %+v, want %+v", c.cat.Key, c.ch, got, c.want)
		}
	}
}
