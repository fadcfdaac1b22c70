// Package storetest is the store conformance suite: every notify.Tx verb,
// pinned once and run on each backend (River's riverdrivertest pattern).
package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
	"github.com/notifyd/notifyd/internal/store/testdb"
)

// Opener opens a fresh, migrated database for one test.
type Opener func(t testing.TB) *store.DB

// Run runs the whole suite against open.
func Run(t *testing.T, open Opener) {
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, open)
		})
	}
}

// RunAll runs the suite on every backend configured for this test run.
func RunAll(t *testing.T) {
	for name, url := range testdb.Backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			Run(t, func(t testing.TB) *store.DB { return testdb.OpenDB(t, url(t)) })
		})
	}
}

// tests is the one table of conformance tests, grouped by the file that
// holds them. A test opens the databases it needs: oneDB gives a short one
// a fresh database; a longer one runs a subtest per store verb (River's
// Exercise shape), each on data of its own, so a failure names the verb.
var tests = map[string]func(t *testing.T, open Opener){
	"Workspace":             oneDB(testWorkspace),
	"UserAndMembers":        oneDB(testUserAndMembers),
	"Sessions":              oneDB(testSessions),
	"APIKeys":               oneDB(testAPIKeys),
	"Nonces":                oneDB(testNonces),
	"Audit":                 oneDB(testAudit),
	"ProvidersRoutes":       oneDB(testProvidersRoutes),
	"RollbackLeavesNil":     oneDB(testRollback),
	"BatchIsolatesFailures": oneDB(testBatch),
	"AcceptRollback":        oneDB(testAcceptRollback),
	"Limits":                testLimits,
	"LockRateCount":         oneDB(testLockRateCount),
	"RateCountsMany":        oneDB(testRateCountsMany),
	"OTP":                   testOTP,

	// job.go
	"FindJob":             oneDB(testFindJob),
	"UpdateJob":           oneDB(testUpdateJob),
	"CancelScheduledWork": oneDB(testCancelScheduledWork),
	"LockWorkspace":       oneDB(testLockWorkspace),

	// auth.go
	"LoginCounters":           oneDB(testLoginCounters),
	"LoginCountersConcurrent": oneDB(testLoginCountersConcurrent),
	"SessionsOfUser":          oneDB(testSessionsOfUser),

	// campaign.go
	"Campaigns":       testCampaigns,
	"CampaignFanout":  testCampaignFanout,
	"AcceptManyPlain": oneDB(testAcceptManyPlain),

	// campaignhold.go
	"CampaignPausedRequests":     oneDB(testCampaignPausedRequests),
	"LockQueuedCampaignRequests": oneDB(testLockQueuedCampaignRequests),
	"CampaignRetryFailed":        testCampaignRetryFailed,

	// deadletter.go
	"ReplayDeadLetters":           oneDB(testReplayDeadLetters),
	"ReplayDeadLettersConcurrent": oneDB(testReplayDeadLettersConcurrent),
	"CreateAudits":                oneDB(testCreateAudits),

	// delivery.go
	"DeliveryClaim":    oneDB(testDeliveryClaim),
	"DeliverySettle":   testDeliverySettle,
	"DeliveryBreakers": oneDB(testDeliveryBreakers),
	"DeliveryMany":     oneDB(testDeliveryMany),
	"OpenJobs":         oneDB(testOpenJobs),

	// crash.go
	"RescueCountsCrashes":  oneDB(testRescueCountsCrashes),
	"IsolateDispatch":      oneDB(testIsolateDispatch),
	"FindRunningQueueJobs": oneDB(testFindRunningQueueJobs),

	// dispatchworker.go
	"DispatchWorkers": oneDB(testDispatchWorkers),

	// fraudguard.go
	"OTPFraudGuard":            oneDB(testOTPFraudGuard),
	"OTPFraudCountsConcurrent": oneDB(testOTPFraudCountsConcurrent),

	// identity.go
	"SendingIdentities": testSendingIdentities,

	// inboundhook.go
	"InboundHooks": oneDB(testInboundHooks),

	// workflow.go
	"Workflows":                oneDB(testWorkflows),
	"WorkflowDigestConcurrent": oneDB(testWorkflowDigestConcurrent),

	// invitation.go
	"Invitations": testInvitations,

	// layout.go
	"Layouts": testLayouts,

	// lifecycle.go
	"UpdateUrgent": oneDB(testUpdateUrgent),
	"Ping":         oneDB(testPing),
	"Close":        oneDB(testClose),

	// limit.go
	"DispatchTarget": oneDB(testDispatchTarget),

	// nonces.go
	"UseNonces":           oneDB(testUseNonces),
	"UseNoncesMany":       oneDB(testUseNoncesMany),
	"UseNoncesDuplicates": oneDB(testUseNoncesDuplicates),

	// optin.go
	"OptIn": oneDB(testOptIn),

	// outcomenote.go
	"OutcomeNotes": oneDB(testOutcomeNotes),

	// otp.go
	"OTPCleanup": oneDB(testOTPCleanup),

	// pipeline.go
	"Attempts":      oneDB(testAttempts),
	"DeadLetters":   oneDB(testDeadLetters),
	"Breakers":      oneDB(testBreakers),
	"CountActivity": oneDB(testCountActivity),

	// testmode.go
	"TestMode":    oneDB(testTestMode),
	"Templates":   oneDB(testTemplates),
	"LockRequest": oneDB(testLockRequest),

	// recipient.go
	"Recipients": testRecipients,
	"Inbox":      testInbox,
	"Receipts":   testReceipts,
	"Engagement": testEngagement,
	// category.go
	"Categories": testCategories,

	// requests.go
	"FindRequests":      oneDB(testFindRequests),
	"FindRequestsPages": oneDB(testFindRequestsPages),

	// rescue.go
	"RescueQueueJobs": oneDB(testRescueQueueJobs),

	// retention.go
	"PurgeRequests":   testPurgeRequests,
	"PurgeOther":      testPurgeOther,
	"PurgeConcurrent": oneDB(testPurgeConcurrent),

	// sealed.go
	"Sealed": oneDB(testSealed),

	// subscriber.go
	"Subscribers":                 testSubscribers,
	"SubscriberUpsert":            oneDB(testSubscriberUpsert),
	"LiftUnsubscribeSuppressions": oneDB(testLiftUnsubscribeSuppressions),
	"LockSubscriber":              oneDB(testLockSubscriber),

	// suppression.go
	"Suppressions":     oneDB(testSuppressions),
	"CallbackSecrets":  oneDB(testCallbackSecrets),
	"DeliveryFeedback": oneDB(testDeliveryFeedback),

	// webhook.go
	"Webhooks":      oneDB(testWebhooks),
	"WebhookOutbox": testWebhookOutbox,

	// fallback.go
	"ChannelFallback":           oneDB(testChannelFallback),
	"RequestRecipient":          oneDB(testRequestRecipient),
	"ChannelFallbackStoredOnce": oneDB(testChannelFallbackStoredOnce),

	// templateversion.go
	"TemplateVersions": testTemplateVersions,
}

