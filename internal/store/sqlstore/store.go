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
	// ms are the backend dialect's migrations (msErr when they do not
	// load), for Migrate and Ping.
	ms    []migrate.Migration
	msErr error
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
	s.ms, s.msErr = Migrations(b.Dialect())
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
	return s.unavailable(fn(&Tx{c: d.Direct()}))
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
	tx := &Tx{c: c}
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.flush(ctx); err != nil {
		return err
	}
	if err := c.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	committed = true
	return nil
}

// Close closes the backend.
func (s *Store) Close() error { return s.b.Close() }

// Tx implements notify.Tx on one backend transaction.
type Tx struct {
	c       Conn
	pending []pendingJob
}

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
