package e2e_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app"
)

// envRelayStreams is how many streams TestRelayScale opens on one relay:
// 10,000 in `make test-relay-scale`, defaultRelayStreams in the tier.
const (
	envRelayStreams     = "FLAGPLANE_RELAY_STREAMS"
	defaultRelayStreams = 500
)

// TestRelayScale opens many /all streams (plain HTTP clients reading
// server-sent events, in this process) on one relay process, and measures
// the relay's resident memory before and after (the memory per stream),
// the time one change made through the API takes to reach every stream,
// and the bytes of the events.
func TestRelayScale(t *testing.T) {
	s := e2eStack(t)
	n := defaultRelayStreams
	if raw := os.Getenv(envRelayStreams); raw != "" {
		v, err := strconv.Atoi(raw)
		if err != nil || v < 1 {
			t.Fatalf("%s=%q is not a positive number of streams", envRelayStreams, raw)
		}
		n = v
	}
	raiseFileLimit(t, n+1000)
	// No rate limit: the test opens every stream within seconds from one address.
	relay := s.startRelay(t, relayOptions{env: map[string]string{
		app.EnvRateLimitGlobal: "0", app.EnvRateLimitRoute: "0", app.EnvRateLimitCredential: "0",
	}})
	e := s.newRelayEnv(t, "relay-scale")

	// One stream first, so the relay has read the environment and its key,
	// and the event sizes are known.
	warm := dialStream(t, relay.url, e.sdkKey)
	put := <-warm.put
	warm.close()
	time.Sleep(500 * time.Millisecond)
	before := rssBytes(t, relay.cmd.Process.Pid)

	opened := time.Now()
	streams := make([]*rawStream, n)
	var wg sync.WaitGroup
	var next atomic.Int64
	var failed atomic.Int64
	var firstErr atomic.Value
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				st, err := openStreamConn(relay.url, e.sdkKey)
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				streams[i] = st
			}
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, st := range streams {
			if st != nil {
				st.close()
			}
		}
	})
	if f := failed.Load(); f > 0 {
		t.Fatalf("%d of %d streams did not open: %v", f, n, firstErr.Load())
	}
	for i, st := range streams {
		select {
		case <-st.put:
		case <-time.After(30 * time.Second):
			t.Fatalf("stream %d got no put within 30 s", i)
		}
	}
	openTook := time.Since(opened)
	time.Sleep(time.Second)
	after := rssBytes(t, relay.cmd.Process.Pid)
	perStream := float64(after-before) / float64(n)

	answered := s.setOn(t, e, true)
	var lat []time.Duration
	var patchBytes int
	for i, st := range streams {
		select {
		case p := <-st.patch:
			lat = append(lat, max(p.at.Sub(answered), 0))
			patchBytes = p.bytes
		case <-time.After(30 * time.Second):
			t.Fatalf("stream %d got no patch within 30 s of the change (%d of %d had it)", i, len(lat), n)
		}
	}
	t.Logf("relay scale: streams=%d opened in %.1fs; relay RSS before=%.1fMB after=%.1fMB per-stream=%.1fKB; one change to every stream: p50=%sms p95=%sms max=%sms; put event=%dB patch event=%dB",
		n, openTook.Seconds(), float64(before)/1e6, float64(after)/1e6, perStream/1e3,
		ms(quantile(lat, 0.5)), ms(quantile(lat, 0.95)), ms(quantile(lat, 1)), put, patchBytes)
	// A few hundred streams (the tier's) move RSS by less than the
	// garbage collector's own swings: the bound holds from thousands.
	if n >= 2000 && perStream > 64<<10 {
		t.Errorf("%.1f KB per stream, want at most 64 KB", perStream/1e3)
	}
	if worst := quantile(lat, 1); worst > 10*time.Second {
		t.Errorf("the change took %v to reach every stream, want under 10 s", worst)
	}
}

// raiseFileLimit lifts this process's open-file limit to its hard limit,
// which must allow need descriptors.
func raiseFileLimit(tb testing.TB, need int) {
	tb.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Fatal(err)
	}
	if lim.Max < uint64(need) {
		tb.Fatalf("the hard open-file limit is %d; the test needs %d (raise it: ulimit -Hn)", lim.Max, need)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			tb.Fatalf("raise the open-file limit to %d: %v", lim.Max, err)
		}
	}
}

// rssBytes reads a process's resident memory (VmRSS).
func rssBytes(tb testing.TB, pid int) int64 {
	tb.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				tb.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	tb.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// rawStream is one /all connection read by one goroutine: put receives
// the size of the first event, patch the time and size of the first patch.
type rawStream struct {
	conn  net.Conn
	put   chan int
	patch chan patchSeen
}

type patchSeen struct {
	at    time.Time
	bytes int
}

func (st *rawStream) close() { st.conn.Close() }

func dialStream(tb testing.TB, baseURL, sdkKey string) *rawStream {
	tb.Helper()
	st, err := openStreamConn(baseURL, sdkKey)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// openStreamConn sends GET /all on a connection of its own and reads the
// answer's events on a goroutine with small buffers.
func openStreamConn(baseURL, sdkKey string) (*rawStream, error) {
	host := strings.TrimPrefix(baseURL, "http://")
	conn, err := net.DialTimeout("tcp", host, 10*time.Second)
	if err != nil {
		return nil, err
	}
	req := "GET /all HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: " + sdkKey + "\r\nUser-Agent: GoClient/7.14.6\r\nAccept: text/event-stream\r\n\r\n"
	if _, err := conn.Write([]byte(req)); err != nil {
		conn.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(conn, 1024)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("read the stream's answer: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		conn.Close()
		return nil, fmt.Errorf("stream answered %d", res.StatusCode)
	}
	st := &rawStream{conn: conn, put: make(chan int, 1), patch: make(chan patchSeen, 1)}
	go func() {
		defer res.Body.Close()
		lines := bufio.NewReaderSize(res.Body, 1024)
		var name string
		size, gotPut, gotPatch := 0, false, false
		for {
			line, err := lines.ReadSlice('\n')
			size += len(line)
			if err == bufio.ErrBufferFull {
				continue // a long data line: count it, read on
			}
			if err != nil {
				return
			}
			switch {
			case bytes.HasPrefix(line, []byte("event: ")):
				name = string(bytes.TrimSpace(line[len("event: "):]))
			case len(line) == 1: // the blank line ending an event
				switch {
				case name == "put" && !gotPut:
					gotPut = true
					st.put <- size
				case name == "patch" && !gotPatch:
					gotPatch = true
					st.patch <- patchSeen{at: time.Now(), bytes: size}
				}
				name, size = "", 0
			}
		}
	}()
	return st, nil
}
