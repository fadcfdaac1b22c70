package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/secret"
)

// Config is everything `notifyd serve` is told from outside. The comments
// name the environment variable; each also has a flag (see Options).
type Config struct {
	DatabaseURL         string        // NOTIFYD_DATABASE_URL: sqlite:PATH or postgres://…
	Addr                string        // NOTIFYD_ADDR: listen address, host:port
	BaseURL             string        // NOTIFYD_BASE_URL: public URL without trailing slash; Load defaults it from Addr
	MetricsAddr         string        // NOTIFYD_METRICS_ADDR: host:port serving /metrics instead of Addr; empty serves it on Addr
	SecretKey           string        // NOTIFYD_SECRET_KEY: master key as hex or base64; empty with SQLite means "use the key file"
	SecretKeyPrevious   []string      // NOTIFYD_SECRET_KEY_PREVIOUS: former master keys, read but never sealed with (key rotation)
	OTPSigningSecret    string        // OTP_SIGNING_SECRET: empty means the daemon derives it from the secret key
	QueueJobAttempts    int           // SVC_QUEUE_JOB_ATTEMPTS
	QueueBackoff        time.Duration // SVC_QUEUE_BACKOFF_MS
	AllowPrivateTargets bool          // NOTIFYD_ALLOW_PRIVATE_TARGETS: turns the SSRF guard off
	HMACTolerance       time.Duration // NOTIFYD_HMAC_TOLERANCE_SECONDS
	LogLevel            string        // NOTIFYD_LOG_LEVEL: debug, info, warn or error
	LogFormat           string        // NOTIFYD_LOG_FORMAT: text or json

	// SQLiteSynchronous is NOTIFYD_SQLITE_SYNCHRONOUS, FULL or NORMAL. In WAL
	// mode NORMAL skips an fsync per commit, so it is markedly faster, but
	// the last commits before a power loss or OS crash may be lost (the
	// database itself stays intact). FULL, the default, loses nothing: an
	// accepted notification must not vanish.
	SQLiteSynchronous string

	Role            string        // --role or NOTIFYD_ROLE: all, api or worker
	NoMigrate       bool          // --no-migrate (flag only)
	Demo            bool          // --demo (flag only)
	ShutdownTimeout time.Duration // NOTIFYD_SHUTDOWN_TIMEOUT: graceful stop budget
	JobRescueAfter  time.Duration // NOTIFYD_JOB_RESCUE_AFTER: when a job still running in a live process is handed to another
	// TransactionalShare is NOTIFYD_TRANSACTIONAL_SHARE, a percentage: the
	// part of every dispatch limit kept for transactional sends while bulk
	// work (campaign deliveries) waits on it.
	TransactionalShare int
	HealthAddr         string // NOTIFYD_HEALTH_ADDR: a probes-only listener (workers)
	DNSServer          string // NOTIFYD_DNS_SERVER: host:port of the resolver of subscriber MX checks and sending-domain DNS checks; empty is the system resolver
	MXCheck            bool   // NOTIFYD_MX_CHECK: check subscriber address domains by DNS on create

	// Retention: terminal requests with their attempts and job rows, stale
	// outbox events and fan-out records of ended campaigns are deleted
	// after Retention, audit entries after AuditRetention; 0 keeps forever.
	Retention      time.Duration // NOTIFYD_RETENTION
	AuditRetention time.Duration // NOTIFYD_AUDIT_RETENTION

	// TrustedProxies is NOTIFYD_TRUSTED_PROXIES: reverse proxies whose
	// X-Forwarded-For names the client of the login throttle.
	TrustedProxies []netip.Prefix

	// Webhook delivery; zero values (nil schedule) mean the service's
	// defaults: 10s, the Standard Webhooks schedule, 24h.
	WebhookTimeout       time.Duration   // NOTIFYD_WEBHOOK_TIMEOUT: bound of one webhook try
	WebhookRetrySchedule []time.Duration // NOTIFYD_WEBHOOK_RETRY_SCHEDULE: waits before each retry; empty (not nil): none
	WebhookSecretOverlap time.Duration   // NOTIFYD_WEBHOOK_SECRET_OVERLAP: how long a rotated-out secret still signs
	// Delivery receipts (issue 35).
	ReceiptPollSchedule   []time.Duration // NOTIFYD_RECEIPT_POLL_SCHEDULE: waits before each result-API lookup; the last repeats; nil: the default
	ReceiptDeadline       time.Duration   // NOTIFYD_RECEIPT_DEADLINE: how long a receipt waits for a final report; 0: the default (72h)
	ReceiptFallbackWindow time.Duration   // NOTIFYD_RECEIPT_FALLBACK_WINDOW: how long after the send an undelivered report may fall back; 0: the default (1h)
	SNSCertHosts          []string        // NOTIFYD_SNS_CERT_HOSTS: trusted SNS certificate hosts beside sns.<region>.amazonaws.com
	// TrackingOff is NOTIFYD_TRACKING=off (issue 35, item 4): no open or
	// click tracking anywhere, whatever the workspaces' settings say.
	TrackingOff bool
}

