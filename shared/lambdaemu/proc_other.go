//go:build !linux

package lambdaemu

import "os/exec"

// dieWithParent does nothing here: a bootstrap left behind still exits on
// its own, because its next /next call finds the Runtime API gone.
func dieWithParent(cmd *exec.Cmd) {}
