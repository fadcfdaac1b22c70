package usecase

import (
	"context"
	"net/mail"
	"strings"

	"github.com/notifyd/notifyd/internal/mailcheck"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
)

// An e-mail account's from-address and the sending identities that cover
// it: the identities room shows it, and a test-send that the vendor
// refused names it as the likely cause.

// fromKeys are the configJson keys of each e-mail kind's from-address.
var fromKeys = map[string]string{KindResend: "mailx_from_email", KindSES: "maily_from_email", KindPostmark: "mailz_from_email"}

// SenderStatus says whether the account's from-address is a verified
// address identity or lies on a verified domain identity.
type SenderStatus struct {
	Address    string // the configured from-address; empty when none is set
	Verified   bool
	IdentityID string // the verified identity that covers it
	Warning    string // why a send from it may be refused; empty when verified
}

// SenderStatusOf matches the account's from-address against its verified
// identities: the address itself, or its domain.
func SenderStatusOf(box *secret.Box, p *notify.ProviderAccount, ids []*notify.SendingIdentity) (SenderStatus, error) {
	key, ok := fromKeys[p.ProviderKind]
	if !ok {
		return SenderStatus{}, nil
	}
	cfg, err := OpenProviderConfig(box, p)
	if err != nil {
		return SenderStatus{}, err
	}
	raw := strings.TrimSpace(cfg[key])
	if raw == "" {
		return SenderStatus{}, nil
	}
	addr := raw
	if m, err := mail.ParseAddress(raw); err == nil { // Resend takes "Name <addr>"
		addr = m.Address
	}
	addr = mailcheck.Normalize(addr)
	st := SenderStatus{Address: addr}
	domain := addr[strings.LastIndexByte(addr, '@')+1:]
	for _, x := range ids {
		if x.Status != notify.IdentityVerified {
			continue
		}
		if (x.Type == notify.IdentityEmailAddress && x.Name == addr) || (x.Type == notify.IdentityDomain && x.Name == domain) {
			st.Verified, st.IdentityID = true, x.ID
			return st, nil
		}
	}
	st.Warning = key + " " + addr + " is neither a verified address nor on a verified domain of this provider, so the vendor may refuse to send from it: " +
		"verify it (POST /v1/providers/" + p.ID + "/identities/email-addresses) or connect its domain (POST /v1/providers/" + p.ID + "/identities/domains)"
	return st, nil
}

// SenderWarning is the warning about the from-address of the e-mail
// provider account providerID of workspace ws; empty when it is verified
// or the account is not an e-mail account; an unknown account is 404.
func SenderWarning(ctx context.Context, store notify.Store, box *secret.Box, ws, providerID string) (string, error) {
	var st SenderStatus
	err := store.View(ctx, func(tx notify.Tx) error {
		p, err := tx.FindProviderAccount(ctx, ws, providerID)
		if err != nil || p.Channel != notify.ChannelEmail {
			return NotFound(err, "Provider")
		}
		ids, err := tx.FindSendingIdentities(ctx, ws, p.ID)
		if err != nil {
			return err
		}
		st, err = SenderStatusOf(box, p, ids)
		return err
	})
	return st.Warning, err
}
