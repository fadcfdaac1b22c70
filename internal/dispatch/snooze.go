package dispatch

import "time"

// SnoozeError asks the queue to run a job again after After without
// counting a failed attempt: a dispatch limit would make the send wait too
// long to hold a worker slot meanwhile.
type SnoozeError struct {
	After  time.Duration
	Reason string
}

func (e *SnoozeError) Error() string { return "snooze " + e.After.String() + ": " + e.Reason }
