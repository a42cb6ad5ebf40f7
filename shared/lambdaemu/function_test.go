package lambdaemu_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/lambdaemu"
	"github.com/flagplane/flagplane/shared/logtest"
)

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestInvoke(t *testing.T) {
	f := newFunction(t, "rawruntime", nil)

	t.Run("an invocation returns the runtime's response", func(t *testing.T) {
		got := mustInvoke(t, f, "echo", map[string]any{"x": "y"})
		if got["action"] != "echo" || got["x"] != "y" {
			t.Errorf("answer %v, want the event back", got)
		}
	})

	t.Run("the runtime gets the request id, deadline, function ARN and trace id", func(t *testing.T) {
		before := time.Now()
		got := mustInvoke(t, f, "headers", nil)
		if id, _ := got["requestId"].(string); !uuidPattern.MatchString(id) {
			t.Errorf("request id %q is not a UUID", id)
		}
		ms, err := strconv.ParseInt(got["deadlineMs"].(string), 10, 64)
		deadline := time.UnixMilli(ms)
		if err != nil || deadline.Before(before.Add(4*time.Second)) || deadline.After(time.Now().Add(5*time.Second)) {
			t.Errorf("deadline %q is not about 5 s (the timeout) from now", got["deadlineMs"])
		}
		if got["functionArn"] != f.ARN() || f.ARN() != "arn:aws:lambda:us-east-1:000000000000:function:fake" {
			t.Errorf("function ARN %v, want %s", got["functionArn"], f.ARN())
		}
		if tr, _ := got["traceId"].(string); !strings.HasPrefix(tr, "Root=1-") {
			t.Errorf("trace id %q", tr)
		}
	})

	t.Run("every invocation gets a new request id", func(t *testing.T) {
		a, b := mustInvoke(t, f, "headers", nil), mustInvoke(t, f, "headers", nil)
		if a["requestId"] == b["requestId"] {
			t.Errorf("two invocations share the request id %v", a["requestId"])
		}
	})

	t.Run("an error the runtime reports is a function error and the environment is reused", func(t *testing.T) {
		pid := pidOf(t, f)
		_, err := invoke(t, f, "error", nil)
		fe := functionError(t, err)
		if fe.Type != "Fake.Error" || fe.Message != "boom" || !strings.Contains(string(fe.Payload), `"boom"`) {
			t.Errorf("function error %+v", fe)
		}
		if again := pidOf(t, f); again != pid {
			t.Errorf("after a handled error pid %d answered, want the same process %d", again, pid)
		}
	})

	t.Run("an error in the response trailers is a function error", func(t *testing.T) {
		_, err := invoke(t, f, "trailer", nil)
		if fe := functionError(t, err); fe.Type != "Fake.StreamError" || fe.Message != "stream broke" {
			t.Errorf("function error %+v", fe)
		}
	})

	t.Run("a response over 6 MB is refused", func(t *testing.T) {
		_, err := invoke(t, f, "big", map[string]any{"size": lambdaemu.MaxPayload + 1})
		if fe := functionError(t, err); fe.Type != lambdaemu.TypeResponseTooLarge {
			t.Errorf("function error %+v", fe)
		}
	})

	t.Run("a response of exactly 6 MB is delivered", func(t *testing.T) {
		out, err := f.Invoke(context.Background(), []byte(`{"action":"big","size":`+strconv.Itoa(lambdaemu.MaxPayload)+`}`))
		if err != nil || len(out) != lambdaemu.MaxPayload {
			t.Errorf("got %d bytes, %v", len(out), err)
		}
	})

	t.Run("a payload over 6 MB is refused before anything runs", func(t *testing.T) {
		before := f.Stats().Invocations
		_, err := f.Invoke(context.Background(), make([]byte, lambdaemu.MaxPayload+1))
		if !errors.Is(err, lambdaemu.ErrPayloadTooLarge) {
			t.Errorf("error %v, want ErrPayloadTooLarge", err)
		}
		if after := f.Stats().Invocations; after != before {
			t.Errorf("the refused payload was invoked")
		}
	})

	t.Run("an invocation left unanswered fails with Runtime.NoResponse and the environment is reused", func(t *testing.T) {
		// One instance only: with several, which one answers is up to the pool.
		f := newFunction(t, "rawruntime", func(c *lambdaemu.Config) { c.MaxInstances = 1 })
		pid := pidOf(t, f)
		_, err := invoke(t, f, "noresponse", nil)
		if fe := functionError(t, err); fe.Type != lambdaemu.TypeNoResponse {
			t.Errorf("function error %+v", fe)
		}
		if again := pidOf(t, f); again != pid {
			t.Errorf("pid %d answered, want %d", again, pid)
		}
	})
}

