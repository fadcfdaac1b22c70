package sqlstore

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/notifyd/notifyd/internal/notify"
)

// profileCache keeps the recipient profiles that sends by recipient id
// read, with all their own preference choices, per workspace (issue 32's
// serve target: the acceptance read of a send by id was its largest extra
// cost, and the dispatch read the same choices again in the claim).
//
// A workspace's entries are good while its recipients_version and
// config_version are the values they were read at. Every write of a
// profile or of a profile's preferences stores a fresh random
// recipients_version in its own transaction (bumpRecipients), every write
// of the configuration (categories: a choice names its category by key) a
// fresh config_version, so the check is exact across processes and
// transactions, as the configuration cache's is: a send reads both
// versions (one small statement) and uses what is kept only at exactly
// those versions. A workspace seen at other versions drops all it kept, so
// an erased profile leaves the memory at the workspace's next send.
// Profiles read with their consents (a phone channel) are not kept.
type profileCache struct {
	mu sync.Mutex
	m  map[string]*wsProfiles
	n  int // profiles kept, over every workspace
	// direct answers a connection for one-statement reads outside any
	// transaction (nil when the backend has none); the checks of kept
	// profiles read the versions on it, shared (versions).
	direct   func() Conn
	versions sharedRead[string, wsVersions]
	// misses reads, on direct, the profiles not kept that sends of one
	// workspace ask for at the same moment, in one statement
	// (readProfiles).
	misses batchRead[string, string, map[string]profileAt]
}

// profileAt is a profile as a read gave it, and the versions its
// statement read with it.
type profileAt struct {
	p *cachedProfile
	v wsVersions
}

// profileCacheMax bounds the profiles kept; past it the cache starts over.
const profileCacheMax = 20000

// wsProfiles are one workspace's profiles at its versions.
type wsProfiles struct {
	config, recipients int64
	m                  map[string]*cachedProfile // by external id
}

// cachedProfile is a profile and every choice of its own. Its values are
// shared by every reader and never changed.
type cachedProfile struct {
	r   *notify.Recipient
	own []choice
}

// wsVersions are a workspace's two versions as one statement read them.
type wsVersions struct{ config, recipients int64 }

func (c *profileCache) get(ws string, v wsVersions, ext string) *cachedProfile {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[ws]; e != nil && e.config == v.config && e.recipients == v.recipients {
		return e.m[ext]
	}
	return nil
}