// oneDB runs fn on one fresh database.
func oneDB(fn func(t *testing.T, db *store.DB)) func(t *testing.T, open Opener) {
	return func(t *testing.T, open Opener) { fn(t, open(t)) }
}

// A verb is one subtest of a feature test, named after the store verb it
// pins; it sets up its own data, so none depends on another.
type verb struct {
	name  string
	fn    func(t *testing.T, db *store.DB)
	scope scope
}

// scope says which database a verb's subtest runs on.
type scope bool

const (
	// perWorkspace: the verb reads one workspace's rows; the subtest
	// shares the test's database, on workspaces of its own.
	perWorkspace scope = false
	// allWorkspaces: the verb reads every workspace's rows (a purge, the
	// outbox); the subtest opens a database of its own.
	allWorkspaces scope = true
)

// runVerbs runs one subtest per verb, in order (River's Exercise shape).
func runVerbs(t *testing.T, open Opener, verbs []verb) {
	var shared *store.DB
	for _, v := range verbs {
		if v.scope == perWorkspace && shared == nil {
			shared = open(t)
		}
	}
	for _, v := range verbs {
		t.Run(v.name, func(t *testing.T) {
			db := shared
			if v.scope == allWorkspaces {
				db = open(t)
			}
			v.fn(t, db)
		})
	}
}

var t0 = time.Date(2026, 11, 22, 3, 25, 5, 123_000_000, time.UTC)

func id() string { return uuid.Must(uuid.NewV7()).String() }

