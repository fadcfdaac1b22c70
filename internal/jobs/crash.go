package jobs

import "encoding/json"

// A queue job left running by a process that died (a crash, an out-of-
// memory kill) is handed back by the rescue (delivery/rescue.go), which
// counts it in the job's metadata under CrashesKey: the count lives in the
// database, so it survives the crash it counts. A normal retry, a snooze
// or a graceful stop does not count. Every job running in the process
// when it died is counted, not only the one that killed it, so the count
// only grows suspicion:
//
//   - at IsolateAfterCrashes the rescue moves the job to QueueIsolated,
//     where each process runs one job at a time: a crash there is
//     blamed on fewer jobs;
//   - at QuarantineAfterCrashes the job is not run again
//     (worker.CrashGuard): its owner ends with a recorded reason. A
//     dispatch job carrying several requests is split instead, each
//     request into an isolated job of its own counting
//     IsolateAfterCrashes, so one bad message cannot fail the others.
const (
	CrashesKey             = "crashes"
	QueueIsolated          = "isolated"
	IsolateAfterCrashes    = 2
	QuarantineAfterCrashes = 3
)

// Crashes reads the crash count from a queue job's metadata (zero when
// absent or unreadable).
func Crashes(metadata []byte) int {
	var m map[string]json.RawMessage
	var n int
	if json.Unmarshal(metadata, &m) != nil || json.Unmarshal(m[CrashesKey], &n) != nil {
		return 0
	}
	return n
}

// CrashMetadata is the metadata of a job that starts with n crashes
// counted.
func CrashMetadata(n int) []byte {
	b, _ := json.Marshal(map[string]int{CrashesKey: n})
	return b
}