// held answers the profile kept for ext and the versions it is kept at
// (nil when none).
func (c *profileCache) held(ws, ext string) (*cachedProfile, wsVersions) {
	if c == nil {
		return nil, wsVersions{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[ws]; e != nil && e.m[ext] != nil {
		return e.m[ext], wsVersions{e.config, e.recipients}
	}
	return nil, wsVersions{}
}

func (c *profileCache) put(ws string, v wsVersions, ext string, p *cachedProfile) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.n >= profileCacheMax {
		c.m, c.n = map[string]*wsProfiles{}, 0
	}
	e := c.m[ws]
	if e == nil || e.config != v.config || e.recipients != v.recipients {
		if e != nil {
			c.n -= len(e.m)
		}
		e = &wsProfiles{config: v.config, recipients: v.recipients, m: map[string]*cachedProfile{}}
		c.m[ws] = e
	}
	if e.m[ext] == nil {
		c.n++
	}
	e.m[ext] = p
}

// bumpRecipients gives the workspace a new recipients version; every
// writer of profiles and of a profile's preferences calls it in the
// transaction of its write.
func (t *Tx) bumpRecipients(ctx context.Context, workspaceID string) error {
	t.versioned = true
	_, err := t.c.Exec(ctx, `UPDATE workspaces SET recipients_version = ? WHERE id = ?`, rand.Int64(), workspaceID)
	return err
}

// readVersions reads the workspace's two versions (zero for none).
func (t *Tx) readVersions(ctx context.Context, ws string) (wsVersions, error) {
	return readVersionsOn(ctx, t.c, ws)
}

func readVersionsOn(ctx context.Context, c Conn, ws string) (wsVersions, error) {
	var v wsVersions
	err := c.QueryRow(ctx, `SELECT config_version, recipients_version FROM workspaces WHERE id = ?`, ws).Scan(&v.config, &v.recipients)
	if err != nil && !notify.IsNotFound(err) {
		return v, err
	}
	return v, nil
}

// checkVersions reads the workspace's versions to check a kept profile
// against: on a direct connection, one read shared by the sends of the
// workspace checking at the same moment (sharedread.go: each still reads
// after it asked, so the check stays exact), when the backend offers one;
// else, and in a transaction that renewed a version (it must see its own
// change), in t.
func (t *Tx) checkVersions(ctx context.Context, ws string) (wsVersions, error) {
	c := t.profiles
	if c == nil || c.direct == nil || t.versioned {
		return t.readVersions(ctx, ws)
	}
	return c.versions.do(ctx, ws, func(ctx context.Context) (wsVersions, error) {
		return readVersionsOn(ctx, c.direct(), ws)
	})
}

// profilesSQL reads profiles by external id with every choice of their
// own and the workspace's two versions, in one statement (one snapshot),
// for n external ids.
func profilesSQL(n int) string {
	return `SELECT ` + prefixCols("r.", profileCols) + `, w.config_version, w.recipients_version, c.key, p.channel, p.allowed
		FROM recipients r JOIN workspaces w ON w.id = r.workspace_id
		LEFT JOIN preferences p ON p.recipient_id = r.id LEFT JOIN categories c ON c.id = p.category_id
		WHERE r.workspace_id = ? AND r.external_id IN (` + placeholders(n) + `)`
}

// profileSQL is profilesSQL(1), built once.
var profileSQL = profilesSQL(1)

// cachedProfiles answers the profiles of exts (those that exist) with all
// their own choices, and the versions they were read at: from the cache
// when it holds them at the workspace's current versions, else read (and
// kept). The versions answered are those read first (the configuration's
// for the categories).
func (t *Tx) cachedProfiles(ctx context.Context, ws string, exts []string) (map[string]*cachedProfile, wsVersions, error) {
	out := make(map[string]*cachedProfile, len(exts))
	v, err := t.readVersions(ctx, ws)
	if err != nil {
		return nil, v, err
	}
	var miss []string
	for _, ext := range exts {
		if p := t.profiles.get(ws, v, ext); p != nil {
			out[ext] = p
		} else {
			miss = append(miss, ext)
		}
	}
	if len(miss) == 0 {
		return out, v, nil
	}
	args := make([]any, 0, len(miss)+1)
	args = append(args, ws)
	for _, e := range miss {
		args = append(args, e)
	}
	rows, err := t.c.Query(ctx, profilesSQL(len(miss)), uncached(len(miss), args)...)
	if err != nil {
		return nil, v, err
	}
	read, rv, err := scanProfiles(rows)
	if err != nil {
		return nil, v, err
	}
	// Each profile read is kept at the versions of its own statement's
	// snapshot (rv), those given by the cache at the versions read before
	// it (v): on SQLite one transaction's snapshot, so the same; on
	// PostgreSQL each as current as the statement that read it.
	for ext, p := range read {
		out[ext] = p
		t.profiles.put(ws, rv, ext, p)
	}
	return out, v, nil
}

// cachedProfile answers the profile of ext (nil when it does not exist)
// with all its own choices, and the workspace's versions: the kept
// profile when the versions (one small statement) are still those it was
// read at, else the profile read with the versions (one statement, the
// only one when nothing is kept for ext), and kept. Outside a transaction
// that renewed a version, and when the backend has a direct connection,
// that read is shared with the other sends of the workspace that miss at
// the same moment (readProfiles): it starts after the call, so the
// profile and its versions are as fresh as a read of the call's own.
func (t *Tx) cachedProfile(ctx context.Context, ws, ext string) (*cachedProfile, wsVersions, error) {
	if held, hv := t.profiles.held(ws, ext); held != nil {
		v, err := t.checkVersions(ctx, ws)
		if err != nil || v == hv {
			return held, v, err
		}
	}
	if c := t.profiles; c != nil && c.direct != nil && !t.versioned {
		read, err := c.misses.do(ctx, ws, ext, func(ctx context.Context, exts []string) (map[string]profileAt, error) {
			return c.readProfiles(ctx, ws, exts)
		})
		if err != nil {
			return nil, wsVersions{}, err
		}
		if at, ok := read[ext]; ok {
			return at.p, at.v, nil
		}
		// No such profile: read below, with the versions alone.
	}
	rows, err := t.c.Query(ctx, profileSQL, ws, ext)
	if err != nil {
		return nil, wsVersions{}, err
	}
	profiles, v, err := scanProfiles(rows)
	if err != nil {
		return nil, v, err
	}
	read := profiles[ext]
	if read == nil {
		// No such profile: the versions alone.
		v, err = t.readVersions(ctx, ws)
		return nil, v, err
	}
	t.profiles.put(ws, v, ext, read)
	return read, v, nil
}

// profileReadMax bounds the external ids of one statement of
// readProfiles.
const profileReadMax = 64

// readProfiles reads the profiles of exts (those that exist) on the direct
// connection, each with its own choices and the versions its statement
// read, and keeps them. A statement reads up to profileReadMax of them;
// its list is padded to a power of two with its last id again, so that
// few statement texts serve every count.
func (c *profileCache) readProfiles(ctx context.Context, ws string, exts []string) (map[string]profileAt, error) {
	exts = slices.Compact(slices.Sorted(slices.Values(exts)))
	out := make(map[string]profileAt, len(exts))
	for chunk := range slices.Chunk(exts, profileReadMax) {
		n := 1
		for n < len(chunk) {
			n *= 2
		}
		args := make([]any, 0, n+1)
		args = append(args, ws)
		for i := range n {
			args = append(args, chunk[min(i, len(chunk)-1)])
		}
		rows, err := c.direct().Query(ctx, profilesSQL(n), uncached(n, args)...)
		if err != nil {
			return nil, err
		}
		read, v, err := scanProfiles(rows)
		if err != nil {
			return nil, err
		}
		for ext, p := range read {
			out[ext] = profileAt{p, v}
			c.put(ws, v, ext, p)
		}
	}
	return out, nil
}

// scanProfiles reads the rows of profilesSQL: each profile with its own
// choices, by external id, and the versions the rows carry.
func scanProfiles(rows Rows) (map[string]*cachedProfile, wsVersions, error) {
	defer rows.Close()
	read := map[string]*cachedProfile{}
	var v wsVersions
	for rows.Next() {
		var ch struct {
			key, channel *string
			allowed      *bool
		}
		r, err := scanRecipient(extraRow{rows, []any{&v.config, &v.recipients, &ch.key, &ch.channel, &ch.allowed}})
		if err != nil {
			return nil, v, err
		}
		p := read[r.ExternalID]
		if p == nil {
			p = &cachedProfile{r: r}
			read[r.ExternalID] = p
		}
		if ch.channel != nil {
			p.own = append(p.own, choice{key: ch.key, channel: *ch.channel, allowed: *ch.allowed})
		}
	}
	return read, v, rows.Err()
}
