package config

import (
	"bytes"
	"encoding/base64"
	"errors"
	"flag"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	hexKey = strings.Repeat("ab", 32)
	b64Key = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
)

// env returns a getenv over a fixed map, so tests never see the real
// environment.
func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// files returns a readFile over a fixed map; a missing name fails like a
// missing file.
func files(m map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		s, ok := m[name]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return []byte(s), nil
	}
}

func load(t *testing.T, args []string, kv map[string]string, fm map[string]string) (Config, []string, error) {
	t.Helper()
	return Load(args, env(kv), files(fm))
}

func TestDefault(t *testing.T) {
	t.Parallel()

	def := Default()
	require.NoError(t, def.Validate())
	require.Equal(t, "sqlite:./data/notifyd.db", def.DatabaseURL)
	require.Equal(t, "127.0.0.1:8080", def.Addr)
	require.Equal(t, "http://127.0.0.1:8080", def.BaseURL)
	require.Equal(t, 3, def.QueueJobAttempts)
	require.Equal(t, 3*time.Second, def.QueueBackoff)
	require.Equal(t, 300*time.Second, def.HMACTolerance)
	require.Equal(t, "FULL", def.SQLiteSynchronous)
	require.Equal(t, "all", def.Role)
	require.Equal(t, 30*time.Second, def.ShutdownTimeout)
	require.Equal(t, 3*time.Minute, def.JobRescueAfter)
	require.True(t, def.MXCheck, "MX check on by default")
	require.Empty(t, def.DNSServer, "system resolver by default")
	require.False(t, def.IsPostgres())

	c, rest, err := load(t, nil, nil, nil)
	require.NoError(t, err)
	require.Empty(t, rest)
	require.Equal(t, def, c)
}

func TestLoadEnv(t *testing.T) {
	t.Parallel()

	c, _, err := load(t, nil, map[string]string{
		"NOTIFYD_DATABASE_URL":           "postgres://notifyd:pw@db:5432/notifyd",
		"NOTIFYD_ADDR":                   "0.0.0.0:9000",
		"NOTIFYD_BASE_URL":               "https://notify.example.com/",
		"NOTIFYD_SECRET_KEY":             " " + hexKey + "\n",
		"OTP_SIGNING_SECRET":             "otp-secret",
		"SVC_QUEUE_JOB_ATTEMPTS":         "7",
		"SVC_QUEUE_BACKOFF_MS":           "250",
		"NOTIFYD_ALLOW_PRIVATE_TARGETS":  "true",
		"NOTIFYD_HMAC_TOLERANCE_SECONDS": "60",
		"NOTIFYD_LOG_LEVEL":              "DEBUG",
		"NOTIFYD_LOG_FORMAT":             "json",
		"NOTIFYD_SQLITE_SYNCHRONOUS":     "normal",
		"NOTIFYD_ROLE":                   "worker",
		"NOTIFYD_SHUTDOWN_TIMEOUT":       "2m",
		"NOTIFYD_JOB_RESCUE_AFTER":       "90s",
		"NOTIFYD_TRANSACTIONAL_SHARE":    "25",
		"NOTIFYD_DNS_SERVER":             "10.0.0.53:53",
		"NOTIFYD_MX_CHECK":               "false",
		"NOTIFYD_RETENTION":              "90d",
		"NOTIFYD_AUDIT_RETENTION":        "0",
		"NOTIFYD_METRICS_ADDR":           "127.0.0.1:9091",
	}, nil)
	require.NoError(t, err)
	require.Equal(t, Config{
		DatabaseURL:         "postgres://notifyd:pw@db:5432/notifyd",
		Addr:                "0.0.0.0:9000",
		BaseURL:             "https://notify.example.com",
		MetricsAddr:         "127.0.0.1:9091",
		SecretKey:           hexKey,
		OTPSigningSecret:    "otp-secret",
		QueueJobAttempts:    7,
		QueueBackoff:        250 * time.Millisecond,
		AllowPrivateTargets: true,
		HMACTolerance:       time.Minute,
		LogLevel:            "debug",
		LogFormat:           "json",
		SQLiteSynchronous:   "NORMAL",
		Role:                "worker",
		ShutdownTimeout:     2 * time.Minute,
		JobRescueAfter:      90 * time.Second,
		TransactionalShare:  25,
		DNSServer:           "10.0.0.53:53",
		MXCheck:             false,
		Retention:           90 * 24 * time.Hour,
	}, c)
	require.True(t, c.IsPostgres())
}

