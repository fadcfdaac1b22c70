//go:build !unix

package daemon

import "errors"

// lockFile has no portable implementation here: workers rely on the
// heartbeat rescue alone.
func lockFile(string) (func(), error) {
	return nil, errors.New("file locks not supported on this platform")
}
