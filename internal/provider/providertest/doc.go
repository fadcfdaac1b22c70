// Package providertest is the adapter test kit (kit.go: golden wire files,
// fake vendors, loopback dependencies), used by every adapter package's
// tests, and holds the cross-check of the two independent implementations
// of PROVIDERS.md: every provider kind's adapter (package provider/kinds)
// is run against the provider simulator (package simulator) over real
// HTTP, for success, batches, every failure class, timeouts, quota
// lookups and mail headers.
package providertest