func TestEnvironment(t *testing.T) {
	t.Setenv("LAMBDAEMU_HARNESS_ONLY", "leak")
	f := newFunction(t, "rawruntime", func(c *lambdaemu.Config) {
		c.Name = "env-fn"
		c.MemoryMB = 256
		c.Region = "eu-west-1"
		c.Env = map[string]string{"FLAGPLANE_TABLE": "t1", "SHARED": "function"}
		c.HostEnv = map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1", "SHARED": "host"}
		c.Credentials = lambdaemu.Credentials{AccessKeyID: "AKID", SecretAccessKey: "SECRET", SessionToken: "TOKEN"}
	})
	got := mustInvoke(t, f, "env", nil)
	env := map[string]string{}
	for k, v := range got["env"].(map[string]any) {
		env[k] = v.(string)
	}
	dir := filepath.Dir(fakeBootstrap(t, "rawruntime"))

	t.Run("the process gets the variables Lambda sets", func(t *testing.T) {
		want := map[string]string{
			"_HANDLER": "bootstrap", "AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "eu-west-1",
			"AWS_LAMBDA_FUNCTION_NAME": "env-fn", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
			"AWS_LAMBDA_FUNCTION_VERSION": "$LATEST", "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
			"AWS_LAMBDA_LOG_GROUP_NAME": "/aws/lambda/env-fn", "LAMBDA_TASK_ROOT": dir,
			"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "SECRET", "AWS_SESSION_TOKEN": "TOKEN", "TZ": ":UTC",
		}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("%s=%q, want %q", k, env[k], v)
			}
		}
		if api := env["AWS_LAMBDA_RUNTIME_API"]; !strings.HasPrefix(api, "127.0.0.1:") {
			t.Errorf("AWS_LAMBDA_RUNTIME_API=%q, want 127.0.0.1:<port>", api)
		}
		if s := env["AWS_LAMBDA_LOG_STREAM_NAME"]; !strings.Contains(s, "/[$LATEST]") {
			t.Errorf("AWS_LAMBDA_LOG_STREAM_NAME=%q", s)
		}
	})

	t.Run("the process gets the function's variables and the host's, the host's last", func(t *testing.T) {
		if env["FLAGPLANE_TABLE"] != "t1" || env["AWS_ENDPOINT_URL_DYNAMODB"] != "http://127.0.0.1:1" || env["SHARED"] != "host" {
			t.Errorf("env %v", env)
		}
	})

	t.Run("the process gets nothing of the harness's own environment", func(t *testing.T) {
		if _, ok := env["LAMBDAEMU_HARNESS_ONLY"]; ok {
			t.Errorf("a variable of the harness leaked into the function")
		}
		if _, ok := env["HOME"]; ok {
			t.Errorf("HOME leaked into the function")
		}
	})

	t.Run("the process runs in the task root", func(t *testing.T) {
		if got["cwd"] != dir {
			t.Errorf("cwd %v, want %s", got["cwd"], dir)
		}
	})
}

func TestConfigChecks(t *testing.T) {
	bootstrap := fakeBootstrap(t, "rawruntime")
	notExec := filepath.Join(t.TempDir(), "bootstrap")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cfg  lambdaemu.Config
		want string
	}{
		{"a reserved name in the function's environment is refused", lambdaemu.Config{Name: "f", Bootstrap: bootstrap, Env: map[string]string{"AWS_REGION": "x"}}, "AWS_REGION"},
		{"a reserved name in the host environment is refused", lambdaemu.Config{Name: "f", Bootstrap: bootstrap, HostEnv: map[string]string{"AWS_LAMBDA_RUNTIME_API": "x"}}, "AWS_LAMBDA_RUNTIME_API"},
		{"a missing bootstrap is refused", lambdaemu.Config{Name: "f", Bootstrap: filepath.Join(t.TempDir(), "none")}, "no such file"},
		{"a bootstrap that is not executable is refused", lambdaemu.Config{Name: "f", Bootstrap: notExec}, "not an executable"},
		{"a function without a name is refused", lambdaemu.Config{Bootstrap: bootstrap}, "name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := lambdaemu.New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

func TestPool(t *testing.T) {
	t.Run("sequential invocations reuse one warm environment", func(t *testing.T) {
		f := newFunction(t, "rawruntime", nil)
		first := pidOf(t, f)
		for range 5 {
			if pid := pidOf(t, f); pid != first {
				t.Fatalf("pid %d answered, want the warm %d", pid, first)
			}
		}
		s := f.Stats()
		if len(s.ColdStarts) != 1 || len(s.Warm) != 5 || s.Invocations != 6 {
			t.Errorf("stats: %d cold starts, %d warm, %d invocations; want 1, 5, 6", len(s.ColdStarts), len(s.Warm), s.Invocations)
		}
	})

	t.Run("concurrent invocations start more environments, never more than the limit", func(t *testing.T) {
		f := newFunction(t, "rawruntime", func(c *lambdaemu.Config) { c.MaxInstances = 3 })
		const n = 9
		pids := make([]int, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m, err := invoke(t, f, "sleep", map[string]any{"ms": 150})
				errs[i] = err
				if err == nil {
					pids[i] = int(m["pid"].(float64))
				}
			}()
		}
		wg.Wait()
		distinct := map[int]bool{}
		for i := range n {
			if errs[i] != nil {
				t.Errorf("invocation %d: %v", i, errs[i])
			}
			distinct[pids[i]] = true
		}
		if len(distinct) < 2 || len(distinct) > 3 {
			t.Errorf("%d processes answered, want 2 or 3 (the limit is 3)", len(distinct))
		}
		if cs := len(f.Stats().ColdStarts); cs != len(distinct) {
			t.Errorf("%d cold starts recorded for %d processes", cs, len(distinct))
		}
	})

	t.Run("a caller that gives up gets its context's error and the environment stays", func(t *testing.T) {
		f := newFunction(t, "rawruntime", func(c *lambdaemu.Config) { c.MaxInstances = 1 })
		pid := pidOf(t, f)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := f.Invoke(ctx, []byte(`{"action":"sleep","ms":300}`))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v, want the context's deadline", err)
		}
		if again := pidOf(t, f); again != pid {
			t.Errorf("pid %d answered after the abandoned invocation, want %d", again, pid)
		}
	})
}