func update(t *testing.T, db *store.DB, fn func(ctx context.Context, tx notify.Tx) error) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.Update(ctx, func(tx notify.Tx) error { return fn(ctx, tx) }))
}

func view(t *testing.T, db *store.DB, fn func(ctx context.Context, tx notify.Tx) error) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.View(ctx, func(tx notify.Tx) error { return fn(ctx, tx) }))
}

// conflict asserts that fn's transaction fails with ErrConflict. A verb
// that returns ErrConflict ends its transaction (PostgreSQL aborts it), so
// the conflicting call is always the last one.
func conflict(t *testing.T, db *store.DB, fn func(ctx context.Context, tx notify.Tx) error) {
	t.Helper()
	ctx := context.Background()
	require.ErrorIs(t, db.Update(ctx, func(tx notify.Tx) error { return fn(ctx, tx) }), notify.ErrConflict)
}

// Workspace makes a workspace and returns its id.
func Workspace(t *testing.T, db *store.DB) string {
	t.Helper()
	w := &notify.Workspace{ID: id(), Name: "ws", CreatedAt: t0, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateWorkspace(ctx, w) })
	return w.ID
}

func testWorkspace(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.UpdateWorkspaceName(ctx, ws, "renamed", t0.Add(time.Second))
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		w, err := tx.FindWorkspace(ctx, ws)
		require.NoError(t, err)
		require.Equal(t, "renamed", w.Name)
		require.Equal(t, t0, w.CreatedAt)
		require.Equal(t, t0.Add(time.Second), w.UpdatedAt)
		_, err = tx.FindWorkspace(ctx, id())
		require.ErrorIs(t, err, notify.ErrNotFound)
		n, err := tx.CountWorkspaces(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.ErrorIs(t, tx.UpdateWorkspaceName(ctx, id(), "x", t0), notify.ErrNotFound)
		return nil
	})
}

func testUserAndMembers(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	u := &notify.User{ID: id(), Email: "a@example.com", PasswordHash: "h", CreatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateUser(ctx, u) })
	conflict(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateUser(ctx, &notify.User{ID: id(), Email: u.Email, PasswordHash: "x", CreatedAt: t0})
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.SetUserPassword(ctx, u.ID, "h2"))
		require.NoError(t, tx.PutMember(ctx, &notify.Member{WorkspaceID: ws1, UserID: u.ID, Role: notify.RoleOwner, CreatedAt: t0}))
		require.NoError(t, tx.PutMember(ctx, &notify.Member{WorkspaceID: ws2, UserID: u.ID, Role: notify.RoleViewer, CreatedAt: t0.Add(time.Millisecond)}))
		// PutMember on an existing membership changes the role only.
		return tx.PutMember(ctx, &notify.Member{WorkspaceID: ws2, UserID: u.ID, Role: notify.RoleAdmin, CreatedAt: t0.Add(time.Hour)})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindUserByEmail(ctx, "a@example.com")
		require.NoError(t, err)
		require.Equal(t, "h2", got.PasswordHash)
		_, err = tx.FindUser(ctx, u.ID)
		require.NoError(t, err)
		_, err = tx.FindUserByEmail(ctx, "b@example.com")
		require.ErrorIs(t, err, notify.ErrNotFound)
		m, err := tx.FindMember(ctx, ws2, u.ID)
		require.NoError(t, err)
		require.Equal(t, notify.RoleAdmin, m.Role)
		require.Equal(t, "a@example.com", m.Email)
		require.Equal(t, t0.Add(time.Millisecond), m.CreatedAt)
		ms, err := tx.FindMembershipsOfUser(ctx, u.ID)
		require.NoError(t, err)
		require.Len(t, ms, 2)
		require.Equal(t, ws1, ms[0].WorkspaceID)
		members, err := tx.FindMembers(ctx, ws1)
		require.NoError(t, err)
		require.Len(t, members, 1)
		require.False(t, members[0].NoPassword)
		n, err := tx.CountOwners(ctx, ws1)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		return nil
	})
	// A user added without a password has none, and its memberships say so
	// until one is set.
	bare := &notify.User{ID: id(), Email: "bare@example.com", CreatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateUser(ctx, bare))
		return tx.PutMember(ctx, &notify.Member{WorkspaceID: ws2, UserID: bare.ID, Role: notify.RoleViewer, CreatedAt: t0})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		m, err := tx.FindMember(ctx, ws2, bare.ID)
		require.NoError(t, err)
		require.True(t, m.NoPassword)
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.SetUserPassword(ctx, bare.ID, "h3") })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		m, err := tx.FindMember(ctx, ws2, bare.ID)
		require.NoError(t, err)
		require.False(t, m.NoPassword)
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.DeleteMember(ctx, ws2, u.ID))
		require.ErrorIs(t, tx.DeleteMember(ctx, ws2, u.ID), notify.ErrNotFound)
		_, err := tx.FindMember(ctx, ws2, u.ID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
}

