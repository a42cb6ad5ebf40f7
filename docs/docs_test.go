// Package docs_test runs the documentation as a test: `make test-docs`
// (TestDocs) runs every ```sh block of README.md and of each docs/*.md page,
// in order, and fails on a block that exits non-zero or whose stdout differs
// from the ```output block after it. `make test-docs DOCS=docs/x.md` runs
// only the pages named.
//
// How a page runs:
//   - README.md runs alone, as a newcomer would: its `make run` block
//     (<!-- doc: background -->) starts the server with ADDR=127.0.0.1:0 and
//     DATA in a temp dir; the runner reads the token it printed and the
//     address it bound from its output, then puts them in place of the example
//     token api-2b1f0c1e-7a53-4d7c-9a51-0d4f7c2e9b10 and 127.0.0.1:8080 in the
//     blocks that follow.
//   - Every docs/*.md page gets a fresh `bin/flagplane serve` (free port, temp
//     data), then the README's blocks under its "Quick start" heading (up to
//     the next heading of that level or higher; background blocks left out),
//     then its own blocks. Pages run side by side, each with its own server.
//   - A page's blocks run in one bash (set -euo pipefail) whose working
//     directory starts at the repository's root and whose TMPDIR is the page's
//     temp dir; curl is a function adding --fail-with-body, except in a block
//     after <!-- doc: http-error -->. `flagplane` on PATH is bin/flagplane.
//   - <!-- doc: background --> starts a sh block in the background (stopped at
//     the page's end), then waits until every 127.0.0.1:PORT it names accepts
//     connections. <!-- doc: not run: reason --> skips the next block (logged).
//     <!-- doc: file PATH --> writes the next block (any language, e.g. ```go)
//     to PATH in the session's current directory, so the sh blocks after it
//     build exactly the text the page shows. <!-- doc: port N --> before a
//     block gives the page a free port in place of N in that block and every
//     block and output after it, so a page's own servers (a webhook receiver,
//     Redis) never collide with another run's.
//   - ```output after a sh block (only blank lines between): the block's
//     stdout must match it line by line; "…" in a line matches any text, a
//     line of only "…" any number of lines; trailing whitespace is ignored.
//
// The SDK snippets (docs/sdks.md) fetch modules and npm packages with the
// reader's commands; the session sets GOSUMDB=off (the modules come from the
// module cache or GOPROXY) and npm_config_prefer_offline, so warm caches
// are used. Without FLAGPLANE_DOCS_BIN (set by make test-docs)
// TestDocs skips: test-unit runs only the parser's and matcher's tests here.
package docs_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	exampleToken = "api-2b1f0c1e-7a53-4d7c-9a51-0d4f7c2e9b10"
	exampleAddr  = "127.0.0.1:8080"
	blockTimeout = 15 * time.Minute
)

// groups holds the process groups the sessions started, stopped on
// SIGINT or SIGTERM too (a test's cleanups do not run then), so a stopped
// run leaves no server behind.
var groups = struct {
	sync.Mutex
	m map[int]bool
}{m: map[int]bool{}}

func track(pgid int, on bool) {
	groups.Lock()
	defer groups.Unlock()
	if on {
		groups.m[pgid] = true
	} else {
		delete(groups.m, pgid)
	}
}

func stopOnSignal() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-c
		groups.Lock()
		for pgid := range groups.m {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		groups.Unlock()
		fmt.Fprintf(os.Stderr, "docs: %v: stopped every page's processes\n", sig)
		os.Exit(1)
	}()
}

