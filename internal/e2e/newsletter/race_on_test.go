//go:build race

package newsletter_test

// raceBuild: the suite runs with -race, in CI beside every other
// package's -race tests on 2 cores, so timing bounds get loaded-machine slack.
const raceBuild = true
