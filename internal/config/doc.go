// Package config turns the environment and the flags of `notifyd serve`
// into one validated Config (API-DECISIONS section 1).
//
// Every option is one row of an internal table that binds its environment
// variable, its flag, its parser and its printed form; Load, Redacted, the
// exported Options list and PrintUsage all walk that table, so an option
// cannot be read but not documented, or documented but not read.
//
// Precedence is default < environment < flag. An empty environment
// variable counts as unset, as in most twelve-factor services, so that
// `NOTIFYD_X=` in a compose file does not mean "empty string".
//
// The secrets (NOTIFYD_SECRET_KEY, OTP_SIGNING_SECRET) and the database URL,
// which usually holds a password, may instead be given as <NAME>_FILE, the
// path of a file holding the value (Docker and Kubernetes secrets). Giving
// both is refused rather than silently picking one. Passing secrets as flags
// works but puts them in the process list; prefer the environment or _FILE.
//
// Only cmd and the daemon import this package; everything else receives
// plain values, so no package reads global configuration.
package config
