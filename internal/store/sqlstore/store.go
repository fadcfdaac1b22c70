package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/notifyd/notifyd/internal/groupcommit"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store/migrate"
)

// Store is notify.Store over a Backend.
type Store struct {
	// writers is how many group-commit transactions may run at once: one
	// on SQLite (one writer), several on PostgreSQL.
	writers int
	b       Backend
	batch   batcher
	// urgentBatch is Batch for callers that answer a client now
	// (BatchUrgent), with urgentWriters transactions at once (0: a
	// transaction per caller).
	urgentBatch   batcher
	urgentWriters int
	// ms are the backend dialect's migrations (msErr when they do not
	// load), for Migrate and Ping.
	ms    []migrate.Migration
	msErr error
	// feed wakes this process's inbox listeners when the backend carries
	// no wake-ups of its own (SQLite; inboxfeed.go).
	feed localFeed
	// cfg holds the workspaces' send configuration (configcache.go).
	cfg configCache
	// profiles holds the profiles sends by recipient id read
	// (profilecache.go).
	profiles profileCache
}

var _ notify.Store = (*Store)(nil)

// New wraps a backend.
func New(b Backend) *Store {
	s := &Store{b: b, writers: 1}
	if w, ok := b.(interface{ Writers() int }); ok {
		s.writers = w.Writers()
	}
	s.batch.s = s
	s.batch.q = groupcommit.New(s.writers, maxBatch, s.batch.run)
	s.urgentWriters = s.writers
	if w, ok := b.(interface{ UrgentWriters() int }); ok {
		s.urgentWriters = w.UrgentWriters()
	}
	s.urgentBatch.s, s.urgentBatch.urgent = s, true
	s.urgentBatch.q = groupcommit.New(s.urgentWriters, maxBatch, s.urgentBatch.run)
	s.ms, s.msErr = Migrations(b.Dialect())
	if d, ok := b.(interface{ Direct() Conn }); ok {
		s.profiles.direct = d.Direct
	}
	return s
}

// Update runs fn in a write transaction, committed when fn returns nil.
func (s *Store) Update(ctx context.Context, fn func(notify.Tx) error) error {
	return s.run(ctx, true, fn)
}

// UpdateUrgent is Update ahead of waiting background writers, when the
// backend orders its writers (Urgent).
func (s *Store) UpdateUrgent(ctx context.Context, fn func(notify.Tx) error) error {
	if u, ok := s.b.(Urgent); ok {
		ctx = u.Urgent(ctx)
	}
	return s.run(ctx, true, fn)
}

// Lookup runs a one-statement read without a transaction when the backend
// offers a direct connection (Direct), in a read transaction otherwise.
func (s *Store) Lookup(ctx context.Context, fn func(notify.Tx) error) error {
	d, ok := s.b.(interface{ Direct() Conn })
	if !ok {
		return s.View(ctx, fn)
	}
	return s.unavailable(fn(s.newTx(d.Direct())))
}

// Unavailable is an optional part of a Backend: it tells the errors of a
// database that cannot be reached or is shutting down.
type Unavailable interface {
	Unavailable(err error) bool
}

// unavailable marks err with notify.ErrUnavailable when the backend says
// the database is away, so the API answers 503 instead of 500.
func (s *Store) unavailable(err error) error {
	if err == nil || errors.Is(err, notify.ErrUnavailable) {
		return err
	}
	if u, ok := s.b.(Unavailable); ok && u.Unavailable(err) {
		return fmt.Errorf("%w: %w", notify.ErrUnavailable, err)
	}
	return err
}

// View runs fn in a read transaction.
func (s *Store) View(ctx context.Context, fn func(notify.Tx) error) error {
	return s.run(ctx, false, fn)
}

func (s *Store) run(ctx context.Context, write bool, fn func(notify.Tx) error) (err error) {
	defer func() { err = s.unavailable(err) }()
	c, err := s.b.Begin(ctx, write)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = c.Rollback(context.WithoutCancel(ctx))
		}
		if p := recover(); p != nil {
			panic(p)
		}
	}()
	tx := s.newTx(c)
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.flush(ctx); err != nil {
		return err
	}
	if err := s.wakeTx(ctx, tx); err != nil {
		return err
	}
	if err := c.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	committed = true
	s.woke(tx)
	return nil
}

// Close closes the backend.
func (s *Store) Close() error { return s.b.Close() }