// Accepted values, kept here so Validate and its messages share them.
var (
	logLevels    = []string{"debug", "info", "warn", "error"}
	logFormats   = []string{"text", "json"}
	synchronous  = []string{"FULL", "NORMAL"}
	roles        = []string{"all", "api", "worker"}
	dbURLSchemes = []string{"sqlite:", "postgres://", "postgresql://"}
)

const (
	maxWebhookRetries = 50
	minJobAttempts    = 1
	maxJobAttempts    = 25
)

// Default returns the configuration used when nothing is set: an embedded
// SQLite database and a loopback listener, so `notifyd serve` works out of
// the box and exposes nothing to the network.
func Default() Config {
	const addr = "127.0.0.1:8080"
	return Config{
		DatabaseURL:        "sqlite:./data/notifyd.db",
		Addr:               addr,
		BaseURL:            defaultBaseURL(addr),
		QueueJobAttempts:   3,
		QueueBackoff:       3000 * time.Millisecond,
		HMACTolerance:      300 * time.Second,
		LogLevel:           "info",
		LogFormat:          "text",
		SQLiteSynchronous:  "FULL",
		Role:               "all",
		ShutdownTimeout:    30 * time.Second,
		JobRescueAfter:     3 * time.Minute,
		MXCheck:            true,
		TransactionalShare: 10,
		Retention:          30 * 24 * time.Hour,
		AuditRetention:     365 * 24 * time.Hour,
	}
}

