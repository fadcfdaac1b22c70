package config

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Option describes one setting for `notifyd serve --help` and the README.
// It is a read-only view of the table Load works from, so the documentation
// cannot drift from what is actually read.
type Option struct {
	Env     string // environment variable; empty for flag-only options
	Flag    string // flag name of `notifyd serve`, without the leading dashes
	Default string // default as shown to users; a description when it is computed
	Help    string // one line
	Secret  bool   // never printed: Redacted shows "[set]" or "[unset]"
	File    bool   // may also be given as Env+"_FILE", the path of a file holding the value
}

// option binds an Option to the Config field it fills. set parses a value
// in the environment's form (flags use the same form); get prints the field
// back in that form, which is how Redacted and the defaults are rendered.
type option struct {
	Option
	isBool bool
	set    func(c *Config, v string) error
	get    func(c Config) string
}

// options is the single source of truth; keep it in the order of the
// API-DECISIONS table so the help reads the same way.
var options = []option{
	{
		Option: Option{Env: "NOTIFYD_DATABASE_URL", Flag: "database-url", File: true,
			Help: "sqlite:PATH (embedded, one node) or postgres://USER:PASSWORD@HOST/DB (many nodes)"},
		set: setString(func(c *Config) *string { return &c.DatabaseURL }),
		get: func(c Config) string { return redactDatabaseURL(c.DatabaseURL) },
	},
	{
		Option: Option{Env: "NOTIFYD_ADDR", Flag: "addr", Help: "listen address, host:port"},
		set:    setString(func(c *Config) *string { return &c.Addr }),
		get:    func(c Config) string { return c.Addr },
	},
	{
		Option: Option{Env: "NOTIFYD_BASE_URL", Flag: "base-url", Default: "http:// + listen address",
			Help: "public base URL of OTP links, unsubscribe links and problem types; set it behind a proxy"},
		set: func(c *Config, v string) error { c.BaseURL = strings.TrimRight(v, "/"); return nil },
		get: func(c Config) string { return c.BaseURL },
	},
	{
		Option: Option{Env: "NOTIFYD_METRICS_ADDR", Flag: "metrics-addr", Default: "none: /metrics is served on the listen address",
			Help: "host:port of a listener serving only GET /metrics; when set, the listen address no longer serves /metrics"},
		set: setString(func(c *Config) *string { return &c.MetricsAddr }),
		get: func(c Config) string { return c.MetricsAddr },
	},
	{
		Option: Option{Env: "NOTIFYD_SECRET_KEY", Flag: "secret-key", Secret: true, File: true,
			Default: "SQLite: generated beside the database file; PostgreSQL: required",
			Help:    "32 random bytes as hex or base64 (openssl rand -hex 32); encrypts stored provider configs and secrets"},
		set: setString(func(c *Config) *string { return &c.SecretKey }),
		get: func(c Config) string { return c.SecretKey },
	},
	{
		Option: Option{Env: "NOTIFYD_SECRET_KEY_PREVIOUS", Flag: "secret-key-previous", Secret: true, File: true, Default: "none",
			Help: "comma-separated former secret keys, used only to read secrets sealed before a key change; `notifyd rekey` re-seals them under the secret key"},
		set: func(c *Config, v string) error {
			c.SecretKeyPrevious = nil
			for k := range strings.SplitSeq(v, ",") {
				if k = strings.TrimSpace(k); k != "" {
					c.SecretKeyPrevious = append(c.SecretKeyPrevious, k)
				}
			}
			return nil
		},
		get: func(c Config) string { return strings.Join(c.SecretKeyPrevious, ",") },
	},
	{
		Option: Option{Env: "OTP_SIGNING_SECRET", Flag: "otp-signing-secret", Secret: true, File: true,
			Default: "derived from the secret key", Help: "HMAC key of OTP verification tokens"},
		set: setString(func(c *Config) *string { return &c.OTPSigningSecret }),
		get: func(c Config) string { return c.OTPSigningSecret },
	},
	{
		Option: Option{Env: "SVC_QUEUE_JOB_ATTEMPTS", Flag: "queue-job-attempts",
			Help: fmt.Sprintf("attempts per queued job, %d to %d", minJobAttempts, maxJobAttempts)},
		set: func(c *Config, v string) error {
			n, err := parseInt(v)
			if err != nil {
				return err
			}
			c.QueueJobAttempts = n
			return nil
		},
		get: func(c Config) string { return strconv.Itoa(c.QueueJobAttempts) },
	},
	{
		Option: Option{Env: "SVC_QUEUE_BACKOFF_MS", Flag: "queue-backoff-ms",
			Help: "initial retry backoff in milliseconds, doubled per retry"},
		set: setUnits(func(c *Config) *time.Duration { return &c.QueueBackoff }, time.Millisecond),
		get: getUnits(func(c *Config) *time.Duration { return &c.QueueBackoff }, time.Millisecond),
	},
	{
		Option: Option{Env: "NOTIFYD_ALLOW_PRIVATE_TARGETS", Flag: "allow-private-targets",
			Help: "allow outbound calls to loopback, private, link-local and metadata addresses (turns the SSRF guard off)"},
		isBool: true,
		set:    setBool(func(c *Config) *bool { return &c.AllowPrivateTargets }),
		get:    func(c Config) string { return strconv.FormatBool(c.AllowPrivateTargets) },
	},
	{
		Option: Option{Env: "NOTIFYD_HMAC_TOLERANCE_SECONDS", Flag: "hmac-tolerance-seconds",
			Help: "allowed clock skew of X-Timestamp, in seconds"},
		set: setUnits(func(c *Config) *time.Duration { return &c.HMACTolerance }, time.Second),
		get: getUnits(func(c *Config) *time.Duration { return &c.HMACTolerance }, time.Second),
	},
	{
		Option: Option{Env: "NOTIFYD_TRUSTED_PROXIES", Flag: "trusted-proxies", Default: "none",
			Help: "comma-separated CIDRs or addresses of reverse proxies; only from them does X-Forwarded-For name the client the login throttle counts"},
		set: setPrefixes(func(c *Config) *[]netip.Prefix { return &c.TrustedProxies }),
		get: func(c Config) string {
			out := make([]string, len(c.TrustedProxies))
			for i, p := range c.TrustedProxies {
				out[i] = p.String()
			}
			return strings.Join(out, ",")
		},
	},
	{
		Option: Option{Env: "NOTIFYD_LOG_LEVEL", Flag: "log-level", Help: "debug, info, warn or error"},
		set:    setLower(func(c *Config) *string { return &c.LogLevel }),
		get:    func(c Config) string { return c.LogLevel },
	},
	{
		Option: Option{Env: "NOTIFYD_LOG_FORMAT", Flag: "log-format", Help: "text, or json for machines"},
		set:    setLower(func(c *Config) *string { return &c.LogFormat }),
		get:    func(c Config) string { return c.LogFormat },
	},
	{
		Option: Option{Env: "NOTIFYD_SQLITE_SYNCHRONOUS", Flag: "sqlite-synchronous",
			Help: "SQLite only. FULL loses nothing; NORMAL commits faster but may lose the last commits on power loss (never corrupts)"},
		set: func(c *Config, v string) error { c.SQLiteSynchronous = strings.ToUpper(v); return nil },
		get: func(c Config) string { return c.SQLiteSynchronous },
	},
	{
		Option: Option{Env: "NOTIFYD_ROLE", Flag: "role",
			Help: "all (API server and workers), or api or worker alone for scale-out"},
		set: setLower(func(c *Config) *string { return &c.Role }),
		get: func(c Config) string { return c.Role },
	},
	{
		Option: Option{Flag: "no-migrate", Help: "do not migrate the schema on start"},
		isBool: true,
		set:    setBool(func(c *Config) *bool { return &c.NoMigrate }),
		get:    func(c Config) string { return strconv.FormatBool(c.NoMigrate) },
	},
	{
		Option: Option{Flag: "demo", Help: "try it out (not for production): runs the provider simulator in process, sets up a Demo workspace with a simulated provider of every kind, routes and an API key, prints how to send; allows private targets"},
		isBool: true,
		set:    setBool(func(c *Config) *bool { return &c.Demo }),
		get:    func(c Config) string { return strconv.FormatBool(c.Demo) },
	},
	{
		Option: Option{Env: "NOTIFYD_SHUTDOWN_TIMEOUT", Flag: "shutdown-timeout",
			Help: "how long a graceful stop waits for in-flight work, e.g. 30s or 2m (a bare number is seconds)"},
		set: func(c *Config, v string) error {
			d, err := parseDuration(v)
			if err != nil {
				return err
			}
			c.ShutdownTimeout = d
			return nil
		},
		get: func(c Config) string { return c.ShutdownTimeout.String() },
	},
	{
		Option: Option{Env: "NOTIFYD_JOB_RESCUE_AFTER", Flag: "job-rescue-after",
			Help: "how long a job may run before the queue hands it to another worker although its process still lives, e.g. 3m (a bare number is seconds); a dead process's jobs run again within seconds"},
		set: func(c *Config, v string) error {
			d, err := parseDuration(v)
			if err != nil {
				return err
			}
			c.JobRescueAfter = d
			return nil
		},
		get: func(c Config) string { return c.JobRescueAfter.String() },
	},
	{
		Option: Option{Env: "NOTIFYD_TRANSACTIONAL_SHARE", Flag: "transactional-share",
			Help: "percent of every dispatch limit kept for transactional sends while campaign deliveries wait on it, 0 to 90; transactional sends always go first, and bulk work uses the whole limit when none come"},
		set: func(c *Config, v string) error {
			n, err := parseInt(v)
			if err != nil {
				return err
			}
			c.TransactionalShare = n
			return nil
		},
		get: func(c Config) string { return strconv.Itoa(c.TransactionalShare) },
	},
	{
		Option: Option{Env: "NOTIFYD_HEALTH_ADDR", Flag: "health-addr", Default: "none",
			Help: "host:port of a listener with only GET /healthz and GET /readyz, for probes of a --role worker process (which serves no API)"},
		set: setString(func(c *Config) *string { return &c.HealthAddr }),
		get: func(c Config) string { return c.HealthAddr },
	},
	{
		Option: Option{Env: "NOTIFYD_DNS_SERVER", Flag: "dns-server", Default: "the system resolver",
			Help: "DNS server (host:port) of the MX check of new newsletter subscribers and of the DNS check of sending domains"},
		set: setString(func(c *Config) *string { return &c.DNSServer }),
		get: func(c Config) string { return c.DNSServer },
	},
	{
		Option: Option{Env: "NOTIFYD_MX_CHECK", Flag: "mx-check",
			Help: "check by DNS (MX, else A/AAAA) that a new subscriber's domain can receive mail; unanswered lookups accept the address"},
		isBool: true,
		set:    setBool(func(c *Config) *bool { return &c.MXCheck }),
		get:    func(c Config) string { return strconv.FormatBool(c.MXCheck) },
	},
	{
		Option: Option{Env: "NOTIFYD_WEBHOOK_TIMEOUT", Flag: "webhook-timeout", Default: "10s",
			Help: "how long one webhook delivery try may take, e.g. 10s (a bare number is seconds)"},
		set: func(c *Config, v string) error {
			d, err := parseDuration(v)
			if err != nil {
				return err
			}
			c.WebhookTimeout = d
			return nil
		},
		get: func(c Config) string { return c.WebhookTimeout.String() },
	},
	{
		Option: Option{Env: "NOTIFYD_WEBHOOK_RETRY_SCHEDULE", Flag: "webhook-retry-schedule", Default: "5s,5m,30m,2h,5h,10h,10h",
			Help: "comma-separated waits before each webhook retry; after the last the delivery fails"},
		set: func(c *Config, v string) (err error) {
			c.WebhookRetrySchedule, err = parseDurations(v)
			return err
		},
		get: func(c Config) string { return formatDurations(c.WebhookRetrySchedule) },
	},
	{
		Option: Option{Env: "NOTIFYD_RECEIPT_POLL_SCHEDULE", Flag: "receipt-poll-schedule", Default: "10s,10s,30s,1m,2m,5m,10m,30m,1h",
			Help: "comma-separated waits before each lookup of an SMS or AlimTalk delivery report (the first after the send); the last repeats until NOTIFYD_RECEIPT_DEADLINE"},
		set: func(c *Config, v string) (err error) {
			c.ReceiptPollSchedule, err = parseDurations(v)
			return err
		},
		get: func(c Config) string { return formatDurations(c.ReceiptPollSchedule) },
	},
	{
		Option: Option{Env: "NOTIFYD_RECEIPT_DEADLINE", Flag: "receipt-deadline", Default: "72h",
			Help: "how long a delivery receipt waits for the vendor's final report before it is unknown"},
		set: func(c *Config, v string) error {
			d, err := parseDuration(v)
			c.ReceiptDeadline = d
			return err
		},
		get: func(c Config) string { return c.ReceiptDeadline.String() },
	},
	{
		Option: Option{Env: "NOTIFYD_RECEIPT_FALLBACK_WINDOW", Flag: "receipt-fallback-window", Default: "1h",
			Help: "how long after the send an undelivered report still moves a request along its channel fallback (AlimTalk then SMS); a negative value turns it off"},
		set: func(c *Config, v string) error {
			d, err := parseDuration(v)
			c.ReceiptFallbackWindow = d
			return err
		},
		get: func(c Config) string { return c.ReceiptFallbackWindow.String() },
	},
	{
		Option: Option{Env: "NOTIFYD_TRACKING", Flag: "tracking", Default: "on",
			Help: "on: e-mail open and click tracking follows each workspace's opt-in settings (off unless a workspace, category or campaign turns it on); off: no tracking anywhere, whatever the settings"},
		set: func(c *Config, v string) error {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "on":
				c.TrackingOff = false
			case "off":
				c.TrackingOff = true
			default:
				return fmt.Errorf("must be on or off")
			}
			return nil
		},
		get: func(c Config) string {
			if c.TrackingOff {
				return "off"
			}
			return "on"
		},
	},
	{
		Option: Option{Env: "NOTIFYD_WEBHOOK_SECRET_OVERLAP", Flag: "webhook-secret-overlap", Default: "24h",
			Help: "how long a rotated-out webhook secret keeps signing beside the new one, e.g. 24h"},
		set: func(c *Config, v string) error {
			d, err := parseDuration(v)
			if err != nil {
				return err
			}
			c.WebhookSecretOverlap = d
			return nil
		},
		get: func(c Config) string { return c.WebhookSecretOverlap.String() },
	},
	{
		Option: Option{Env: "NOTIFYD_SNS_CERT_HOSTS", Flag: "sns-cert-hosts",
			Help: "comma-separated host[:port] list trusted for SNS signing certificates and subscribe URLs beside sns.<region>.amazonaws.com (plain http only with private targets allowed)"},
		set: func(c *Config, v string) error {
			c.SNSCertHosts = nil
			for _, h := range strings.Split(v, ",") {
				if h = strings.TrimSpace(h); h != "" {
					c.SNSCertHosts = append(c.SNSCertHosts, strings.ToLower(h))
				}
			}
			return nil
		},
		get: func(c Config) string { return strings.Join(c.SNSCertHosts, ",") },
	},
	{
		Option: Option{Env: "NOTIFYD_RETENTION", Flag: "retention",
			Help: "how long terminal requests (with attempts and job rows), stale outbox events and fan-out records of ended campaigns are kept, e.g. 30d or 720h; 0 keeps forever (metrics and campaign statistics keep their counts)"},
		set: setRetention(func(c *Config) *time.Duration { return &c.Retention }),
		get: func(c Config) string { return formatRetention(c.Retention) },
	},
	{
		Option: Option{Env: "NOTIFYD_AUDIT_RETENTION", Flag: "audit-retention",
			Help: "how long audit log entries are kept, e.g. 365d; 0 keeps forever"},
		set: setRetention(func(c *Config) *time.Duration { return &c.AuditRetention }),
		get: func(c Config) string { return formatRetention(c.AuditRetention) },
	},
}

