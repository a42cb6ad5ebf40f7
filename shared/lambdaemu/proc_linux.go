package lambdaemu

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the bootstrap if the harness process
// dies without cleaning up (a panic in a test, a kill -9).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
