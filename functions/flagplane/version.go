package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// version and revision are set by release builds (make release, the
// Dockerfile) with -ldflags -X: the tag from git describe, which the
// toolchain's own stamp cannot give for an untagged or dirty tree, and
// the commit where the build has no .git to read (a Docker context).
// Empty: what the toolchain recorded is shown, e.g. the tag a
// `go install ...@vX.Y.Z` was given.
var version, revision string

// build is what the Go toolchain recorded about this binary.
type build struct {
	module, version, goVersion string
	revision, time             string // empty when built outside a VCS checkout or with -buildvcs=false
	modified                   bool
}

func readBuild() build {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return stamped(build{version: "unknown"})
	}
	b := build{module: info.Main.Path, version: info.Main.Version, goVersion: info.GoVersion}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.revision = s.Value
		case "vcs.time":
			b.time = s.Value
		case "vcs.modified":
			b.modified = s.Value == "true"
		}
	}
	return stamped(b)
}

// stamped applies the -X values: the release's version always, its
// revision only where the toolchain read none from the checkout.
func stamped(b build) build {
	if version != "" {
		b.version = version
	}
	if b.revision == "" && revision != "" {
		b.revision = revision
	}
	return b
}

// String is the one-line form the start line shows. A version stamped
// from VCS (v0.0.0-<time>-<rev12>[+dirty]) names its commit already.
func (b build) String() string {
	if b.revision == "" || len(b.revision) < 12 || strings.Contains(b.version, b.revision[:12]) {
		return b.version
	}
	s := b.version + " revision " + b.revision[:12]
	if b.modified {
		s += "+dirty"
	}
	return s
}

// Describe is what "flagplane version" prints.
func (b build) Describe() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "flagplane %s\n", b.version)
	if b.module != "" {
		fmt.Fprintf(&sb, "module   %s\n", b.module)
	}
	if b.revision == "" {
		sb.WriteString("revision unknown (built outside a VCS checkout)\n")
	} else {
		mod := ""
		if b.modified {
			mod = " (with uncommitted changes)"
		}
		fmt.Fprintf(&sb, "revision %s%s\n", b.revision, mod)
	}
	if b.time != "" {
		fmt.Fprintf(&sb, "time     %s\n", b.time)
	}
	if b.goVersion != "" {
		fmt.Fprintf(&sb, "go       %s\n", b.goVersion)
	}
	return sb.String()
}