func TestLoadEmptyEnvIsUnset(t *testing.T) {
	t.Parallel()

	c, _, err := load(t, nil, map[string]string{"NOTIFYD_ADDR": "", "NOTIFYD_LOG_LEVEL": "  "}, nil)
	require.NoError(t, err)
	require.Equal(t, Default(), c)
}

func TestShutdownTimeoutBareSeconds(t *testing.T) {
	t.Parallel()

	c, _, err := load(t, nil, map[string]string{"NOTIFYD_SHUTDOWN_TIMEOUT": "45"}, nil)
	require.NoError(t, err)
	require.Equal(t, 45*time.Second, c.ShutdownTimeout)
}

func TestJobRescueAfter(t *testing.T) {
	t.Parallel()

	c, _, err := load(t, nil, map[string]string{"NOTIFYD_JOB_RESCUE_AFTER": "5"}, nil)
	require.NoError(t, err)
	require.Equal(t, 5*time.Second, c.JobRescueAfter)

	c, _, err = load(t, []string{"--job-rescue-after=10m"}, map[string]string{"NOTIFYD_JOB_RESCUE_AFTER": "5s"}, nil)
	require.NoError(t, err)
	require.Equal(t, 10*time.Minute, c.JobRescueAfter)

	_, _, err = load(t, nil, map[string]string{"NOTIFYD_JOB_RESCUE_AFTER": "soon"}, nil)
	require.ErrorContains(t, err, "NOTIFYD_JOB_RESCUE_AFTER")
	_, _, err = load(t, nil, map[string]string{"NOTIFYD_JOB_RESCUE_AFTER": "0"}, nil)
	require.ErrorContains(t, err, "NOTIFYD_JOB_RESCUE_AFTER must be greater than 0 (got 0s)")
}

func TestFlagsOverrideEnv(t *testing.T) {
	t.Parallel()

	kv := map[string]string{
		"NOTIFYD_ADDR":           "127.0.0.1:1111",
		"NOTIFYD_LOG_LEVEL":      "debug",
		"SVC_QUEUE_JOB_ATTEMPTS": "5",
		"NOTIFYD_ROLE":           "api",
	}
	c, rest, err := load(t, []string{
		"--addr", "127.0.0.1:2222", "--log-level=warn", "-queue-job-attempts", "9",
		"--role", "worker", "--no-migrate", "--demo", "--allow-private-targets",
		"extra", "--not-a-flag",
	}, kv, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"extra", "--not-a-flag"}, rest)
	require.Equal(t, "127.0.0.1:2222", c.Addr)
	require.Equal(t, "http://127.0.0.1:2222", c.BaseURL, "base URL follows the final address")
	require.Equal(t, "warn", c.LogLevel)
	require.Equal(t, 9, c.QueueJobAttempts)
	require.Equal(t, "worker", c.Role)
	require.True(t, c.NoMigrate)
	require.True(t, c.Demo)
	require.True(t, c.AllowPrivateTargets)

	// A bool flag can also turn a setting off that the environment turned on.
	c, _, err = load(t, []string{"--allow-private-targets=false"},
		map[string]string{"NOTIFYD_ALLOW_PRIVATE_TARGETS": "1"}, nil)
	require.NoError(t, err)
	require.False(t, c.AllowPrivateTargets)
}

func TestFlagErrors(t *testing.T) {
	t.Parallel()

	_, _, err := load(t, []string{"--help"}, nil, nil)
	require.ErrorIs(t, err, flag.ErrHelp)

	_, _, err = load(t, []string{"--bogus"}, nil, nil)
	require.ErrorContains(t, err, "bogus")

	_, _, err = load(t, []string{"--queue-job-attempts", "many"}, nil, nil)
	require.ErrorContains(t, err, "queue-job-attempts")
	require.ErrorContains(t, err, "must be a whole number")
}