var (
	tokenRE = regexp.MustCompile(`api-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// flagplane serve logs `msg="flagplane started" addr=127.0.0.1:PORT`.
	startedRE = regexp.MustCompile(`flagplane started" addr=(\S+)`)
	addrRE    = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
)

func TestDocs(t *testing.T) {
	bin := os.Getenv("FLAGPLANE_DOCS_BIN")
	if bin == "" {
		t.Skip("make test-docs runs the docs (FLAGPLANE_DOCS_BIN names bin/flagplane)")
	}
	stopOnSignal()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required to run the docs: %v", tool, err)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	readmePath := filepath.Join(root, "README.md")
	if p := os.Getenv("FLAGPLANE_DOCS_README"); p != "" {
		readmePath = p // another README's quick start, to try a rewrite
	}
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := quickStart("README.md", string(readme))
	if err != nil {
		t.Fatalf("%v\n(every page starts with README.md's quick start; FLAGPLANE_DOCS_README=path takes another README's)", err)
	}
	pages := []string{"README.md"}
	more, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	sort.Strings(more)
	for _, p := range more {
		pages = append(pages, "docs/"+filepath.Base(p))
	}
	if only := strings.Fields(os.Getenv("FLAGPLANE_DOCS")); len(only) > 0 {
		pages = nil
		for _, p := range only {
			p = filepath.ToSlash(filepath.Clean(p))
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Fatalf("DOCS names %s: %v", p, err)
			}
			pages = append(pages, p)
		}
	}
	for _, page := range pages {
		t.Run(page, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(root, page)
			if page == "README.md" {
				path = readmePath
			}
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			blocks, err := parse(page, string(text))
			if err != nil {
				t.Fatal(err)
			}
			runPage(t, root, bin, page, qs, blocks)
		})
	}
}

// runPage runs one page's blocks in a session of their own.
func runPage(t *testing.T, root, bin, page string, qs, blocks []*block) {
	began := time.Now()
	runs := 0
	for _, b := range blocks {
		if b.notRun == "" && (b.lang == "sh" || b.filePath != "") {
			runs++
		}
	}
	if runs == 0 {
		// Nothing to run: no server, no quick start (prose pages, or only not-run blocks).
		for _, b := range blocks {
			if b.notRun != "" {
				t.Logf("%s: not run: %s", b.where(), b.notRun)
			}
		}
		t.Logf("%s: no block to run", page)
		return
	}
	s := newSession(t, root, bin)
	// What `make run` uses: a free port and a data file of the page's own.
	s.env = append(s.env, "ADDR=127.0.0.1:0", "DATA="+filepath.Join(s.dir, "flagplane.db"))
	if page != "README.md" {
		s.startServer()
	}
	s.start()
	if page != "README.md" {
		for _, b := range qs {
			if b.lang == "sh" && !b.background && b.notRun == "" || b.filePath != "" {
				b := *b
				b.output = nil // checked in README.md's own run
				if !s.run(&b) {
					t.Fatalf("the README's quick start failed (above), so %s could not run", page)
				}
			}
		}
		s.ran = 0 // counted for the page alone
	}
	for _, b := range blocks {
		if b.notRun != "" {
			t.Logf("%s: not run: %s", b.where(), b.notRun)
			s.notRun++
			continue
		}
		if b.lang != "sh" && b.filePath == "" {
			continue
		}
		if !s.run(b) {
			break
		}
	}
	t.Logf("%s: %d sh blocks run, %d outputs checked, %d not run, %.1fs",
		page, s.ran, s.checked, s.notRun, time.Since(began).Seconds())
}

// session is one page's bash and server.
type session struct {
	t        *testing.T
	root     string
	bin      string
	dir      string // the page's temp dir: blocks, outputs, TMPDIR, data
	env      []string
	subst    []string          // example -> real pairs
	ports    map[string]string // <!-- doc: port N --> -> the free port in its place
	portRE   *regexp.Regexp    // matches any of ports' keys as a whole number
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	ctl      *bufio.Scanner
	pgid     int
	n        int
	ran      int
	checked  int
	notRun   int
	bgOutput []string // files holding background blocks' output
}

func newSession(t *testing.T, root, bin string) *session {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"TMPDIR="+filepath.Join(dir, "tmp"),
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GOSUMDB=off",
		"npm_config_prefer_offline=true", "npm_config_audit=false", "npm_config_fund=false",
		"npm_config_update_notifier=false", "npm_config_loglevel=error",
		"NO_COLOR=1",
	)
	return &session{t: t, root: root, bin: bin, dir: dir, env: env}
}

