package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// The sending identities of e-mail provider accounts (addresses and
// domains asked of the vendor), kept per workspace and account.

func testSendingIdentities(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"CreateSendingIdentity", testCreateSendingIdentity, perWorkspace},
		{"FindSendingIdentity", testFindSendingIdentity, perWorkspace},
		{"FindSendingIdentities", testFindSendingIdentities, perWorkspace},
		{"UpdateSendingIdentity", testUpdateSendingIdentity, perWorkspace},
	})
}

type identitySet struct {
	ws, other string
	// p and q are accounts of ws; foreign is other's.
	p, q, foreign *notify.ProviderAccount
}

func identityFixture(t *testing.T, db *store.DB) *identitySet {
	s := &identitySet{ws: Workspace(t, db), other: Workspace(t, db)}
	s.p, s.q = emailProvider(t, db, s.ws, "vendora_email"), emailProvider(t, db, s.ws, "vendorb_email")
	s.foreign = emailProvider(t, db, s.other, "vendora_email")
	return s
}

func newIdentity(p *notify.ProviderAccount, typ, name string, at time.Time) *notify.SendingIdentity {
	return &notify.SendingIdentity{ID: id(), WorkspaceID: p.WorkspaceID, ProviderAccountID: p.ID, Type: typ, Name: name,
		Status: notify.IdentityPending, Origin: "verify", CreatedAt: at, UpdatedAt: at, CheckedAt: at}
}

func createIdentity(t *testing.T, db *store.DB, s *notify.SendingIdentity) {
	t.Helper()
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateSendingIdentity(ctx, s) })
}

// findIdentity reads an identity back, nil when not found.
func findIdentity(t *testing.T, db *store.DB, ws, account, id string) *notify.SendingIdentity {
	t.Helper()
	var got *notify.SendingIdentity
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		s, err := tx.FindSendingIdentity(ctx, ws, account, id)
		if notify.IsNotFound(err) {
			return nil
		}
		got = s
		return err
	})
	return got
}

// testCreateSendingIdentity: every field round-trips (no records read
// back empty, not nil); one account tracks a type and name once, while
// another account, or the other type, may have the same name.
func testCreateSendingIdentity(t *testing.T, db *store.DB) {
	s := identityFixture(t, db)
	verified := t0.Add(time.Minute)
	dom := newIdentity(s.p, notify.IdentityDomain, "example.com", t0)
	dom.VendorID, dom.Status, dom.Origin, dom.MailFromDomain, dom.SPFInclude = "v-1", notify.IdentityVerified, "connect", "mail.example.com", "amazonses.com"
	dom.Records = []notify.DNSRecord{
		{Purpose: "dkim", Type: "CNAME", Name: "k1._domainkey.example.com", Value: "k1.dkim.vendor.test"},
		{Purpose: "mail_from_mx", Type: "MX", Name: "mail.example.com", Value: "feedback.vendor.test", Priority: 10},
	}
	dom.CheckedAt, dom.VerifiedAt = t0.Add(time.Second), &verified
	addr := newIdentity(s.p, notify.IdentityEmailAddress, "a@example.com", t0)
	createIdentity(t, db, dom)
	createIdentity(t, db, addr)
	require.Equal(t, dom, findIdentity(t, db, s.ws, s.p.ID, dom.ID))
	want := *addr
	want.Records = []notify.DNSRecord{}
	require.Equal(t, &want, findIdentity(t, db, s.ws, s.p.ID, addr.ID))

	conflict(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateSendingIdentity(ctx, newIdentity(s.p, notify.IdentityDomain, "example.com", t0))
	})
	createIdentity(t, db, newIdentity(s.q, notify.IdentityDomain, "example.com", t0))
	createIdentity(t, db, newIdentity(s.foreign, notify.IdentityDomain, "example.com", t0))
	createIdentity(t, db, newIdentity(s.p, notify.IdentityEmailAddress, "example.com", t0))
}

// testFindSendingIdentity: an identity is found only under its own
// workspace and account.
func testFindSendingIdentity(t *testing.T, db *store.DB) {
	s := identityFixture(t, db)
	addr := newIdentity(s.p, notify.IdentityEmailAddress, "a@example.com", t0)
	createIdentity(t, db, addr)
	require.Equal(t, addr.ID, findIdentity(t, db, s.ws, s.p.ID, addr.ID).ID)
	require.Nil(t, findIdentity(t, db, s.other, s.p.ID, addr.ID), "another workspace")
	require.Nil(t, findIdentity(t, db, s.other, s.foreign.ID, addr.ID), "another workspace's account")
	require.Nil(t, findIdentity(t, db, s.ws, s.q.ID, addr.ID), "another account of the workspace")
	require.Nil(t, findIdentity(t, db, s.ws, s.p.ID, id()), "an unknown id")
}

