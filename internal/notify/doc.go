// Package notify is the domain of notifyd: the records the service keeps
// (workspaces, requests and their jobs, attempts, campaigns, providers,
// circuits, …), the store's verbs as interfaces (Store, Tx), and the
// domain's errors. Every other package speaks these types; this one
// depends on none of them.
//
// Its rules:
//
//   - It imports only the standard library: nothing of ours, no driver,
//     no transport, no queue. The store implements its interfaces
//     (internal/store), the service runs its use cases (internal/service).
//   - Types, interfaces and small functions only: no I/O but through its
//     own interfaces (a Tx handed in), no clock (times are passed in), no
//     goroutines.
//   - Its verbs speak the domain, not the machinery under them: work is
//     scheduled (ScheduleFanout, ScheduleDispatch) and canceled
//     (CancelScheduledWork), whatever queue runs it.
//   - A status is a typed value with a state table (status.go): use cases
//     move requests, their jobs and campaigns through MoveTo, which refuses
//     a move the table does not have; the moves the store makes in SQL,
//     many rows at once, are in the same tables. Circuits (BreakerRecord)
//     move only through dispatch.BreakerPolicy. The strings are the stored
//     and API values.
//   - Errors carry a catalogue code (errors.go) that decides the HTTP
//     status in one place; the domain never builds a transport error.
package notify