func testSessions(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	u := &notify.User{ID: id(), Email: "s@example.com", PasswordHash: "h", CreatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateUser(ctx, u))
		require.NoError(t, tx.CreateSession(ctx, &notify.Session{TokenHash: "live", UserID: u.ID, WorkspaceID: ws, ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}))
		require.NoError(t, tx.CreateSession(ctx, &notify.Session{TokenHash: "none", UserID: u.ID, ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}))
		return tx.CreateSession(ctx, &notify.Session{TokenHash: "old", UserID: u.ID, ExpiresAt: t0.Add(-time.Second), CreatedAt: t0})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		s, err := tx.FindSession(ctx, "live", t0)
		require.NoError(t, err)
		require.Equal(t, ws, s.WorkspaceID)
		s, err = tx.FindSession(ctx, "none", t0)
		require.NoError(t, err)
		require.Empty(t, s.WorkspaceID)
		_, err = tx.FindSession(ctx, "old", t0)
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.DeleteExpiredSessions(ctx, t0)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.NoError(t, tx.DeleteSession(ctx, "live"))
		_, err = tx.FindSession(ctx, "live", t0)
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
}

func testAPIKeys(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	k := &notify.APIKey{ID: id(), WorkspaceID: ws1, KeyID: "nk_1", Name: "k", Scopes: []string{notify.ScopeNotificationsSend},
		Status: notify.APIKeyActive, SecretHash: "sh", HMACSecretEnc: "enc", CreatedAt: t0, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateAPIKey(ctx, k) })
	conflict(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateAPIKey(ctx, &notify.APIKey{ID: id(), WorkspaceID: ws2, KeyID: "nk_1", Scopes: []string{},
			Status: notify.APIKeyActive, CreatedAt: t0, UpdatedAt: t0})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindAPIKey(ctx, ws1, k.ID)
		require.NoError(t, err)
		require.Equal(t, k.Scopes, got.Scopes)
		require.Nil(t, got.AllowedTemplateCodes, "no list means every template")
		require.Nil(t, got.LastUsedAt)
		_, err = tx.FindAPIKey(ctx, ws2, k.ID)
		require.ErrorIs(t, err, notify.ErrNotFound, "another workspace's key is not found")
		got, err = tx.FindAPIKeyByKeyID(ctx, "nk_1")
		require.NoError(t, err)
		require.Equal(t, k.ID, got.ID)
		list, err := tx.FindAPIKeys(ctx, ws2)
		require.NoError(t, err)
		require.Empty(t, list)
		return nil
	})
	k.Name, k.AllowedTemplateCodes, k.Status, k.UpdatedAt = "renamed", []string{}, notify.APIKeySuspended, t0.Add(time.Minute)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.UpdateAPIKey(ctx, k))
		other := *k
		other.WorkspaceID = ws2
		require.ErrorIs(t, tx.UpdateAPIKey(ctx, &other), notify.ErrNotFound)
		return tx.TouchAPIKey(ctx, k.ID, t0.Add(2*time.Minute))
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindAPIKey(ctx, ws1, k.ID)
		require.NoError(t, err)
		require.Equal(t, "renamed", got.Name)
		require.Equal(t, []string{}, got.AllowedTemplateCodes, "an empty list allows nothing")
		require.Equal(t, notify.APIKeySuspended, got.Status)
		require.Equal(t, t0.Add(2*time.Minute), *got.LastUsedAt)
		return nil
	})
	// Lookup (no transaction on PostgreSQL) sees the committed change.
	var got *notify.APIKey
	require.NoError(t, db.Lookup(context.Background(), func(tx notify.Tx) (err error) {
		got, err = tx.FindAPIKeyByKeyID(context.Background(), "nk_1")
		return err
	}))
	require.Equal(t, notify.APIKeySuspended, got.Status)
	err := db.Lookup(context.Background(), func(tx notify.Tx) error {
		_, err := tx.FindAPIKeyByKeyID(context.Background(), "nk_missing")
		return err
	})
	require.ErrorIs(t, err, notify.ErrNotFound)
}

