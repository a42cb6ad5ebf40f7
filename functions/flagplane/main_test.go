package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/logtest"
)

// binary is the flagplane command built once for these tests: they run it
// as a user does, through its command line, output and exit status.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "flagplane-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "flagplane")
	// -buildvcs=auto: stamp the revision when this is a checkout, whatever GOFLAGS says.
	// Without cgo and with -trimpath, as make build-local and make release
	// build it: the packages compiled for those (and for the tiers' tests)
	// are reused, where test-unit's CGO_ENABLED=1 would compile them all again.
	build := exec.Command("go", "build", "-buildvcs=auto", "-trimpath", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build flagplane: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is how one run of the command ended.
type result struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// runCLI runs the command to its end in dir and returns what it printed.
func runCLI(tb testing.TB, dir string, args ...string) result {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	default:
		tb.Fatalf("run flagplane %v: %v", args, err)
	}
	return res
}

func TestCommandLine(t *testing.T) {
	const overview = `flagplane serve [flags]`
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     []string // each must appear on stdout
		stderr     []string // each must appear on stderr
		quietOut   bool     // nothing on stdout
		quietError bool     // nothing on stderr
	}{
		{name: "a bare flagplane prints the usage to stderr and exits 2", args: nil, code: 2,
			stderr: []string{overview, "flagplane token create", "flagplane version", "README.md"}, quietOut: true},
		{name: "help prints the usage to stdout and exits 0", args: []string{"help"}, code: 0,
			stdout: []string{overview, "flagplane <command> -h", "README.md"}, quietError: true},
		{name: "-h prints the usage and exits 0", args: []string{"-h"}, code: 0, stdout: []string{overview}, quietError: true},
		{name: "--help prints the usage and exits 0", args: []string{"--help"}, code: 0, stdout: []string{overview}, quietError: true},
		{name: "help serve prints the flags of serve", args: []string{"help", "serve"}, code: 0,
			stdout: []string{"-addr", "-shutdown-grace"}, quietError: true},
		{name: "serve -h prints every flag of serve and exits 0 without serving", args: []string{"serve", "-h"}, code: 0,
			stdout: []string{"-addr", "-data", "-log-format", "-shutdown-grace", "-webhook-attempts", "-approvals"}, quietError: true},
		{name: "token -h prints the token usage and exits 0", args: []string{"token", "-h"}, code: 0,
			stdout: []string{"flagplane token create -name NAME"}, quietError: true},
		{name: "token create -h prints its flags and exits 0", args: []string{"token", "create", "-h"}, code: 0,
			stdout: []string{"-name", "-role", "-data", "-dynamo"}, quietError: true},
		{name: "table create -h prints its flags and exits 0", args: []string{"table", "create", "-h"}, code: 0,
			stdout: []string{"-name"}, quietError: true},
		{name: "version -h prints its usage and exits 0", args: []string{"version", "-h"}, code: 0,
			stdout: []string{"flagplane version"}, quietError: true},
		{name: "-version prints the version as version does and exits 0", args: []string{"-version"}, code: 0,
			stdout: []string{"flagplane ", "module   github.com/flagplane/flagplane"}, quietError: true},
		{name: "--version prints the version as version does and exits 0", args: []string{"--version"}, code: 0,
			stdout: []string{"flagplane ", "module   github.com/flagplane/flagplane"}, quietError: true},
		{name: "an unknown command names it, prints the usage and exits 2", args: []string{"serv"}, code: 2,
			stderr: []string{`unknown command "serv"`, overview}, quietOut: true},
		{name: "a leading flag is not a command and exits 2", args: []string{"-addr", "127.0.0.1:0"}, code: 2,
			stderr: []string{`unknown command "-addr"`}, quietOut: true},
		{name: "token without create prints the token usage and exits 2", args: []string{"token"}, code: 2,
			stderr: []string{"flagplane token create"}, quietOut: true},
		{name: "a flag serve does not know is named, with the flags of serve, and exits 2", args: []string{"serve", "-port", "80"}, code: 2,
			stderr: []string{"-port", "-addr"}, quietOut: true},
		{name: "a log format other than text or json is refused with exit 2", args: []string{"serve", "-log-format", "xml"}, code: 2,
			stderr: []string{"-log-format must be text or json"}, quietOut: true},
		{name: "a shutdown grace of zero is refused with exit 2", args: []string{"serve", "-shutdown-grace", "0s"}, code: 2,
			stderr: []string{"-shutdown-grace must be positive"}, quietOut: true},
		{name: "an SDK heartbeat under a second is refused with exit 2", args: []string{"serve", "-sdk-heartbeat", "10ms"}, code: 2,
			stderr: []string{"-sdk-heartbeat must be at least 1s"}, quietOut: true},
		{name: "token create without a name fails with exit 1", args: []string{"token", "create"}, code: 1,
			stderr: []string{"-name is required"}, quietOut: true},
		{name: "serve -h names the rate-limit, CORS, webhook and TLS flags", args: []string{"serve", "-h"}, code: 0,
			stdout: []string{"-rate-limit-global", "-rate-limit-route", "-cors-origins", "-webhooks-allow-private", "-tls-cert", "-tls-key", "-sdk-heartbeat"}, quietError: true},
		{name: "-tls-cert without -tls-key is refused with exit 2", args: []string{"serve", "-tls-cert", "cert.pem"}, code: 2,
			stderr: []string{"-tls-cert and -tls-key go together"}, quietOut: true},
		{name: "-tls-key without -tls-cert is refused with exit 2", args: []string{"serve", "-tls-key", "key.pem"}, code: 2,
			stderr: []string{"-tls-cert and -tls-key go together"}, quietOut: true},
		{name: "a certificate that cannot be read fails with exit 1 before anything is served or created", args: []string{"serve", "-addr", "127.0.0.1:0", "-tls-cert", "missing.pem", "-tls-key", "missing-key.pem"}, code: 1,
			stderr: []string{"missing.pem"}, quietOut: true},
		{name: "a negative rate limit is refused with exit 2", args: []string{"serve", "-rate-limit-route", "-1"}, code: 2,
			stderr: []string{"-rate-limit-route must be 0 (no limit)"}, quietOut: true},
		{name: "a CORS origin with a path is refused with exit 2", args: []string{"serve", "-cors-origins", "https://app.example.com/x"}, code: 2,
			stderr: []string{"-cors-origins", "scheme://host"}, quietOut: true},
		{name: "-webhooks-allow-private takes true or false only", args: []string{"serve", "-webhooks-allow-private=maybe"}, code: 2,
			stderr: []string{"-webhooks-allow-private"}, quietOut: true},
		{name: "the usage names the relay", args: []string{"help"}, code: 0, stdout: []string{"flagplane relay [flags]"}, quietError: true},
		{name: "relay -h prints its flags and exits 0 without serving", args: []string{"relay", "-h"}, code: 0,
			stdout: []string{"-addr", "-poll", "-resync", "-margin", "-sdk-heartbeat", "-cors-origins", "-shutdown-grace"}, quietError: true},
		{name: "a relay poll under 10ms is refused with exit 2", args: []string{"relay", "-poll", "1ms"}, code: 2,
			stderr: []string{"-poll must be at least 10ms"}, quietOut: true},
		{name: "a relay resync under a second is refused with exit 2", args: []string{"relay", "-resync", "100ms"}, code: 2,
			stderr: []string{"-resync must be at least 1s"}, quietOut: true},
		{name: "a relay without FLAGPLANE_TABLE fails with exit 1 naming it", args: []string{"relay", "-addr", "127.0.0.1:0"}, code: 1,
			stderr: []string{"FLAGPLANE_TABLE is not set"}, quietOut: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			res := runCLI(t, dir, tt.args...)
			if res.code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", res.code, tt.code, res.stdout, res.stderr)
			}
			for _, want := range tt.stdout {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
				}
			}
			for _, want := range tt.stderr {
				if !strings.Contains(res.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
				}
			}
			if tt.quietOut && res.stdout != "" {
				t.Errorf("stdout should be empty: %s", res.stdout)
			}
			if tt.quietError && res.stderr != "" {
				t.Errorf("stderr should be empty: %s", res.stderr)
			}
			// No command line here may start a server or leave a data file behind.
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("the command left %s in its folder", entries[0].Name())
			}
		})
	}
}