// testFindSendingIdentities: an account's identities, oldest first (the
// id breaks a tie), none of another account or workspace.
func testFindSendingIdentities(t *testing.T, db *store.DB) {
	s := identityFixture(t, db)
	late := newIdentity(s.p, notify.IdentityDomain, "late.example.com", t0.Add(time.Hour))
	first := newIdentity(s.p, notify.IdentityEmailAddress, "first@example.com", t0)
	second := newIdentity(s.p, notify.IdentityEmailAddress, "second@example.com", t0)
	for _, i := range []*notify.SendingIdentity{late, second, first,
		newIdentity(s.q, notify.IdentityDomain, "q.example.com", t0),
		newIdentity(s.foreign, notify.IdentityDomain, "f.example.com", t0)} {
		createIdentity(t, db, i)
	}
	list := func(ws, account string) []string {
		var names []string
		view(t, db, func(ctx context.Context, tx notify.Tx) error {
			all, err := tx.FindSendingIdentities(ctx, ws, account)
			for _, i := range all {
				names = append(names, i.Name)
			}
			return err
		})
		return names
	}
	tied := []string{first.Name, second.Name}
	if first.ID > second.ID {
		tied = []string{second.Name, first.Name}
	}
	require.Equal(t, append(tied, late.Name), list(s.ws, s.p.ID))
	require.Equal(t, []string{"q.example.com"}, list(s.ws, s.q.ID))
	require.Empty(t, list(s.other, s.p.ID), "another workspace lists none of the account's")
	require.Empty(t, list(s.ws, s.foreign.ID), "nor the other workspace's account")
}

// testUpdateSendingIdentity: the vendor state is saved (records, dates,
// verified cleared again) while the identity's type, name, origin and
// creation stay; an update aimed at another workspace or account is
// ErrNotFound and changes nothing.
func testUpdateSendingIdentity(t *testing.T, db *store.DB) {
	s := identityFixture(t, db)
	dom := newIdentity(s.p, notify.IdentityDomain, "example.com", t0)
	createIdentity(t, db, dom)
	verified := t0.Add(time.Hour)
	up := *dom
	up.Type, up.Name, up.Origin, up.CreatedAt = notify.IdentityEmailAddress, "changed.example.com", "adopt", t0.Add(time.Hour)
	up.VendorID, up.Status, up.MailFromDomain, up.SPFInclude = "v-9", notify.IdentityVerified, "bounce.example.com", "spf.vendor.test"
	up.Records = []notify.DNSRecord{{Purpose: "verification", Type: "TXT", Name: "_vendor.example.com", Value: "token"}}
	up.UpdatedAt, up.CheckedAt, up.VerifiedAt = t0.Add(time.Hour), t0.Add(time.Hour), &verified
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.UpdateSendingIdentity(ctx, &up) })
	want := up
	want.Type, want.Name, want.Origin, want.CreatedAt = dom.Type, dom.Name, dom.Origin, dom.CreatedAt
	require.Equal(t, &want, findIdentity(t, db, s.ws, s.p.ID, dom.ID))

	failed := want
	failed.Status, failed.VerifiedAt, failed.Records, failed.UpdatedAt = notify.IdentityFailed, nil, nil, t0.Add(2*time.Hour)
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.UpdateSendingIdentity(ctx, &failed) })
	got := findIdentity(t, db, s.ws, s.p.ID, dom.ID)
	require.Nil(t, got.VerifiedAt)
	require.Equal(t, []notify.DNSRecord{}, got.Records)
	require.Equal(t, notify.IdentityFailed, got.Status)

	for name, aim := range map[string]func(*notify.SendingIdentity){
		"another workspace":                func(i *notify.SendingIdentity) { i.WorkspaceID = s.other },
		"another workspace's account":      func(i *notify.SendingIdentity) { i.WorkspaceID, i.ProviderAccountID = s.other, s.foreign.ID },
		"another account of the workspace": func(i *notify.SendingIdentity) { i.ProviderAccountID = s.q.ID },
		"an unknown id":                    func(i *notify.SendingIdentity) { i.ID = id() },
	} {
		wrong := *got
		wrong.Status, wrong.VendorID = notify.IdentityVerified, "hijacked"
		aim(&wrong)
		update(t, db, func(ctx context.Context, tx notify.Tx) error {
			require.ErrorIs(t, tx.UpdateSendingIdentity(ctx, &wrong), notify.ErrNotFound, name)
			return nil
		})
	}
	require.Equal(t, got, findIdentity(t, db, s.ws, s.p.ID, dom.ID), "nothing changed")
}