func TestFailures(t *testing.T) {
	t.Run("a crash fails the invocation and the next one gets a new process", func(t *testing.T) {
		out := &logtest.Buffer{}
		f := newFunction(t, "rawruntime", func(c *lambdaemu.Config) { c.Output = out })
		pid := pidOf(t, f)
		_, err := invoke(t, f, "crash", nil)
		fe := functionError(t, err)
		if fe.Type != lambdaemu.TypeExit || !strings.Contains(fe.Message, "exit status 2") {
			t.Errorf("function error %+v", fe)
		}
		if alive(pid) {
			t.Errorf("the crashed process %d is still there", pid)
		}
		if again := pidOf(t, f); again == pid {
			t.Errorf("the crashed process %d answered again", pid)
		}
		if !strings.Contains(out.String(), "[fake#1] crashing on purpose") {
			t.Errorf("the crash's output was not captured:\n%s", out)
		}
	})

	t.Run("an invocation past the timeout is killed and the next one gets a new process", func(t *testing.T) {
		f := newFunction(t, "rawruntime", func(c *lambdaemu.Config) { c.Timeout = 200 * time.Millisecond })
		pid := pidOf(t, f)
		began := time.Now()
		_, err := invoke(t, f, "sleep", map[string]any{"ms": 10000})
		if !lambdaemu.IsTimeout(err) || !strings.Contains(err.Error(), "Task timed out after 0.20 seconds") {
			t.Errorf("error %v, want a timeout", err)
		}
		if d := time.Since(began); d > 3*time.Second {
			t.Errorf("the timeout took %v", d)
		}
		if alive(pid) {
			t.Errorf("the timed-out process %d was not killed", pid)
		}
		if again := pidOf(t, f); again == pid {
			t.Errorf("the timed-out process answered again")
		}
		if s := f.Stats(); s.Timeouts != 1 || s.Errors != 1 {
			t.Errorf("stats count %d timeouts and %d errors, want 1 and 1", s.Timeouts, s.Errors)
		}
	})

	t.Run("a runtime that exits after answering is replaced without failing anything", func(t *testing.T) {
		f := newFunction(t, "rawruntime", nil)
		first := mustInvoke(t, f, "exitafter", nil)
		if pid := pidOf(t, f); float64(pid) == first["pid"] {
			t.Errorf("the exited process answered again")
		}
	})

	initCases := []struct {
		name, mode string
		check      func(t *testing.T, err error)
	}{
		{"an init error fails the invocation with the runtime's error", "error", func(t *testing.T, err error) {
			if fe := functionError(t, err); fe.Type != "Fake.InitError" || fe.Message != "missing configuration" {
				t.Errorf("function error %+v", fe)
			}
		}},
		{"a runtime that exits during init fails the invocation with Runtime.ExitError", "exit", func(t *testing.T, err error) {
			if fe := functionError(t, err); fe.Type != lambdaemu.TypeExit || !strings.Contains(fe.Message, "exit status 3") {
				t.Errorf("function error %+v", fe)
			}
		}},
		{"a runtime that never asks for an invocation times out in init", "hang", func(t *testing.T, err error) {
			if !lambdaemu.IsTimeout(err) || !strings.Contains(err.Error(), "INIT phase") {
				t.Errorf("error %v, want an init timeout", err)
			}
		}},
	}
	for _, c := range initCases {
		t.Run(c.name, func(t *testing.T) {
			f := newFunction(t, "rawruntime", func(cfg *lambdaemu.Config) {
				cfg.Env = map[string]string{"FAKE_INIT": c.mode}
				cfg.InitTimeout = 300 * time.Millisecond
			})
			for attempt := 1; attempt <= 2; attempt++ { // every invocation retries the init
				_, err := invoke(t, f, "pid", nil)
				c.check(t, err)
			}
			if s := f.Stats(); len(s.ColdStarts) != 0 || s.Errors != 2 {
				t.Errorf("stats: %d cold starts, %d errors; want 0 and 2", len(s.ColdStarts), s.Errors)
			}
		})
	}
}

