package sendwindow

import (
	"errors"
	"sync"
	"time"
)

// errZone answers a name that is no person's zone.
var errZone = errors.New("not an IANA time zone")

// zones remembers the zones time.LoadLocation loaded: it reads and parses
// the zone's data on every call, which a send by recipient id paid on
// each acceptance (2.4% of a loaded serve's CPU) and a bulk upsert of
// 1,000 profiles 1,000 times. It holds only valid names, so at most the
// zone database's few hundred.
var zones sync.Map

// Zone loads an IANA time zone once. "" and "Local" are refused: they name
// the server's zone, never a person's.
func Zone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, errZone
	}
	if v, ok := zones.Load(name); ok {
		return v.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, loc)
	return loc, nil
}