// startServer starts bin/flagplane serve on a free port with fresh data,
// and learns its token and address.
func (s *session) startServer() {
	t := s.t
	logPath := filepath.Join(s.dir, "server.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(s.bin, "serve", "-addr", "127.0.0.1:0", "-data", filepath.Join(s.dir, "server.db"))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = s.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	track(cmd.Process.Pid, true)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		track(cmd.Process.Pid, false)
		log.Close()
	})
	token, addr := s.awaitServer(logPath, done)
	s.subst = []string{exampleToken, token, exampleAddr, addr}
}

// awaitServer waits until the output at path shows a token and a bound
// address that answers, and returns them.
func (s *session) awaitServer(path string, exited <-chan struct{}) (token, addr string) {
	t := s.t
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, _ := os.ReadFile(path)
		token = tokenRE.FindString(string(out))
		if m := startedRE.FindSubmatch(out); m != nil {
			addr = string(m[1])
		}
		if token != "" && addr != "" {
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				return token, addr
			}
		}
		select {
		case <-exited:
			t.Fatalf("the server exited before it answered; its output:\n%s", out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no token and address from the server after 2 minutes; its output:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// start starts the page's bash, which reads the blocks' commands on stdin
// and writes one control line per block done on stdout.
func (s *session) start() {
	t := s.t
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir = s.root
	cmd.Env = s.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := os.Create(filepath.Join(s.dir, "bash.stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.cmd, s.ctl, s.pgid = cmd, bufio.NewScanner(out), cmd.Process.Pid
	track(s.pgid, true)
	t.Cleanup(s.stop)
	s.send("set -euo pipefail\n" +
		"curl() { command curl --fail-with-body \"$@\"; }\n")
}

// stop ends the bash and everything it started (its process group).
func (s *session) stop() {
	s.stdin.Close()
	pgid := -s.pgid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	track(s.pgid, false)
}

func (s *session) send(cmds string) {
	if _, err := io.WriteString(s.stdin, cmds); err != nil {
		s.t.Fatalf("writing to bash: %v", err)
	}
}

// replace puts the real token, address and ports in place of the examples.
func (s *session) replace(text string) string {
	if len(s.subst) > 0 {
		text = strings.NewReplacer(s.subst...).Replace(text)
	}
	if s.portRE != nil {
		text = s.portRE.ReplaceAllStringFunc(text, func(n string) string { return s.ports[n] })
	}
	return text
}

// usePorts gives each port a free one in its place from now on.
func (s *session) usePorts(ports []string) {
	if len(ports) == 0 {
		return
	}
	if s.ports == nil {
		s.ports = map[string]string{}
	}
	for _, p := range ports {
		if _, ok := s.ports[p]; !ok {
			s.ports[p] = strconv.Itoa(freePort(s.t))
		}
	}
	names := make([]string, 0, len(s.ports))
	for p := range s.ports {
		names = append(names, regexp.QuoteMeta(p))
	}
	s.portRE = regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
}

// freePort asks the kernel for a port of 127.0.0.1 no one listens on. It
// could be taken before the block binds it; the block then fails plainly.
func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// run runs one block and reports whether the page may go on.
func (s *session) run(b *block) bool {
	t := s.t
	s.n++
	s.usePorts(b.ports)
	text := s.replace(b.text)
	if b.filePath != "" {
		// Written in the session's current directory, as the page's reader would.
		if b.lang == "sh" {
			t.Errorf("%s: <!-- doc: file --> goes before a block of the file's language, not sh", b.where())
			return false
		}
		pwdFile := filepath.Join(s.dir, "pwd")
		s.send(fmt.Sprintf("pwd >%q\n", pwdFile))
		if !s.await(b, "", "") {
			return false
		}
		pwd, _ := os.ReadFile(pwdFile)
		path := b.filePath
		if !filepath.IsAbs(path) {
			path = filepath.Join(strings.TrimSpace(string(pwd)), path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return true
	}
	script := filepath.Join(s.dir, fmt.Sprintf("block%d.sh", s.n))
	if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	outPath, errPath := script+".out", script+".err"
	s.ran++
	if b.background {
		s.send(fmt.Sprintf("( source %q ) >%q 2>&1 </dev/null &\n", script, outPath))
		if !s.await(b, outPath, outPath) {
			return false
		}
		return s.awaitBackground(b, text, outPath)
	}
	cmd := fmt.Sprintf("source %q >%q 2>%q </dev/null\n", script, outPath, errPath)
	if b.httpError {
		cmd = "unset -f curl\n" + cmd + "curl() { command curl --fail-with-body \"$@\"; }\n"
	}
	s.send(cmd)
	if !s.await(b, outPath, errPath) {
		return false
	}
	if b.output != nil {
		s.checked++
		got, _ := os.ReadFile(outPath)
		want := s.replace(b.output.text)
		if !matchOutput(want, string(got)) {
			errOut, _ := os.ReadFile(errPath)
			t.Errorf("%s: the output differs from the output block at %s (- expected, + printed):\n%s\nthe block:\n%s\nstderr:\n%s",
				b.where(), b.output.where(), diffOutput(want, string(got)), indent(text), indent(string(errOut)))
		}
	}
	return true
}

// await waits for block b's control line; on bash's exit it fails with the
// block's text and output.
func (s *session) await(b *block, outPath, errPath string) bool {
	t := s.t
	mark := fmt.Sprintf("__flagplane_docs_done %d", s.n)
	s.send("echo '" + mark + "'\n")
	got := make(chan bool, 1)
	go func() {
		for s.ctl.Scan() {
			if s.ctl.Text() == mark {
				got <- true
				return
			}
		}
		got <- false
	}()
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	select {
	case ok := <-got:
		if ok {
			return true
		}
	case <-ctx.Done():
		_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
	}
	err := s.cmd.Wait()
	var exit *exec.ExitError
	code := "?"
	if errors.As(err, &exit) {
		code = fmt.Sprint(exit.ExitCode())
	}
	if ctx.Err() != nil {
		code = fmt.Sprintf("none: killed after %v", blockTimeout)
	}
	stdout, _ := os.ReadFile(outPath)
	stderr, _ := os.ReadFile(errPath)
	shell, _ := os.ReadFile(filepath.Join(s.dir, "bash.stderr"))
	more := ""
	if len(shell) > 0 {
		more = "the shell's own stderr:\n" + indent(string(shell))
	}
	t.Errorf("%s: the block failed (exit %s)\nthe block:\n%s\nstdout:\n%s\nstderr:\n%s%s",
		b.where(), code, indent(s.replace(b.text)), indent(string(stdout)), indent(string(stderr)), more)
	return false
}

// awaitBackground waits for what a background block starts: `make run`
// (or a flagplane serve) until it printed a token and its address answers,
// which then replace the examples in later blocks; anything else until every
// 127.0.0.1:PORT its text names accepts connections.
func (s *session) awaitBackground(b *block, text, outPath string) bool {
	t := s.t
	if strings.Contains(text, "make run") || strings.Contains(text, "flagplane serve") {
		exited := make(chan struct{}) // the background job is not ours to wait for
		token, addr := s.awaitServer(outPath, exited)
		s.subst = []string{exampleToken, token, exampleAddr, addr}
		return true
	}
	deadline := time.Now().Add(time.Minute)
	for _, addr := range addrRE.FindAllString(text, -1) {
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				out, _ := os.ReadFile(outPath)
				t.Errorf("%s: the background block's %s did not answer within a minute; its output:\n%s", b.where(), addr, indent(string(out)))
				return false
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return true
}

func indent(s string) string {
	if s == "" {
		return "    (nothing)\n"
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(strings.TrimRight(s, "\n")+"\n", "\n") {
		if l != "" {
			b.WriteString("    " + l)
		}
	}
	return b.String()
}
