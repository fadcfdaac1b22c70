package main

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// commit is set at build time with -ldflags "-X main.commit=…" (the
// Dockerfile does); version beside it in main.go.
var commit = ""

// versionString is what `notifyd version` prints: the version and commit
// given by -ldflags -X, else what the Go toolchain recorded in the binary
// (the module version of `go install …@v1.2.3`, the VCS revision of a
// build in a checkout, "+dirty" when it had uncommitted changes).
func versionString() string {
	return formatVersion(version, commit, readBuildInfo())
}

func readBuildInfo() *debug.BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	return bi
}

func formatVersion(v, c string, bi *debug.BuildInfo) string {
	if bi != nil {
		if (v == "" || v == "dev") && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		if c == "" {
			var dirty bool
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					c = s.Value
				case "vcs.modified":
					dirty = s.Value == "true"
				}
			}
			if c != "" && dirty {
				c += "+dirty"
			}
		}
	}
	if v == "" {
		v = "dev"
	}
	if c == "" {
		c = "unknown"
	}
	return "notifyd " + strings.TrimSpace(v) + " (commit " + c + ", " + runtime.Version() + ")"
}