// Options lists every setting of `notifyd serve`, in help order. It is a
// copy: changing it changes nothing that Load does.
var Options = publicOptions()

func publicOptions() []Option {
	def := Default()
	out := make([]Option, len(options))
	for i, o := range options {
		out[i] = o.Option
		if out[i].Default == "" && !o.Secret {
			out[i].Default = o.get(def)
		}
	}
	return out
}

// PrintUsage writes the help of `notifyd serve` from the option table, so
// the command needs no hand-written copy of it. The layout follows the
// standard flag package: the flag on one line, its help indented below.
func PrintUsage(w io.Writer) error {
	var b strings.Builder
	b.WriteString("Usage: notifyd serve [flags]\n\n")
	b.WriteString("Each flag may also be set by the environment variable shown; a flag wins over the environment.\n")
	b.WriteString("A variable listed with _FILE may instead name a file holding the value (for secrets).\n\n")
	public := publicOptions()
	for i, o := range options {
		b.WriteString("  --" + o.Flag)
		if !o.isBool {
			b.WriteString(" VALUE")
		}
		switch {
		case o.Env == "":
			b.WriteString("  (flag only)")
		case o.File:
			b.WriteString("  (" + o.Env + " or " + o.Env + "_FILE)")
		default:
			b.WriteString("  (" + o.Env + ")")
		}
		b.WriteString("\n        " + o.Help)
		if d := public[i].Default; d != "" && d != "false" {
			b.WriteString(" (default: " + d + ")")
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func setString(f func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *f(c) = v; return nil }
}

// setLower normalises case so that NOTIFYD_LOG_LEVEL=INFO works; Validate
// then only has to know the canonical spelling.
func setLower(f func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *f(c) = strings.ToLower(v); return nil }
}

// setPrefixes reads a comma-separated list of CIDRs; a bare address is
// its own /32 or /128.
func setPrefixes(f func(*Config) *[]netip.Prefix) func(*Config, string) error {
	return func(c *Config, v string) error {
		var out []netip.Prefix
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			if !strings.Contains(part, "/") {
				a, err := netip.ParseAddr(part)
				if err != nil {
					return fmt.Errorf("must be CIDRs or addresses, e.g. 10.0.0.0/8,::1: %q is neither", part)
				}
				a = a.Unmap()
				out = append(out, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
			p, err := netip.ParsePrefix(part)
			if err != nil {
				return fmt.Errorf("must be CIDRs or addresses, e.g. 10.0.0.0/8,::1: %q is neither", part)
			}
			out = append(out, p.Masked())
		}
		*f(c) = out
		return nil
	}
}

func setBool(f func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("must be true or false")
		}
		*f(c) = b
		return nil
	}
}

