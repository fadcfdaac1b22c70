package notifytest

import "github.com/notifyd/notifyd/internal/store/testdb"

// The database helpers live in internal/store/testdb (the store's own test
// ground floor); these names keep the e2e kit's callers short.
const EnvPostgres = testdb.EnvPostgres

var (
	Backends    = testdb.Backends
	SQLiteURL   = testdb.SQLiteURL
	PostgresURL = testdb.PostgresURL
	DatabaseURL = testdb.DatabaseURL
	OpenDB      = testdb.OpenDB
)
