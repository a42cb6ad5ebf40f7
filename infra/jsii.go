package infra

import (
	"fmt"
	"os"

	"github.com/aws/jsii-runtime-go"
)

// IsolateJSII gives the jsii runtime (the node process behind the CDK's Go
// bindings) a private temporary directory and returns the function that
// deletes it. Call it before any other CDK call, and call the returned
// function instead of jsii.Close when done.
//
// Why: jsii-runtime-go v1.140.0 extracts its JavaScript into a fresh
// temporary directory while packages initialize, and only jsii.Close
// deletes it. But jsii.Close, once node has started, races with the
// runtime's own goroutine waiting on node (the race detector reports it,
// and without it a spurious "Runtime process exited abnormally" may be
// printed). Closing before node has started is safe: it only deletes the
// extraction, and the next CDK call starts a new runtime, which now
// extracts into the private directory. Node exits on its own when this
// process ends.
func IsolateJSII() (cleanup func(), err error) {
	jsii.Close()
	dir, err := os.MkdirTemp("", "flagplane-jsii-")
	if err != nil {
		return nil, fmt.Errorf("jsii scratch directory: %w", err)
	}
	if err := os.Setenv("TMPDIR", dir); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("jsii scratch directory: %w", err)
	}
	return func() { os.RemoveAll(dir) }, nil
}