// defaultBaseURL is "http://" + addr, except that a wildcard or empty host
// (":8080", "0.0.0.0:8080") becomes localhost: links that point at
// "http://:8080" or "http://0.0.0.0:8080" open nowhere.
func defaultBaseURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr // Validate reports the address
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Load builds the configuration of `notifyd serve`: defaults, then the
// environment read through getenv, then the flags in args, then Validate.
// getenv and readFile are parameters so tests need neither a real
// environment nor real files; nil means os.Getenv and os.ReadFile.
//
// It returns the positional arguments left after the flags. A flag parsing
// error (including flag.ErrHelp for --help, which callers should answer with
// PrintUsage) returns a zero Config. Otherwise the loaded Config is returned
// even when it is invalid, so the caller can show it with Redacted; the
// error then joins every problem found, each naming its variable.
//
// A problem in an environment variable is ignored when the matching flag
// is given, because the flag replaces that value anyway.
func Load(args []string, getenv func(string) string, readFile func(string) ([]byte, error)) (Config, []string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if readFile == nil {
		readFile = os.ReadFile
	}
	c := Default()
	c.BaseURL = "" // filled in below from the final Addr unless set

	envErrs := make(map[string]error) // by flag name
	for _, o := range options {
		if o.Env == "" {
			continue
		}
		v, ok, err := readEnv(o.Option, getenv, readFile)
		if err == nil && ok {
			if serr := o.set(&c, v); serr != nil {
				if o.Secret || o.File {
					err = fmt.Errorf("%s %w", o.Env, serr) // never echo a secret
				} else {
					err = fmt.Errorf("%s %w (got %q)", o.Env, serr, v)
				}
			}
		}
		if err != nil {
			envErrs[o.Flag] = err
		}
	}

	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, o := range options {
		set := func(v string) error { return o.set(&c, strings.TrimSpace(v)) }
		if o.isBool {
			fs.BoolFunc(o.Flag, o.Help, set)
		} else {
			fs.Func(o.Flag, o.Help, set)
		}
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, nil, err
	}
	fs.Visit(func(f *flag.Flag) { delete(envErrs, f.Name) })

	if c.BaseURL == "" {
		c.BaseURL = defaultBaseURL(c.Addr)
	}

	var errs []error
	for _, o := range options { // table order keeps the messages stable
		if err := envErrs[o.Flag]; err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	return c, fs.Args(), errors.Join(errs...)
}

// readEnv returns the trimmed value of o.Env, or for options that allow it
// the trimmed content of the file named by o.Env+"_FILE". ok is false when
// neither is set. Both set is an error: silently preferring one would hide
// a stale secret.
func readEnv(o Option, getenv func(string) string, readFile func(string) ([]byte, error)) (v string, ok bool, err error) {
	v = strings.TrimSpace(getenv(o.Env))
	if !o.File {
		return v, v != "", nil
	}
	fileEnv := o.Env + "_FILE"
	path := strings.TrimSpace(getenv(fileEnv))
	if path == "" {
		return v, v != "", nil
	}
	if v != "" {
		return "", false, fmt.Errorf("%s and %s are both set; set only one", o.Env, fileEnv)
	}
	b, err := readFile(path)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", fileEnv, err)
	}
	v = strings.TrimSpace(string(b))
	if v == "" {
		// An empty secret file is almost always a failed mount; treating it
		// as unset would, with SQLite, silently generate a different key.
		return "", false, fmt.Errorf("%s: file %s is empty", fileEnv, path)
	}
	return v, true, nil
}

// Validate reports every problem at once (errors.Join), each message naming
// the environment variable to fix, so a misconfigured deployment needs one
// restart rather than one per mistake.
func (c Config) Validate() error {
	var p problems
	c.validateDatabase(&p)
	c.validateAddresses(&p)
	c.validateSecrets(&p)
	c.validateQueue(&p)
	c.validateChoices(&p)
	c.validateDurations(&p)
	c.validateWebhooks(&p)
	return errors.Join(p...)
}

// problems collects Validate's findings in the order the steps report them.
type problems []error

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Errorf(format, args...)) }

// hostPort checks a host:port option; the example shows the expected form.
func (p *problems) hostPort(env, addr, example string) {
	if _, port, err := net.SplitHostPort(addr); err != nil {
		p.add("%s must be host:port, e.g. %s (got %q)", env, example, addr)
	} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		// Service names ("http") would work with net.Listen, but a number
		// is what every deployment uses and catches typos such as ":80800".
		p.add("%s port must be a number from 0 to 65535 (got %q)", env, addr)
	}
}

func (p *problems) oneOf(name, got string, allowed []string) {
	if !slices.Contains(allowed, got) {
		p.add("%s must be one of %s (got %q)", name, strings.Join(allowed, ", "), got)
	}
}

func (c Config) validateDatabase(p *problems) {
	switch {
	case !slices.ContainsFunc(dbURLSchemes, func(s string) bool { return strings.HasPrefix(c.DatabaseURL, s) }):
		p.add("NOTIFYD_DATABASE_URL must start with %s (got %q)", strings.Join(dbURLSchemes, ", "), redactDatabaseURL(c.DatabaseURL))
	case !c.IsPostgres() && sqlitePath(c.DatabaseURL) == "":
		p.add("NOTIFYD_DATABASE_URL names no SQLite file; use sqlite:PATH, e.g. sqlite:./data/notifyd.db")
	}
}

