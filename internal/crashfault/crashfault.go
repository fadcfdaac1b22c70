//go:build !crashfault

// Package crashfault lets the crash tests make a job kill its own
// process, as an out-of-memory death would, every time it runs. Only a
// binary built with the crashfault build tag has it (the crash suite
// builds one); in any other build Hit does nothing and reads nothing.
package crashfault

// Hit does nothing outside crashfault builds.
func Hit(point, subject string) {}
