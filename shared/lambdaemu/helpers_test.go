package lambdaemu_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/lambdaemu"
	"github.com/flagplane/flagplane/shared/logtest"
)

// The fake bootstraps are built once per test run, from testdata.
var fakes struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fakes.dir != "" {
		_ = os.RemoveAll(fakes.dir)
	}
	os.Exit(code)
}

// fakeBootstrap returns the path of the fake bootstrap built from
// testdata/<name>: "rawruntime" or "httpecho".
func fakeBootstrap(tb testing.TB, name string) string {
	tb.Helper()
	fakes.once.Do(func() {
		fakes.dir, fakes.err = os.MkdirTemp("", "lambdaemu-fakes-")
		if fakes.err != nil {
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		for _, pkg := range []string{"rawruntime", "httpecho"} {
			out := filepath.Join(fakes.dir, pkg, "bootstrap")
			// The flags of the real functions' build.
			cmd := exec.Command(goTool, "build", "-tags", "lambda.norpc", "-trimpath", "-o", out, "./testdata/"+pkg)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if b, err := cmd.CombinedOutput(); err != nil {
				fakes.err = fmt.Errorf("build testdata/%s: %v\n%s", pkg, err, b)
				return
			}
		}
	})
	if fakes.err != nil {
		tb.Fatalf("fake bootstrap: %v", fakes.err)
	}
	return filepath.Join(fakes.dir, name, "bootstrap")
}

// newFunction makes a function of the fake bootstrap name, closed when the
// test ends; change adjusts the config first.
func newFunction(tb testing.TB, name string, change func(*lambdaemu.Config)) *lambdaemu.Function {
	tb.Helper()
	cfg := lambdaemu.Config{Name: "fake", Bootstrap: fakeBootstrap(tb, name), Timeout: 5 * time.Second, Output: testOutput{tb}}
	if change != nil {
		change(&cfg)
	}
	f, err := lambdaemu.New(cfg)
	if err != nil {
		tb.Fatalf("new function: %v", err)
	}
	tb.Cleanup(func() { _ = f.Close() })
	return f
}

// testOutput sends the processes' output to the test log until the test ends.
type testOutput struct{ tb testing.TB }

func (o testOutput) Write(p []byte) (int, error) {
	o.tb.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// invoke sends the event {"action": action, ...extra} and returns the
// answer and the error.
func invoke(tb testing.TB, f *lambdaemu.Function, action string, extra map[string]any) (map[string]any, error) {
	tb.Helper()
	ev := map[string]any{"action": action}
	for k, v := range extra {
		ev[k] = v
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		tb.Fatalf("encode event: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := f.Invoke(ctx, payload)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		tb.Fatalf("the answer to %s is not a JSON object: %v: %q", action, err, out)
	}
	return m, nil
}

// mustInvoke is invoke for invocations that must succeed.
func mustInvoke(tb testing.TB, f *lambdaemu.Function, action string, extra map[string]any) map[string]any {
	tb.Helper()
	m, err := invoke(tb, f, action, extra)
	if err != nil {
		tb.Fatalf("invoke %s: %v", action, err)
	}
	return m
}

// pidOf invokes "pid" and returns the process id that answered.
func pidOf(tb testing.TB, f *lambdaemu.Function) int {
	tb.Helper()
	return int(mustInvoke(tb, f, "pid", nil)["pid"].(float64))
}

// alive reports whether a process with pid exists.
func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

// functionError asserts err is a *FunctionError and returns it.
func functionError(tb testing.TB, err error) *lambdaemu.FunctionError {
	tb.Helper()
	var fe *lambdaemu.FunctionError
	if !errors.As(err, &fe) {
		tb.Fatalf("error %v (%T), want a *lambdaemu.FunctionError", err, err)
	}
	return fe
}

// signal is an Output that closes seen once a line holding want is written.
type signal struct {
	want string
	seen chan struct{}
	once sync.Once
	buf  logtest.Buffer
}

func newSignal(want string) *signal { return &signal{want: want, seen: make(chan struct{})} }

func (s *signal) Write(p []byte) (int, error) {
	n, err := s.buf.Write(p)
	if strings.Contains(s.buf.String(), s.want) {
		s.once.Do(func() { close(s.seen) })
	}
	return n, err
}