func TestEnvParseErrors(t *testing.T) {
	t.Parallel()

	_, _, err := load(t, nil, map[string]string{
		"SVC_QUEUE_JOB_ATTEMPTS":         "abc",
		"SVC_QUEUE_BACKOFF_MS":           "1.5",
		"NOTIFYD_HMAC_TOLERANCE_SECONDS": "99999999999999999",
		"NOTIFYD_ALLOW_PRIVATE_TARGETS":  "maybe",
		"NOTIFYD_SHUTDOWN_TIMEOUT":       "soon",
	}, nil)
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, `SVC_QUEUE_JOB_ATTEMPTS must be a whole number (got "abc")`)
	require.Contains(t, msg, `SVC_QUEUE_BACKOFF_MS must be a whole number (got "1.5")`)
	require.Contains(t, msg, `NOTIFYD_HMAC_TOLERANCE_SECONDS is too large`)
	require.Contains(t, msg, `NOTIFYD_ALLOW_PRIVATE_TARGETS must be true or false (got "maybe")`)
	require.Contains(t, msg, `NOTIFYD_SHUTDOWN_TIMEOUT must be a duration`)

	// The flag replaces the broken value, so the environment's mistake no
	// longer matters.
	c, _, err := load(t, []string{"--queue-job-attempts=4"}, map[string]string{"SVC_QUEUE_JOB_ATTEMPTS": "abc"}, nil)
	require.NoError(t, err)
	require.Equal(t, 4, c.QueueJobAttempts)
}

func TestFileSecrets(t *testing.T) {
	t.Parallel()

	fm := map[string]string{
		"/run/secrets/key": hexKey + "\n",
		"/run/secrets/otp": "  otp-from-file\n",
		"/run/secrets/db":  "postgres://u:p@db/notifyd\n",
		"/run/secrets/nil": " \n",
	}

	t.Run("read", func(t *testing.T) {
		t.Parallel()
		c, _, err := load(t, nil, map[string]string{
			"NOTIFYD_SECRET_KEY_FILE":   "/run/secrets/key",
			"OTP_SIGNING_SECRET_FILE":   "/run/secrets/otp",
			"NOTIFYD_DATABASE_URL_FILE": "/run/secrets/db",
		}, fm)
		require.NoError(t, err)
		require.Equal(t, hexKey, c.SecretKey)
		require.Equal(t, "otp-from-file", c.OTPSigningSecret)
		require.Equal(t, "postgres://u:p@db/notifyd", c.DatabaseURL)
	})

	t.Run("both set", func(t *testing.T) {
		t.Parallel()
		for _, name := range []string{"NOTIFYD_SECRET_KEY", "OTP_SIGNING_SECRET", "NOTIFYD_DATABASE_URL"} {
			_, _, err := load(t, nil, map[string]string{name: "x", name + "_FILE": "/run/secrets/key"}, fm)
			require.ErrorContains(t, err, name+" and "+name+"_FILE are both set", name)
		}
	})

	t.Run("missing file", func(t *testing.T) {
		t.Parallel()
		_, _, err := load(t, nil, map[string]string{"NOTIFYD_SECRET_KEY_FILE": "/nope"}, fm)
		require.ErrorIs(t, err, fs.ErrNotExist)
		require.ErrorContains(t, err, "NOTIFYD_SECRET_KEY_FILE")
	})

	t.Run("empty file", func(t *testing.T) {
		t.Parallel()
		_, _, err := load(t, nil, map[string]string{"OTP_SIGNING_SECRET_FILE": "/run/secrets/nil"}, fm)
		require.ErrorContains(t, err, "OTP_SIGNING_SECRET_FILE: file /run/secrets/nil is empty")
	})

	t.Run("not for plain options", func(t *testing.T) {
		t.Parallel()
		c, _, err := load(t, nil, map[string]string{"NOTIFYD_ADDR_FILE": "/run/secrets/key"}, fm)
		require.NoError(t, err)
		require.Equal(t, Default().Addr, c.Addr)
	})

	t.Run("flag wins over file", func(t *testing.T) {
		t.Parallel()
		c, _, err := load(t, []string{"--secret-key", b64Key}, map[string]string{"NOTIFYD_SECRET_KEY_FILE": "/run/secrets/key"}, fm)
		require.NoError(t, err)
		require.Equal(t, b64Key, c.SecretKey)
	})
}