func testNonces(t *testing.T, db *store.DB) {
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.UseNonce(ctx, "k1", "n1", t0, t0.Add(time.Minute)))
		require.NoError(t, tx.UseNonce(ctx, "k2", "n1", t0, t0.Add(time.Minute)), "nonces are per key")
		require.ErrorIs(t, tx.UseNonce(ctx, "k1", "n1", t0.Add(time.Second), t0.Add(time.Minute)), notify.ErrConflict)
		// Once expired, the same nonce is accepted again.
		require.NoError(t, tx.UseNonce(ctx, "k1", "n1", t0.Add(time.Minute), t0.Add(2*time.Minute)))
		n, err := tx.DeleteExpiredNonces(ctx, t0.Add(90*time.Second))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		return nil
	})
}

func testAudit(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	actor := "user-1"
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for i := 0; i < 5; i++ {
			action := "api_key.create"
			if i%2 == 1 {
				action = "workspace.updated"
			}
			require.NoError(t, tx.CreateAudit(ctx, &notify.AuditEntry{ID: id(), WorkspaceID: ws1, ActorUserID: &actor, Action: action,
				TargetType: "api_key", TargetID: "t", Payload: map[string]any{"i": float64(i)}, CreatedAt: t0.Add(time.Duration(i) * time.Second)}))
		}
		return tx.CreateAudit(ctx, &notify.AuditEntry{ID: id(), WorkspaceID: ws2, Action: "x", TargetType: "y", TargetID: "z", CreatedAt: t0})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		page, err := tx.FindAudit(ctx, ws1, notify.AuditFilter{Limit: 2})
		require.NoError(t, err)
		require.Len(t, page, 2)
		require.Equal(t, float64(4), page[0].Payload["i"], "newest first")
		require.Equal(t, actor, *page[0].ActorUserID)
		next, err := tx.FindAudit(ctx, ws1, notify.AuditFilter{Limit: 10, Before: &notify.Cursor{At: page[1].CreatedAt, ID: page[1].ID}})
		require.NoError(t, err)
		require.Len(t, next, 3)
		require.Equal(t, float64(2), next[0].Payload["i"])
		only, err := tx.FindAudit(ctx, ws1, notify.AuditFilter{Limit: 10, Action: "workspace.updated"})
		require.NoError(t, err)
		require.Len(t, only, 2)
		other, err := tx.FindAudit(ctx, ws2, notify.AuditFilter{Limit: 10})
		require.NoError(t, err)
		require.Len(t, other, 1)
		require.Nil(t, other[0].ActorUserID, "system action")
		require.Equal(t, map[string]any{}, other[0].Payload)
		return nil
	})
}