func TestMeasurementsAndOutput(t *testing.T) {
	out := &logtest.Buffer{}
	f := newFunction(t, "rawruntime", func(c *lambdaemu.Config) { c.Output = out })
	mustInvoke(t, f, "log", nil)
	mustInvoke(t, f, "pid", nil)

	t.Run("a cold start records init and first response", func(t *testing.T) {
		s := f.Stats()
		if len(s.ColdStarts) != 1 {
			t.Fatalf("%d cold starts, want 1", len(s.ColdStarts))
		}
		cs := s.ColdStarts[0]
		if cs.Instance != 1 || cs.Init <= 0 || cs.FirstResponse < cs.Init || cs.FirstResponse > 10*time.Second {
			t.Errorf("cold start %+v", cs)
		}
		if len(s.Warm) != 1 || s.Warm[0] <= 0 {
			t.Errorf("warm latencies %v, want one", s.Warm)
		}
		t.Logf("fake bootstrap: init %v, first response %v, warm invoke %v", cs.Init, cs.FirstResponse, s.Warm[0])
	})

	t.Run("stdout and stderr lines are captured with the function name and instance", func(t *testing.T) {
		for _, want := range []string{"[fake#1] to stdout\n", "[fake#1] to stderr\n", "[fake#1] INIT_REPORT Init Duration: "} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("reset forgets the measurements", func(t *testing.T) {
		f.ResetStats()
		if s := f.Stats(); s.Invocations != 0 || len(s.ColdStarts) != 0 || len(s.Warm) != 0 {
			t.Errorf("stats after reset %+v", s)
		}
	})
}

func TestClose(t *testing.T) {
	long := newSignal("sleeping 10000")
	f := newFunction(t, "rawruntime", func(c *lambdaemu.Config) { c.Output = long })
	var wg sync.WaitGroup
	pids := make(chan int, 3)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := invoke(t, f, "sleep", map[string]any{"ms": 100})
			if err == nil {
				pids <- int(m["pid"].(float64))
			}
		}()
	}
	wg.Wait()
	close(pids)
	busy := make(chan error, 1)
	go func() {
		_, err := invoke(t, f, "sleep", map[string]any{"ms": 10000})
		busy <- err
	}()
	select {
	case <-long.seen:
	case <-time.After(10 * time.Second):
		t.Fatal("the long invocation did not start")
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	t.Run("close kills every process", func(t *testing.T) {
		for pid := range pids {
			if alive(pid) {
				t.Errorf("process %d survived Close", pid)
			}
		}
	})

	t.Run("an invocation in flight fails with ErrClosed", func(t *testing.T) {
		select {
		case err := <-busy:
			if !errors.Is(err, lambdaemu.ErrClosed) {
				t.Errorf("error %v, want ErrClosed", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the invocation in flight did not end")
		}
	})

	t.Run("later invocations fail with ErrClosed", func(t *testing.T) {
		if _, err := f.Invoke(context.Background(), []byte(`{}`)); !errors.Is(err, lambdaemu.ErrClosed) {
			t.Errorf("error %v, want ErrClosed", err)
		}
	})

	t.Run("close is idempotent", func(t *testing.T) {
		if err := f.Close(); err != nil {
			t.Errorf("second close: %v", err)
		}
	})
}

func TestCloseWhileStarting(t *testing.T) {
	f := newFunction(t, "rawruntime", func(c *lambdaemu.Config) { c.MaxInstances = 4 })
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := f.Invoke(context.Background(), []byte(`{"action":"sleep","ms":5000}`))
			errs <- err
		}()
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	timeout := time.After(10 * time.Second)
	for range n {
		select {
		case err := <-errs:
			if !errors.Is(err, lambdaemu.ErrClosed) {
				t.Errorf("error %v, want ErrClosed", err)
			}
		case <-timeout:
			t.Fatal("invocations did not end after Close")
		}
	}
}