func TestValidate(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name   string
		modify func(c *Config)
		want   string // substring of the error; empty means valid
	}{
		{"default", func(*Config) {}, ""},
		{"sqlite double slash", func(c *Config) { c.DatabaseURL = "sqlite:///var/lib/notifyd.db" }, ""},
		{"postgresql scheme", func(c *Config) { c.DatabaseURL = "postgresql://h/db"; c.SecretKey = hexKey }, ""},
		{"base64 key", func(c *Config) { c.SecretKey = b64Key }, ""},
		{"ipv6 addr", func(c *Config) { c.Addr = "[::1]:0" }, ""},
		{"base url with path", func(c *Config) { c.BaseURL = "https://example.com/notifyd" }, ""},
		{"attempts max", func(c *Config) { c.QueueJobAttempts = 25 }, ""},

		{"db scheme", func(c *Config) { c.DatabaseURL = "mysql://u:hunter2@h/db" },
			`NOTIFYD_DATABASE_URL must start with sqlite:, postgres://, postgresql:// (got "mysql://u:xxxxx@h/db")`},
		{"db empty", func(c *Config) { c.DatabaseURL = "" }, `NOTIFYD_DATABASE_URL must start with sqlite:, postgres://, postgresql:// (got "")`},
		{"sqlite no path", func(c *Config) { c.DatabaseURL = "sqlite:" }, "NOTIFYD_DATABASE_URL names no SQLite file"},
		{"postgres needs key", func(c *Config) { c.DatabaseURL = "postgres://h/db" }, "NOTIFYD_SECRET_KEY is required with PostgreSQL"},
		{"short hex key", func(c *Config) { c.SecretKey = "abcd" }, "NOTIFYD_SECRET_KEY is invalid: hex key has 4 characters, want 64"},
		{"short b64 key", func(c *Config) { c.SecretKey = base64.StdEncoding.EncodeToString([]byte("short")) }, "NOTIFYD_SECRET_KEY is invalid"},
		{"garbage key", func(c *Config) { c.SecretKey = "not a key!" }, "NOTIFYD_SECRET_KEY is invalid"},
		{"addr no port", func(c *Config) { c.Addr = "localhost" }, `NOTIFYD_ADDR must be host:port, e.g. 127.0.0.1:8080 or :8080 (got "localhost")`},
		{"addr bad port", func(c *Config) { c.Addr = ":80800" }, `NOTIFYD_ADDR port must be a number from 0 to 65535 (got ":80800")`},
		{"addr empty port", func(c *Config) { c.Addr = "127.0.0.1:" }, "NOTIFYD_ADDR port must be a number"},
		{"metrics addr", func(c *Config) { c.MetricsAddr = "127.0.0.1:9091" }, ""},
		{"metrics addr no port", func(c *Config) { c.MetricsAddr = "localhost" }, `NOTIFYD_METRICS_ADDR must be host:port, e.g. 127.0.0.1:9091 (got "localhost")`},
		{"metrics addr bad port", func(c *Config) { c.MetricsAddr = ":99999" }, `NOTIFYD_METRICS_ADDR port must be a number from 0 to 65535 (got ":99999")`},
		{"base url relative", func(c *Config) { c.BaseURL = "notify.example.com" }, "NOTIFYD_BASE_URL must be an absolute http or https URL"},
		{"base url scheme", func(c *Config) { c.BaseURL = "ftp://example.com" }, "NOTIFYD_BASE_URL must be"},
		{"base url query", func(c *Config) { c.BaseURL = "https://example.com?x=1" }, "NOTIFYD_BASE_URL must be"},
		{"attempts low", func(c *Config) { c.QueueJobAttempts = 0 }, "SVC_QUEUE_JOB_ATTEMPTS must be between 1 and 25 (got 0)"},
		{"attempts high", func(c *Config) { c.QueueJobAttempts = 26 }, "SVC_QUEUE_JOB_ATTEMPTS must be between 1 and 25 (got 26)"},
		{"backoff", func(c *Config) { c.QueueBackoff = 0 }, "SVC_QUEUE_BACKOFF_MS must be greater than 0 (got 0)"},
		{"hmac", func(c *Config) { c.HMACTolerance = -time.Second }, "NOTIFYD_HMAC_TOLERANCE_SECONDS must be greater than 0 (got -1)"},
		{"log level", func(c *Config) { c.LogLevel = "loud" }, `NOTIFYD_LOG_LEVEL must be one of debug, info, warn, error (got "loud")`},
		{"log format", func(c *Config) { c.LogFormat = "xml" }, `NOTIFYD_LOG_FORMAT must be one of text, json (got "xml")`},
		{"synchronous", func(c *Config) { c.SQLiteSynchronous = "OFF" }, `NOTIFYD_SQLITE_SYNCHRONOUS must be one of FULL, NORMAL (got "OFF")`},
		{"role", func(c *Config) { c.Role = "both" }, `NOTIFYD_ROLE must be one of all, api, worker (got "both")`},
		{"shutdown", func(c *Config) { c.ShutdownTimeout = 0 }, "NOTIFYD_SHUTDOWN_TIMEOUT must be greater than 0 (got 0s)"},
		{"rescue", func(c *Config) { c.JobRescueAfter = -time.Second }, "NOTIFYD_JOB_RESCUE_AFTER must be greater than 0 (got -1s)"},
		{"dns server no port", func(c *Config) { c.DNSServer = "10.0.0.53" }, `NOTIFYD_DNS_SERVER must be host:port, e.g. 127.0.0.1:53 (got "10.0.0.53")`},
		{"dns server bad port", func(c *Config) { c.DNSServer = "10.0.0.53:dns" }, "NOTIFYD_DNS_SERVER port must be a number"},
		{"dns server ok", func(c *Config) { c.DNSServer = "[::1]:5353" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Default()
			tt.modify(&c)
			err := c.Validate()
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestValidateJoinsAllProblems(t *testing.T) {
	t.Parallel()

	_, _, err := load(t, nil, map[string]string{
		"NOTIFYD_LOG_LEVEL":      "loud",
		"NOTIFYD_ROLE":           "both",
		"SVC_QUEUE_JOB_ATTEMPTS": "0",
	}, nil)
	require.Error(t, err)
	var joined interface{ Unwrap() []error }
	require.True(t, errors.As(err, &joined))
	msg := err.Error()
	require.Contains(t, msg, "NOTIFYD_LOG_LEVEL")
	require.Contains(t, msg, "NOTIFYD_ROLE")
	require.Contains(t, msg, "SVC_QUEUE_JOB_ATTEMPTS")
}

func TestLoadReturnsConfigOnValidationError(t *testing.T) {
	t.Parallel()

	c, rest, err := load(t, []string{"--log-level", "loud", "pos"}, nil, nil)
	require.Error(t, err)
	require.Equal(t, "loud", c.LogLevel)
	require.Equal(t, []string{"pos"}, rest)
}

func TestBaseURLDefault(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		args []string
		kv   map[string]string
		want string
	}{
		{"default", nil, nil, "http://127.0.0.1:8080"},
		{"from env addr", nil, map[string]string{"NOTIFYD_ADDR": "127.0.0.1:9999"}, "http://127.0.0.1:9999"},
		{"from flag addr", []string{"--addr", "10.0.0.5:7000"}, map[string]string{"NOTIFYD_ADDR": "127.0.0.1:9999"}, "http://10.0.0.5:7000"},
		{"empty host", nil, map[string]string{"NOTIFYD_ADDR": ":9000"}, "http://localhost:9000"},
		{"wildcard v4", nil, map[string]string{"NOTIFYD_ADDR": "0.0.0.0:9000"}, "http://localhost:9000"},
		{"wildcard v6", nil, map[string]string{"NOTIFYD_ADDR": "[::]:9000"}, "http://localhost:9000"},
		{"ipv6", nil, map[string]string{"NOTIFYD_ADDR": "[::1]:9000"}, "http://[::1]:9000"},
		{"explicit wins", nil, map[string]string{"NOTIFYD_ADDR": ":9000", "NOTIFYD_BASE_URL": "https://n.example.com//"}, "https://n.example.com"},
		{"flag trims", []string{"--base-url", "https://n.example.com/x/"}, nil, "https://n.example.com/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _, err := load(t, tt.args, tt.kv, nil)
			require.NoError(t, err)
			require.Equal(t, tt.want, c.BaseURL)
		})
	}
}

func TestRedacted(t *testing.T) {
	t.Parallel()

	c := Default()
	c.DatabaseURL = "postgres://notifyd:hunter2@db:5432/notifyd?sslmode=disable"
	c.SecretKey = hexKey
	c.NoMigrate = true

	r := c.Redacted()
	require.Len(t, r, len(Options), "every option appears once")
	require.Equal(t, "postgres://notifyd:xxxxx@db:5432/notifyd?sslmode=disable", r["NOTIFYD_DATABASE_URL"])
	require.Equal(t, "[set]", r["NOTIFYD_SECRET_KEY"])
	require.Equal(t, "[unset]", r["OTP_SIGNING_SECRET"])
	require.Equal(t, "127.0.0.1:8080", r["NOTIFYD_ADDR"])
	require.Equal(t, "3000", r["SVC_QUEUE_BACKOFF_MS"])
	require.Equal(t, "300", r["NOTIFYD_HMAC_TOLERANCE_SECONDS"])
	require.Equal(t, "30s", r["NOTIFYD_SHUTDOWN_TIMEOUT"])
	require.Equal(t, "3m0s", r["NOTIFYD_JOB_RESCUE_AFTER"])
	require.Equal(t, "true", r["--no-migrate"])
	require.Equal(t, "false", r["--demo"])
	for k, v := range r {
		require.NotContains(t, v, "hunter2", k)
		require.NotContains(t, v, hexKey, k)
	}
}

func TestRedactDatabaseURL(t *testing.T) {
	t.Parallel()

	tests := map[string]string{
		"sqlite:./data/notifyd.db":                  "sqlite:./data/notifyd.db",
		"postgres://u@h/db":                         "postgres://u@h/db",
		"postgresql://u:s3cret@h1:5432,h2:5432/db":  "postgresql://u:xxxxx@h1:5432,h2:5432/db",
		"postgres://h/db?user=u&password=s3cret":    "postgres://h/db?password=xxxxx&user=u",
		"postgres://u:s3/cret@h/db?password=s3cret": "postgres://u:xxxxx@h/db", // does not parse: cut down
		"host=h password=s3cret":                    "[unparsable]",
	}
	for in, want := range tests {
		got := redactDatabaseURL(in)
		require.Equal(t, want, got, in)
		require.NotContains(t, got, "s3cret")
	}
}

func TestIsPostgres(t *testing.T) {
	t.Parallel()

	for url, want := range map[string]bool{
		"postgres://h/db":   true,
		"postgresql://h/db": true,
		"sqlite:x.db":       false,
		"postgres:h":        false,
		"":                  false,
	} {
		require.Equal(t, want, Config{DatabaseURL: url}.IsPostgres(), url)
	}
}

// TestEveryOptionIsRead keeps the published table and Load in sync: every
// documented variable (and _FILE variant) is looked up.
func TestEveryOptionIsRead(t *testing.T) {
	t.Parallel()

	seen := map[string]bool{}
	_, _, err := Load(nil, func(k string) string { seen[k] = true; return "" }, files(nil))
	require.NoError(t, err)
	for _, o := range Options {
		require.NotEmpty(t, o.Flag)
		require.NotEmpty(t, o.Help, o.Flag)
		if o.Env == "" {
			continue
		}
		require.True(t, seen[o.Env], "%s is documented but not read", o.Env)
		require.Equal(t, o.File, seen[o.Env+"_FILE"], "%s_FILE", o.Env)
		delete(seen, o.Env)
		delete(seen, o.Env+"_FILE")
	}
	require.Empty(t, seen, "variables read but not documented")
}

// TestEnvAndFlagAgree sets each option once by environment and once by flag
// and expects the same, non-default result, so no option is missing its
// flag or parses differently in the two places.
func TestEnvAndFlagAgree(t *testing.T) {
	t.Parallel()

	samples := map[string]string{
		"database-url":            "sqlite:/tmp/other.db",
		"addr":                    "127.0.0.1:9",
		"base-url":                "https://n.example.com",
		"metrics-addr":            "127.0.0.1:9091",
		"secret-key":              hexKey,
		"secret-key-previous":     hexKey,
		"otp-signing-secret":      "otp",
		"queue-job-attempts":      "4",
		"queue-backoff-ms":        "10",
		"allow-private-targets":   "true",
		"hmac-tolerance-seconds":  "30",
		"log-level":               "error",
		"log-format":              "json",
		"sqlite-synchronous":      "NORMAL",
		"role":                    "api",
		"no-migrate":              "true",
		"demo":                    "true",
		"shutdown-timeout":        "5s",
		"job-rescue-after":        "7s",
		"transactional-share":     "30",
		"health-addr":             "127.0.0.1:8081",
		"dns-server":              "127.0.0.1:5353",
		"mx-check":                "false",
		"trusted-proxies":         "10.0.0.0/8",
		"webhook-timeout":         "3s",
		"webhook-retry-schedule":  "1s,2m",
		"receipt-poll-schedule":   "1s,5s",
		"receipt-deadline":        "2h",
		"tracking":                "off",
		"receipt-fallback-window": "10m",
		"webhook-secret-overlap":  "1h",
		"sns-cert-hosts":          "127.0.0.1:9090",
		"retention":               "7d",
		"audit-retention":         "0",
	}
	require.Len(t, samples, len(Options), "add a sample for every new option")
	for _, o := range Options {
		v, ok := samples[o.Flag]
		require.True(t, ok, "no sample for --%s", o.Flag)

		byFlag, _, err := load(t, []string{"--" + o.Flag + "=" + v}, nil, nil)
		require.NoError(t, err, o.Flag)
		require.NotEqual(t, Default(), byFlag, "--%s changed nothing", o.Flag)
		if o.Env == "" {
			continue
		}
		byEnv, _, err := load(t, nil, map[string]string{o.Env: v}, nil)
		require.NoError(t, err, o.Env)
		require.Equal(t, byFlag, byEnv, o.Env)
	}
}

func TestOptionsDefaults(t *testing.T) {
	t.Parallel()

	byEnv := map[string]Option{}
	for _, o := range Options {
		byEnv[o.Env] = o
	}
	require.Equal(t, "sqlite:./data/notifyd.db", byEnv["NOTIFYD_DATABASE_URL"].Default)
	require.Equal(t, "127.0.0.1:8080", byEnv["NOTIFYD_ADDR"].Default)
	require.Equal(t, "3", byEnv["SVC_QUEUE_JOB_ATTEMPTS"].Default)
	require.Equal(t, "3000", byEnv["SVC_QUEUE_BACKOFF_MS"].Default)
	require.Equal(t, "300", byEnv["NOTIFYD_HMAC_TOLERANCE_SECONDS"].Default)
	require.Equal(t, "FULL", byEnv["NOTIFYD_SQLITE_SYNCHRONOUS"].Default)
	require.True(t, byEnv["NOTIFYD_SECRET_KEY"].Secret)
	require.True(t, byEnv["NOTIFYD_SECRET_KEY"].File)
	require.True(t, byEnv["OTP_SIGNING_SECRET"].Secret)
	require.True(t, byEnv["NOTIFYD_DATABASE_URL"].File)
	require.False(t, byEnv["NOTIFYD_DATABASE_URL"].Secret, "shown with its password removed")
}

func TestPrintUsage(t *testing.T) {
	t.Parallel()

	var buf bytes.Buffer
	require.NoError(t, PrintUsage(&buf))
	out := buf.String()
	for _, o := range Options {
		require.Contains(t, out, "--"+o.Flag)
		if o.Env != "" {
			require.Contains(t, out, o.Env)
		}
	}
	require.Contains(t, out, "NOTIFYD_SECRET_KEY_FILE")
	require.Contains(t, out, "(default: 127.0.0.1:8080)")
}