// validateAddresses checks the listen addresses and the public base URL.
func (c Config) validateAddresses(p *problems) {
	p.hostPort("NOTIFYD_ADDR", c.Addr, "127.0.0.1:8080 or :8080")
	if c.MetricsAddr != "" {
		p.hostPort("NOTIFYD_METRICS_ADDR", c.MetricsAddr, "127.0.0.1:9091")
	}
	// Links are built by appending paths to the base URL, so it must be an
	// absolute http(s) URL with nothing after the path.
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") ||
		u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		p.add("NOTIFYD_BASE_URL must be an absolute http or https URL without query, e.g. https://notify.example.com (got %q)", c.BaseURL)
	}
}

func (c Config) validateSecrets(p *problems) {
	switch {
	case c.SecretKey == "" && c.IsPostgres():
		// Every node must encrypt and decrypt with the same key, so one
		// cannot be generated locally as it is for SQLite.
		p.add("NOTIFYD_SECRET_KEY is required with PostgreSQL: give 32 random bytes as hex or base64 (e.g. from `openssl rand -hex 32`), or a file holding them in NOTIFYD_SECRET_KEY_FILE")
	case c.SecretKey != "":
		if _, err := secret.ParseKey(c.SecretKey); err != nil {
			p.add("NOTIFYD_SECRET_KEY is invalid: %s", strings.TrimPrefix(err.Error(), "secret: "))
		}
	}
	for i, k := range c.SecretKeyPrevious {
		if _, err := secret.ParseKey(k); err != nil {
			p.add("NOTIFYD_SECRET_KEY_PREVIOUS key %d is invalid: %s", i+1, strings.TrimPrefix(err.Error(), "secret: "))
		}
	}
}

func (c Config) validateQueue(p *problems) {
	if c.QueueJobAttempts < minJobAttempts || c.QueueJobAttempts > maxJobAttempts {
		p.add("SVC_QUEUE_JOB_ATTEMPTS must be between %d and %d (got %d)", minJobAttempts, maxJobAttempts, c.QueueJobAttempts)
	}
	if c.QueueBackoff <= 0 {
		p.add("SVC_QUEUE_BACKOFF_MS must be greater than 0 (got %d)", c.QueueBackoff.Milliseconds())
	}
	if c.HMACTolerance <= 0 {
		p.add("NOTIFYD_HMAC_TOLERANCE_SECONDS must be greater than 0 (got %d)", int64(c.HMACTolerance/time.Second))
	}
}

// validateChoices checks the options that take one of a fixed set of words.
func (c Config) validateChoices(p *problems) {
	p.oneOf("NOTIFYD_LOG_LEVEL", c.LogLevel, logLevels)
	p.oneOf("NOTIFYD_LOG_FORMAT", c.LogFormat, logFormats)
	p.oneOf("NOTIFYD_SQLITE_SYNCHRONOUS", c.SQLiteSynchronous, synchronous)
	p.oneOf("NOTIFYD_ROLE", c.Role, roles)
}

// validateDurations checks the process timers and the DNS resolver address.
func (c Config) validateDurations(p *problems) {
	if c.ShutdownTimeout <= 0 {
		p.add("NOTIFYD_SHUTDOWN_TIMEOUT must be greater than 0 (got %s)", c.ShutdownTimeout)
	}
	if c.JobRescueAfter <= 0 {
		p.add("NOTIFYD_JOB_RESCUE_AFTER must be greater than 0 (got %s)", c.JobRescueAfter)
	}
	if c.TransactionalShare < 0 || c.TransactionalShare > 90 {
		p.add("NOTIFYD_TRANSACTIONAL_SHARE must be between 0 and 90 (got %d)", c.TransactionalShare)
	}
	if c.DNSServer != "" {
		p.hostPort("NOTIFYD_DNS_SERVER", c.DNSServer, "127.0.0.1:53")
	}
}