func TestVersion(t *testing.T) {
	res := runCLI(t, t.TempDir(), "version")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	t.Run("it names the module and its version", func(t *testing.T) {
		if !strings.HasPrefix(res.stdout, "flagplane ") || !strings.Contains(res.stdout, "module   github.com/flagplane/flagplane") {
			t.Errorf("output:\n%s", res.stdout)
		}
	})
	t.Run("it names the commit the binary was built from", func(t *testing.T) {
		m := regexp.MustCompile(`(?m)^revision ([0-9a-f]{40})`).FindStringSubmatch(res.stdout)
		if exec.Command("git", "rev-parse", "--git-dir").Run() != nil {
			t.Skip("not a git checkout: the build has no revision to show")
		}
		if m == nil {
			t.Fatalf("no revision in:\n%s", res.stdout)
		}
		if err := exec.Command("git", "cat-file", "-e", m[1]+"^{commit}").Run(); err != nil {
			t.Errorf("revision %s is not a commit of this repository", m[1])
		}
	})
}

// server is a running `flagplane serve` with JSON logs.
type server struct {
	URL    string
	data   string
	cmd    *exec.Cmd
	stdout logtest.Buffer
	logs   logtest.Buffer
	done   chan struct{}
	exit   int
}

var tokenPattern = regexp.MustCompile(`api-[0-9a-f-]{36}`)