// setUnits reads a whole number of unit (the _MS and _SECONDS variables),
// refusing values that would overflow a time.Duration instead of wrapping
// around to a negative or tiny duration.
func setUnits(f func(*Config) *time.Duration, unit time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return errors.New("must be a whole number")
		}
		if n > math.MaxInt64/int64(unit) || n < math.MinInt64/int64(unit) {
			return errors.New("is too large")
		}
		*f(c) = time.Duration(n) * unit
		return nil
	}
}

func getUnits(f func(*Config) *time.Duration, unit time.Duration) func(Config) string {
	return func(c Config) string { return strconv.FormatInt(int64(*f(&c)/unit), 10) }
}

func parseInt(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, errors.New("must be a whole number")
	}
	return n, nil
}

// setRetention reads a retention period: 0 (keep forever), a number of
// days ("30d") or a Go duration ("720h") of at least a day. A bare number
// other than 0 is refused: seconds, as elsewhere, would purge at once.
func setRetention(f func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		var d time.Duration
		switch days, ok := strings.CutSuffix(v, "d"); {
		case v == "0":
		case ok:
			n, err := strconv.ParseInt(days, 10, 64)
			if err != nil || n < 0 || n > math.MaxInt64/int64(24*time.Hour) {
				return errors.New("must be a whole number of days such as 30d, a duration such as 720h, or 0")
			}
			d = time.Duration(n) * 24 * time.Hour
		default:
			var err error
			if d, err = time.ParseDuration(v); err != nil {
				return errors.New("must be a whole number of days such as 30d, a duration such as 720h, or 0")
			}
		}
		if d != 0 && d < 24*time.Hour {
			return errors.New("must be 0 (keep forever) or at least 1d")
		}
		*f(c) = d
		return nil
	}
}

// formatRetention prints a retention period the way setRetention reads
// it, in days when it is whole days.
func formatRetention(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	if d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}

// parseDuration accepts Go durations ("30s", "2m") and, since the other
// time settings are plain numbers, a bare number of seconds.
func parseDuration(v string) (time.Duration, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n > math.MaxInt64/int64(time.Second) || n < math.MinInt64/int64(time.Second) {
			return 0, errors.New("is too large")
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, errors.New("must be a duration such as 30s or 2m, or a number of seconds")
	}
	return d, nil
}

// parseDurations reads a comma-separated list of waits; an empty list is
// empty, not nil.
func parseDurations(v string) ([]time.Duration, error) {
	out := []time.Duration{}
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		d, err := parseDuration(part)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func formatDurations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}