func (c Config) validateWebhooks(p *problems) {
	if c.WebhookTimeout < 0 {
		p.add("NOTIFYD_WEBHOOK_TIMEOUT must be greater than 0 (got %s)", c.WebhookTimeout)
	}
	if len(c.WebhookRetrySchedule) > maxWebhookRetries {
		p.add("NOTIFYD_WEBHOOK_RETRY_SCHEDULE must hold at most %d waits (got %d)", maxWebhookRetries, len(c.WebhookRetrySchedule))
	}
	// Only the first bad wait is named: one message per mistake, not per entry.
	if i := slices.IndexFunc(c.WebhookRetrySchedule, func(d time.Duration) bool { return d <= 0 }); i >= 0 {
		p.add("NOTIFYD_WEBHOOK_RETRY_SCHEDULE waits must be greater than 0 (got %s)", c.WebhookRetrySchedule[i])
	}
	// Unset (nil, zero) means the receipts' defaults.
	if i := slices.IndexFunc(c.ReceiptPollSchedule, func(d time.Duration) bool { return d <= 0 }); i >= 0 || (c.ReceiptPollSchedule != nil && len(c.ReceiptPollSchedule) == 0) {
		p.add("NOTIFYD_RECEIPT_POLL_SCHEDULE must hold waits greater than 0")
	}
	if c.ReceiptDeadline < 0 {
		p.add("NOTIFYD_RECEIPT_DEADLINE must be greater than 0 (got %s)", c.ReceiptDeadline)
	}
	if c.WebhookSecretOverlap < 0 {
		p.add("NOTIFYD_WEBHOOK_SECRET_OVERLAP must be greater than 0 (got %s)", c.WebhookSecretOverlap)
	}
}

// Redacted returns every option by its environment variable name (flag-only
// options as "--flag"), in the form that variable takes, for a start-up log
// line or a support dump. Secrets show only "[set]" or "[unset]" and the
// database URL loses its password.
func (c Config) Redacted() map[string]string {
	m := make(map[string]string, len(options))
	for _, o := range options {
		key := o.Env
		if key == "" {
			key = "--" + o.Flag
		}
		v := o.get(c)
		if o.Secret {
			v = "[unset]"
			if o.get(c) != "" {
				v = "[set]"
			}
		}
		m[key] = v
	}
	return m
}

// IsPostgres reports whether the database URL names PostgreSQL; the prefixes
// match what internal/store accepts. Anything else is SQLite or invalid.
func (c Config) IsPostgres() bool {
	return strings.HasPrefix(c.DatabaseURL, "postgres://") || strings.HasPrefix(c.DatabaseURL, "postgresql://")
}

// sqlitePath mirrors internal/store: "sqlite:PATH", tolerating
// "sqlite://PATH".
func sqlitePath(dbURL string) string {
	return strings.TrimPrefix(strings.TrimPrefix(dbURL, "sqlite:"), "//")
}

// redactDatabaseURL hides the password of a database URL, both in the user
// info and in a libpq-style "password" query parameter. A URL that does not
// parse is cut down to what cannot hold a password rather than shown.
func redactDatabaseURL(s string) string {
	if s == "" || strings.HasPrefix(s, "sqlite:") {
		return s
	}
	scheme, rest, found := strings.Cut(s, "://")
	if !found {
		// Not URL-shaped (perhaps a "host=… password=…" DSN): nothing in it
		// is known to be safe to show.
		return "[unparsable]"
	}
	u, err := url.Parse(s)
	if err != nil {
		rest, _, _ = strings.Cut(rest, "?")
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			user, _, _ := strings.Cut(rest[:at], ":")
			rest = user + ":xxxxx" + rest[at:]
		}
		return scheme + "://" + rest
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}
