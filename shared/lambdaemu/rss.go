//go:build unix

package lambdaemu

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS is the most resident memory an exited process used, in bytes,
// or 0 where the system does not report it.
func peakRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	switch runtime.GOOS {
	case "linux":
		return ru.Maxrss * 1024 // kilobytes
	case "darwin":
		return ru.Maxrss // bytes
	}
	return 0
}
