//go:build !unix

package lambdaemu

import "os"

// peakRSS is not reported on this system.
func peakRSS(*os.ProcessState) int64 { return 0 }