// Tx implements notify.Tx on one backend transaction.
type Tx struct {
	c Conn
	// cfg is the store's configuration cache (nil: read every time).
	cfg *configCache
	// profiles is the store's profile cache (nil: read every time).
	profiles *profileCache
	pending  []pendingJob
	// woken are the profiles whose inbox logs this transaction appended
	// to: their streams are woken when it commits.
	woken []string
	// versioned says this transaction renewed a workspace's version: its
	// own reads of the versions then see its change (checkVersions).
	versioned bool
	// The verbs, one view of this transaction per area, so that Tx has
	// every verb of notify.Tx while no type holds more than one area's.
	accountTx
	requestTx
	deliveryTx
	newsletterTx
	limitTx
	otpTx
	templateTx
	providerTx
	webhookTx
	recipientTx
	categoryTx
	preferenceTx
	hookTx
	inboxTx
	workflowTx
	engagementTx
}

// newTx is newTx with the store's configuration cache.
func (s *Store) newTx(c Conn) *Tx {
	t := newTx(c)
	t.cfg, t.profiles = &s.cfg, &s.profiles
	return t
}

// newTx is a transaction on c with its verb views.
func newTx(c Conn) *Tx {
	t := &Tx{c: c}
	t.accountTx = accountTx{t}
	t.requestTx = requestTx{t}
	t.deliveryTx = deliveryTx{t}
	t.newsletterTx = newsletterTx{t}
	t.limitTx = limitTx{t}
	t.otpTx = otpTx{t}
	t.templateTx = templateTx{t}
	t.providerTx = providerTx{t}
	t.webhookTx = webhookTx{t}
	t.recipientTx = recipientTx{t}
	t.categoryTx = categoryTx{t}
	t.preferenceTx = preferenceTx{t}
	t.hookTx = hookTx{t}
	t.inboxTx = inboxTx{t}
	t.workflowTx = workflowTx{t}
	t.engagementTx = engagementTx{t}
	return t
}

// accountTx holds the verbs of workspaces, users, sessions, members, invitations and API keys.
type accountTx struct{ *Tx }

// requestTx holds the verbs of requests and their acceptance, attempts and dead letters.
type requestTx struct{ *Tx }

// deliveryTx holds the verbs of the delivery engine's claims and settlements, job rescue, and retention.
type deliveryTx struct{ *Tx }

// newsletterTx holds the verbs of subscribers, campaigns, their recipients and the suppression list.
type newsletterTx struct{ *Tx }

// limitTx holds the verbs of request-limit policies and counters, nonces and dispatch limits.
type limitTx struct{ *Tx }

// otpTx holds the verbs of OTP sessions, send counters and the fraud guard.
type otpTx struct{ *Tx }

// templateTx holds the verbs of templates, their versions and layouts.
type templateTx struct{ *Tx }

// providerTx holds the verbs of provider accounts, routes, breakers, sending identities and sealed values.
type providerTx struct{ *Tx }

// webhookTx holds the verbs of webhooks, the event outbox, deliveries and the audit log.
type webhookTx struct{ *Tx }

// recipientTx holds the verbs of recipient profiles (issue 32).
type recipientTx struct{ *Tx }

// categoryTx holds the verbs of categories, preferenceTx those of
// preferences (issue 32, item 3).
type (
	categoryTx   struct{ *Tx }
	preferenceTx struct{ *Tx }
)

// inboxTx holds the verbs of the in-app inbox (issue 33).
type inboxTx struct{ *Tx }

var _ notify.Tx = (*Tx)(nil)

// Conn exposes the transaction to backend packages for dialect fast paths.
func (t *Tx) Conn() Conn { return t.c }

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMs(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fromMsPtr(v *int64) *time.Time {
	if v == nil {
		return nil
	}
	t := fromMs(*v)
	return &t
}

func msPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	v := ms(*t)
	return &v
}

func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain maps and slices are stored
	}
	return string(b)
}

func fromJSON(s string, v any) error {
	if s == "" {
		return nil
	}
	return json.Unmarshal([]byte(s), v)
}

// expectOne turns "no row changed" into ErrNotFound.
func expectOne(n int64, err error) error {
	if err != nil {
		return err
	}
	if n == 0 {
		return notify.ErrNotFound
	}
	return nil
}

// IsNotFound reports whether err is a store not-found.
func IsNotFound(err error) bool { return errors.Is(err, notify.ErrNotFound) }