// startServer runs serve on a free loopback port with the data in data,
// and returns once it listens. It is killed when the test ends.
func startServer(tb testing.TB, data string, args ...string) *server {
	tb.Helper()
	s := &server{data: data, done: make(chan struct{})}
	args = append([]string{"serve", "-addr", "127.0.0.1:0", "-data", data, "-log-format", "json"}, args...)
	s.cmd = exec.Command(binary, args...)
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.logs
	if err := s.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() {
		s.cmd.Wait()
		s.exit = s.cmd.ProcessState.ExitCode()
		close(s.done)
	}()
	tb.Cleanup(func() {
		select {
		case <-s.done:
		default:
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	line := s.waitForLog(tb, "flagplane started", 20*time.Second)
	addr, _ := line["addr"].(string)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		tb.Fatalf("start line has no address: %v", line)
	}
	// A server on every interface is reached through loopback: tests talk to 127.0.0.1 only.
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme := "http"
	if u, _ := line["url"].(string); strings.HasPrefix(u, "https://") {
		scheme = "https"
	}
	s.URL = scheme + "://" + net.JoinHostPort(host, port)
	return s
}

// adminToken is the token the first start printed.
func (s *server) adminToken(tb testing.TB) string {
	tb.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if tok := tokenPattern.FindString(s.stdout.String()); tok != "" {
			return tok
		}
	}
	tb.Fatalf("no admin token printed; stdout: %s", s.stdout.String())
	return ""
}

// logLines decodes every log line so far; each must be JSON.
func (s *server) logLines(tb testing.TB) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for _, raw := range strings.Split(strings.TrimSpace(s.logs.String()), "\n") {
		if raw == "" {
			continue
		}
		var line map[string]any
		if err := json.Unmarshal([]byte(raw), &line); err != nil {
			tb.Fatalf("log line is not JSON: %s", raw)
		}
		out = append(out, line)
	}
	return out
}

