package main

import (
	"fmt"
	"os"
	"runtime/debug"
)

// peakRSS measures the process's peak resident memory over a phase: the
// kernel's high-water mark (VmHWM) is reset at the start by writing 5 to
// /proc/self/clear_refs, so what came before (the baseline's rows, the
// setup) does not count. Linux only; elsewhere it reports nothing.
type peakRSS struct{ ok bool }

func startPeakRSS() peakRSS {
	debug.FreeOSMemory()
	err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	return peakRSS{ok: err == nil}
}

// report prints the high-water mark since start, in MB, and note.
func (p peakRSS) report(what, note string) {
	if !p.ok {
		fmt.Printf("%-44s (not measurable here)\n", what)
		return
	}
	kb := procStatus("VmHWM")
	fmt.Printf("%-44s %9.1f MB %s\n", what, float64(kb)/1024, note)
}

// procStatus reads a kB field of /proc/self/status.
func procStatus(field string) int64 { return procStatusOf(os.Getpid(), field) }