func testProvidersRoutes(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	p1 := &notify.ProviderAccount{ID: id(), WorkspaceID: ws1, ProviderKind: "vendora_sms", Channel: notify.ChannelSMS, DisplayName: "a",
		Enabled: true, ConfigEnc: "enc", CreatedAt: t0, UpdatedAt: t0}
	p2 := &notify.ProviderAccount{ID: id(), WorkspaceID: ws1, ProviderKind: "vendorb_sms", Channel: notify.ChannelSMS, DisplayName: "b",
		Enabled: false, ConfigEnc: "enc2", CreatedAt: t0.Add(time.Second), UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateProviderAccount(ctx, p1))
		return tx.CreateProviderAccount(ctx, p2)
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.ReplaceRoutes(ctx, ws1, []*notify.Route{
			{ID: id(), Channel: notify.ChannelSMS, ProviderAccountID: p2.ID, Priority: 2, Enabled: true, CreatedAt: t0},
			{ID: id(), Channel: notify.ChannelSMS, ProviderAccountID: p1.ID, Priority: 1, Enabled: false, CreatedAt: t0},
		}))
		p1.DisplayName, p1.Enabled, p1.UpdatedAt = "a2", false, t0.Add(time.Hour)
		require.NoError(t, tx.UpdateProviderAccount(ctx, p1))
		wrong := *p1
		wrong.WorkspaceID = ws2
		require.ErrorIs(t, tx.UpdateProviderAccount(ctx, &wrong), notify.ErrNotFound)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		list, err := tx.FindProviderAccounts(ctx, ws1)
		require.NoError(t, err)
		require.Len(t, list, 2)
		require.Equal(t, p1.ID, list[0].ID, "creation order")
		require.Equal(t, "a2", list[0].DisplayName)
		require.False(t, list[0].Enabled)
		_, err = tx.FindProviderAccount(ctx, ws2, p1.ID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		routes, err := tx.FindRoutes(ctx, ws1)
		require.NoError(t, err)
		require.Len(t, routes, 2)
		require.Equal(t, 1, routes[0].Priority, "ordered by priority")
		require.False(t, routes[0].Enabled)
		none, err := tx.FindRoutes(ctx, ws2)
		require.NoError(t, err)
		require.Empty(t, none)
		return nil
	})
	// A replacement is atomic: a failing insert leaves the old set.
	err := db.Update(context.Background(), func(tx notify.Tx) error {
		return tx.ReplaceRoutes(context.Background(), ws1, []*notify.Route{
			{ID: id(), Channel: notify.ChannelSMS, ProviderAccountID: p1.ID, Priority: 1, Enabled: true, CreatedAt: t0},
			{ID: id(), Channel: notify.ChannelSMS, ProviderAccountID: p1.ID, Priority: 2, Enabled: true, CreatedAt: t0},
		})
	})
	require.ErrorIs(t, err, notify.ErrConflict)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		routes, err := tx.FindRoutes(ctx, ws1)
		require.NoError(t, err)
		require.Len(t, routes, 2)
		require.Equal(t, p2.ID, routes[1].ProviderAccountID)
		return nil
	})
}

func testRollback(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	boom := notify.Invalid("boom")
	err := db.Update(context.Background(), func(tx notify.Tx) error {
		require.NoError(t, tx.UpdateWorkspaceName(context.Background(), ws, "changed", t0))
		return boom
	})
	require.ErrorIs(t, err, boom)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		w, err := tx.FindWorkspace(ctx, ws)
		require.NoError(t, err)
		require.Equal(t, "ws", w.Name)
		return nil
	})
}

// testBatch runs many concurrent Batch and BatchUrgent calls: every successful call is
// committed, and a failing one (a unique violation, which aborts the
// transaction on PostgreSQL, or a plain error) undoes only its own writes.
func testBatch(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	ctx := context.Background()
	const n = 60
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Half go through BatchUrgent (the urgent group commit, issue
			// 35): the same semantics, its own queue beside Batch's.
			batch := db.Batch
			if i%2 == 0 {
				batch = db.BatchUrgent
			}
			errs[i] = batch(ctx, func(tx notify.Tx) error {
				id := fmt.Sprintf("u-%d", i)
				email := fmt.Sprintf("u%d@example.com", i)
				if i%10 == 3 {
					email = "dup@example.com" // all but the first of these conflict
				}
				if err := tx.CreateUser(ctx, &notify.User{ID: id, Email: email, PasswordHash: "h", CreatedAt: t0}); err != nil {
					return err
				}
				if i%10 == 7 {
					return notify.Invalid("planned failure %d", i)
				}
				return tx.PutMember(ctx, &notify.Member{WorkspaceID: ws, UserID: id, Role: notify.RoleViewer, CreatedAt: t0})
			})
		}()
	}
	wg.Wait()
	conflicts, planned := 0, 0
	for i, err := range errs {
		switch {
		case i%10 == 7:
			require.Error(t, err)
			planned++
		case i%10 == 3 && err != nil:
			require.ErrorIs(t, err, notify.ErrConflict)
			conflicts++
		default:
			require.NoError(t, err, "call %d", i)
		}
	}
	require.Equal(t, n/10, planned)
	require.Equal(t, n/10-1, conflicts, "exactly one duplicate email wins")
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		ms, err := tx.FindMembers(ctx, ws)
		require.NoError(t, err)
		require.Len(t, ms, n-planned-conflicts)
		for i := 0; i < n; i++ {
			_, err := tx.FindUser(ctx, fmt.Sprintf("u-%d", i))
			if i%10 == 7 {
				require.ErrorIs(t, err, notify.ErrNotFound, "a failed call leaves nothing")
			}
		}
		return nil
	})
}