// waitForLog returns the first log line with message msg.
func (s *server) waitForLog(tb testing.TB, msg string, within time.Duration) map[string]any {
	tb.Helper()
	deadline := time.Now().Add(within)
	for {
		for _, line := range s.logLines(tb) {
			if line["msg"] == msg {
				return line
			}
		}
		select {
		case <-s.done:
			// One last look: the line may have come just before the exit.
			for _, line := range s.logLines(tb) {
				if line["msg"] == msg {
					return line
				}
			}
			tb.Fatalf("flagplane exited %d before logging %q:\n%s", s.exit, msg, s.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no %q line within %s:\n%s", msg, within, s.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop sends sig and waits for the process to end, returning its exit status.
func (s *server) stop(tb testing.TB, sig os.Signal) int {
	tb.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		tb.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		tb.Fatalf("flagplane still running 30 s after %s:\n%s", sig, s.logs.String())
	}
	return s.exit
}

// do sends one request and returns the status and body.
func do(tb testing.TB, method, url, token, body string, headers ...string) (int, string) {
	tb.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestDataFileInUse(t *testing.T) {
	data := filepath.Join(t.TempDir(), "flagplane.db")
	startServer(t, data)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"token create on the file of a running server says it is in use and what to do instead",
			[]string{"token", "create", "-name", "ci", "-data", data},
			[]string{"in use", "Stop the server", "POST /api/v2/tokens"}},
		{"a second serve on the same file says it is in use and how to serve another",
			[]string{"serve", "-addr", "127.0.0.1:0", "-data", data},
			[]string{"in use", "stop that server", "-data"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runCLI(t, t.TempDir(), tt.args...)
			if res.code != 1 {
				t.Errorf("exit %d, want 1: %s", res.code, res.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("stderr lacks %q: %s", w, res.stderr)
				}
			}
			if res.took > 5*time.Second {
				t.Errorf("it took %s to give up, want a few seconds at most", res.took)
			}
		})
	}
}

func TestAddressInUse(t *testing.T) {
	// GIVEN a port another process listens on
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	// WHEN serve is asked to listen there
	res := runCLI(t, t.TempDir(), "serve", "-addr", addr, "-data", filepath.Join(t.TempDir(), "flagplane.db"))
	// THEN it fails at once, naming the address and every way to pick another
	if res.code != 1 {
		t.Errorf("exit %d, want 1: %s", res.code, res.stderr)
	}
	for _, w := range []string{addr, "address already in use", "-addr", "FLAGPLANE_ADDR", "make run ADDR="} {
		if !strings.Contains(res.stderr, w) {
			t.Errorf("stderr lacks %q: %s", w, res.stderr)
		}
	}
}

// TestMakeRunAddress holds make run to its address and data file: ADDR= and
// DATA= first, then the server's own FLAGPLANE_ADDR and FLAGPLANE_DATA, then
// the defaults.
func TestMakeRunAddress(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	tests := []struct {
		name      string
		env, args []string
		want      string
	}{
		{"with nothing set it serves 127.0.0.1:8080 on flagplane.db", nil, nil, "-addr 127.0.0.1:8080 -data flagplane.db"},
		{"FLAGPLANE_ADDR and FLAGPLANE_DATA in the environment are used", []string{"FLAGPLANE_ADDR=127.0.0.1:9191", "FLAGPLANE_DATA=other.db"}, nil,
			"-addr 127.0.0.1:9191 -data other.db"},
		{"ADDR= and DATA= win over the environment", []string{"FLAGPLANE_ADDR=127.0.0.1:9191", "FLAGPLANE_DATA=other.db"},
			[]string{"ADDR=127.0.0.1:9090", "DATA=mine.db"}, "-addr 127.0.0.1:9090 -data mine.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("make", append([]string{"-n", "--no-print-directory", "-C", repoRoot(t), "run"}, tt.args...)...)
			var env []string
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "FLAGPLANE_ADDR=") && !strings.HasPrefix(kv, "FLAGPLANE_DATA=") &&
					!strings.HasPrefix(kv, "ADDR=") && !strings.HasPrefix(kv, "DATA=") && !strings.HasPrefix(kv, "MAKEFLAGS=") {
					env = append(env, kv)
				}
			}
			cmd.Env = append(env, tt.env...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("make -n run: %v\n%s", err, out)
			}
			var serveLine string
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, "flagplane serve") {
					serveLine = line
				}
			}
			if !strings.HasSuffix(strings.TrimSpace(serveLine), "serve "+tt.want) {
				t.Errorf("make run runs %q, want it to end in %q", serveLine, "serve "+tt.want)
			}
		})
	}
}

