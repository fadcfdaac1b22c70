package providertest

import (
	"net/mail"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/kinds"
)

// TestFromNames: display names, ASCII with specials or not, reach each
// mail vendor in a form it accepts. SES wants non-ASCII names RFC
// 2047-encoded (the simulator records them decoded); Postmark and Resend
// take UTF-8. Postmark's From has a built-in default name.
func TestFromNames(t *testing.T) {
	t.Parallel()
	names := []string{"알림 서비스", "Notifyd", "Notifyd, Inc.", `Say "hi"`, "Café Crème", "a.b"}
	type tc struct {
		kind, key, name, wantFrom string
	}
	var tcs []tc
	for _, n := range names {
		tcs = append(tcs,
			tc{"maily_email", "maily_from_name", n, n + " <" + mailFrom + ">"},
			tc{"mailz_email", "mailz_from_name", n, n + " <" + mailFrom + ">"},
		)
	}
	tcs = append(tcs,
		tc{"mailz_email", "mailz_from_name", "", "notifyd <" + mailFrom + ">"},
		tc{"maily_email", "maily_from_name", "", mailFrom},
		tc{"mailx_email", "mailx_from_email", mailFrom, mailFrom},
		tc{"mailx_email", "mailx_from_email", "알림 서비스 <" + mailFrom + ">", "알림 서비스 <" + mailFrom + ">"},
	)
	for _, c := range tcs {
		t.Run(c.kind+"/"+c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			cfg := e.config(c.kind)
			cfg[c.key] = c.name
			if c.name == "" {
				delete(cfg, c.key)
			}
			p, err := kinds.All()[c.kind].New(cfg, provider.Deps{HTTP: provider.NewHTTPClient(provider.HTTPOptions{AllowPrivate: true})})
			require.NoError(t, err)
			m := emailMsg(1)
			res := send(t, p, m)
			require.Nil(t, res[0].Err, "%v", res[0].Err)
			got := e.sim.Messages(c.kind, m.To, 0)
			require.Len(t, got, 1)
			from := got[0].Headers["From"]
			if c.kind == "mailz_email" {
				// Postmark's From is recorded as sent: compare it parsed.
				a, err := mail.ParseAddress(from)
				require.NoError(t, err, from)
				from = a.Address
				if a.Name != "" {
					from = a.Name + " <" + a.Address + ">"
				}
			}
			require.Equal(t, c.wantFrom, from)
		})
	}
}