func TestServeLogsAndHealth(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "flagplane.db"))
	token := s.adminToken(t)

	start := s.waitForLog(t, "flagplane started", time.Second)
	t.Run("the start line names the address, the data file and the version", func(t *testing.T) {
		if start["data"] != s.data || start["addr"] == "" || start["version"] == "" || start["version"] == nil {
			t.Errorf("start line %v", start)
		}
	})

	t.Run("GET /healthz answers 200 ok without a token, and nothing else", func(t *testing.T) {
		status, body := do(t, "GET", s.URL+"/healthz", "", "")
		if status != 200 || strings.TrimSpace(body) != `{"status":"ok"}` {
			t.Errorf("%d %s", status, body)
		}
	})

	status, _ := do(t, "GET", s.URL+"/api/v2/projects/no-such-project", token, "", "X-Request-Id", "trace-42:a.b_c")
	if status != 404 {
		t.Fatalf("status %d", status)
	}
	_, tokens := do(t, "GET", s.URL+"/api/v2/tokens", token, "")
	var list struct {
		Items []struct {
			ID string `json:"_id"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(tokens), &list); err != nil || len(list.Items) != 1 {
		t.Fatalf("token list %s (%v)", tokens, err)
	}

	// The access line of a request is written after its answer: wait for it.
	var line map[string]any
	for deadline := time.Now().Add(5 * time.Second); line == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, l := range s.logLines(t) {
			if l["msg"] == "request" && l["requestId"] == "trace-42:a.b_c" {
				line = l
			}
		}
	}
	if line == nil {
		t.Fatalf("no access line for the request:\n%s", s.logs.String())
	}
	tests := []struct {
		name  string
		field string
		want  any
	}{
		{"the access line names the method", "method", "GET"},
		{"the access line names the catalog route, not the raw path", "route", "/api/v2/projects/{projectKey}"},
		{"the access line names the status", "status", float64(404)},
		{"the access line carries the client's request id", "requestId", "trace-42:a.b_c"},
		{"the access line names the caller by token id", "principal", list.Items[0].ID},
		{"the access line is at info level", "level", "INFO"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if line[tt.field] != tt.want {
				t.Errorf("%s is %v, want %v (line %v)", tt.field, line[tt.field], tt.want, line)
			}
		})
	}
	t.Run("the access line has the duration in milliseconds", func(t *testing.T) {
		if d, ok := line["durationMs"].(float64); !ok || d < 0 {
			t.Errorf("durationMs %v", line["durationMs"])
		}
	})
	t.Run("no log line shows the access token", func(t *testing.T) {
		if strings.Contains(s.logs.String(), token) || strings.Contains(s.logs.String(), strings.TrimPrefix(token, "api-")) {
			t.Errorf("the token is in the logs:\n%s", s.logs.String())
		}
	})
	t.Run("SIGINT stops the server with a shutdown line and exit 0", func(t *testing.T) {
		if code := s.stop(t, os.Interrupt); code != 0 {
			t.Errorf("exit %d:\n%s", code, s.logs.String())
		}
		s.waitForLog(t, "flagplane stopped", time.Second)
	})
}

func TestServeLogsTextByDefault(t *testing.T) {
	data := filepath.Join(t.TempDir(), "flagplane.db")
	cmd := exec.Command(binary, "serve", "-addr", "127.0.0.1:0", "-data", data)
	var logs logtest.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	start := regexp.MustCompile(`level=INFO msg="flagplane started" addr=127\.0\.0\.1:\d+ data=\S+ version=`)
	for deadline := time.Now().Add(20 * time.Second); !start.MatchString(logs.String()); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no text start line:\n%s", logs.String())
		}
	}
}

// TestSIGTERMWithWritesInFlight stops a server while writes are in
// flight, then starts it again on the same file: every write that was
// acknowledged must be there. Unacknowledged ones may or may not be.
func TestSIGTERMWithWritesInFlight(t *testing.T) {
	data := filepath.Join(t.TempDir(), "flagplane.db")
	s := startServer(t, data, "-shutdown-grace", "10s")
	token := s.adminToken(t)
	addr := strings.TrimPrefix(s.URL, "http://")

	// One write is held in flight on purpose: its headers and half its body
	// are sent now, the rest only once the server is stopping.
	slowBody := `{"key":"slow","name":"Slow"}`
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "POST /api/v2/projects HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		addr, token, len(slowBody), slowBody[:10])

	// Writers create projects as fast as the server answers, each until its first failure.
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	stopping := make(chan struct{})
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 20 * time.Second}
			for i := 0; ; i++ {
				key := fmt.Sprintf("w%d-%d", w, i)
				req, _ := http.NewRequest("POST", s.URL+"/api/v2/projects", strings.NewReader(`{"key":"`+key+`","name":"`+key+`"}`))
				req.Header.Set("Authorization", token)
				req.Header.Set("Content-Type", "application/json")
				res, err := client.Do(req)
				if err != nil {
					return // not acknowledged: stored or not, both are fine
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusCreated {
					select {
					case <-stopping:
						return
					default:
						t.Errorf("create %s: %d before the stop", key, res.StatusCode)
						return
					}
				}
				mu.Lock()
				acked = append(acked, key)
				mu.Unlock()
			}
		}()
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 40 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d writes acknowledged in 20 s", n)
		}
	}

	close(stopping)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.waitForLog(t, "flagplane stopping: no new requests, finishing those in flight", 10*time.Second)

	t.Run("once stopping, the server accepts no new connection", func(t *testing.T) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Error("a new connection was accepted after SIGTERM")
		}
	})
	t.Run("a write in flight when SIGTERM arrived finishes and is acknowledged", func(t *testing.T) {
		if _, err := io.WriteString(slow, slowBody[10:]); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(slow), nil)
		if err != nil {
			t.Fatalf("no answer to the write in flight: %v", err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("the write in flight answered %d", res.StatusCode)
		}
		mu.Lock()
		acked = append(acked, "slow")
		mu.Unlock()
	})
	wg.Wait()
	t.Run("the server exits 0 after a shutdown line", func(t *testing.T) {
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Fatal("still running 30 s after SIGTERM")
		}
		if s.exit != 0 {
			t.Errorf("exit %d:\n%s", s.exit, s.logs.String())
		}
		s.waitForLog(t, "flagplane stopped", time.Second)
	})

	t.Run("every acknowledged write is in the data file after a restart", func(t *testing.T) {
		again := startServer(t, data)
		var missing []string
		for _, key := range acked {
			if status, body := do(t, "GET", again.URL+"/api/v2/projects/"+key, token, ""); status != http.StatusOK {
				missing = append(missing, fmt.Sprintf("%s (%d %s)", key, status, body))
			}
		}
		if len(missing) > 0 {
			t.Errorf("%d of %d acknowledged writes are missing: %v", len(missing), len(acked), missing)
		}
		t.Logf("%d acknowledged writes, all present", len(acked))
	})
}

func TestShutdownGrace(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "flagplane.db"), "-shutdown-grace", "500ms")
	token := s.adminToken(t)
	addr := strings.TrimPrefix(s.URL, "http://")
	// A write whose body never finishes keeps its request in flight forever.
	stuck, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	fmt.Fprintf(stuck, "POST /api/v2/projects HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"key\":", addr, token)
	time.Sleep(100 * time.Millisecond) // let the server read the headers

	began := time.Now()
	code := s.stop(t, syscall.SIGTERM)
	took := time.Since(began)
	t.Run("a request still running after the grace is cut off and the server exits 0", func(t *testing.T) {
		if code != 0 {
			t.Errorf("exit %d:\n%s", code, s.logs.String())
		}
		s.waitForLog(t, "flagplane cut off requests still running after the grace", time.Second)
		s.waitForLog(t, "flagplane stopped", time.Second)
	})
	t.Run("the server waits about the grace, not the default 10 s", func(t *testing.T) {
		if took < 400*time.Millisecond || took > 5*time.Second {
			t.Errorf("stopped after %s with a grace of 500ms", took)
		}
	})
	t.Run("the cut-off request got no answer", func(t *testing.T) {
		stuck.SetReadDeadline(time.Now().Add(2 * time.Second))
		if res, err := http.ReadResponse(bufio.NewReader(stuck), nil); err == nil {
			res.Body.Close()
			t.Errorf("it was answered %d", res.StatusCode)
		}
	})
}
