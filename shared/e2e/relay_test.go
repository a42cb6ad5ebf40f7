package e2e_test

// The streaming relay as AWS runs it: `flagplane relay` processes (the
// binary of FLAGPLANE_E2E_RELAY, with the environment the stack gives its
// tasks) on the tier's DynamoDB Local table, while changes are made through
// the API Gateway front and the real Lambda bootstraps. LaunchDarkly's Go
// server SDK streams from the relay; its events go to the front.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"
	ld "github.com/launchdarkly/go-server-sdk/v7"
	"github.com/launchdarkly/go-server-sdk/v7/interfaces"
	"github.com/launchdarkly/go-server-sdk/v7/ldcomponents"

	"github.com/flagplane/flagplane/infra"
)

// envRelay names the relay binary (make test-e2e builds it).
const envRelay = "FLAGPLANE_E2E_RELAY"

// relayProc is one running `flagplane relay`.
type relayProc struct {
	url  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its Wait error, once done
}

// relayOptions change how a relay starts.
type relayOptions struct {
	// dynamo is the DynamoDB endpoint (the tier's when empty).
	dynamo string
	// env adds to or overrides the stack's relay environment.
	env map[string]string
	// args are flags after `relay -addr 127.0.0.1:0`.
	args []string
}

// startRelay starts a relay on a free loopback port with the environment
// the stack gives its tasks, and waits for its start line. Its log lines go
// to the test's log; it is stopped (SIGTERM) when the test ends.
func (s *stack) startRelay(tb testing.TB, o relayOptions) *relayProc {
	tb.Helper()
	bin := os.Getenv(envRelay)
	if bin == "" {
		tb.Fatalf("%s is not set: name the flagplane binary (make test-e2e builds it)", envRelay)
	}
	env := infra.RelayEnv(infra.Resources{TableName: s.table, AuditShards: e2eAuditShards})
	env["AWS_ENDPOINT_URL_DYNAMODB"] = s.dynamoEndpoint
	if o.dynamo != "" {
		env["AWS_ENDPOINT_URL_DYNAMODB"] = o.dynamo
	}
	env["AWS_ENDPOINT_URL_SQS"] = s.sqsEndpoint
	env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], env["AWS_REGION"] = "flagplane", "flagplane", region
	env["AWS_EC2_METADATA_DISABLED"] = "true"
	env["HOME"] = tb.TempDir() // no shared AWS config files
	for k, v := range o.env {
		env[k] = v
	}
	cmd := exec.Command(bin, append([]string{"relay", "-addr", "127.0.0.1:0"}, o.args...)...)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start the relay: %v", err)
	}
	p := &relayProc{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			var start struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &start) == nil && start.Msg == "flagplane relay started" {
				addr <- start.Addr
			}
			fmt.Fprintf(s.logs, "relay %d: %s\n", cmd.Process.Pid, line)
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	tb.Cleanup(func() { p.stop(tb) })
	select {
	case a := <-addr:
		p.url = "http://" + a
	case <-p.done:
		tb.Fatalf("the relay exited before it listened: %v", p.err)
	case <-time.After(20 * time.Second):
		tb.Fatal("the relay did not start within 20 s")
	}
	return p
}

// stop sends SIGTERM and waits for the exit; it fails the test if the
// relay takes more than 5 s. A relay already gone is left alone.
func (p *relayProc) stop(tb testing.TB) {
	tb.Helper()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		tb.Errorf("relay %d still ran 5 s after SIGTERM", p.cmd.Process.Pid)
	}
}

// kill ends the relay at once (SIGKILL), as a crashed task.
func (p *relayProc) kill(tb testing.TB) {
	tb.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		tb.Fatalf("kill relay: %v", err)
	}
	<-p.done
}

// relayEnv is a fresh project with the production environment's SDK key
// and a boolean flag, off.
type relayEnv struct {
	project, sdkKey, flag string
}

func (s *stack) newRelayEnv(tb testing.TB, prefix string) relayEnv {
	tb.Helper()
	p := uniqueKey(prefix)
	wantStatus(tb, s.do(tb, http.MethodPost, api+"/projects", map[string]any{"key": p, "name": "Project " + p}), http.StatusCreated)
	var env struct {
		APIKey string `json:"apiKey"`
	}
	res := s.do(tb, http.MethodGet, envPath(p, "production"), nil)
	wantStatus(tb, res, http.StatusOK)
	res.JSON(tb, &env)
	wantStatus(tb, s.do(tb, http.MethodPost, api+"/flags/"+p, map[string]any{"key": "streamed", "name": "Streamed"}), http.StatusCreated)
	return relayEnv{project: p, sdkKey: env.APIKey, flag: "streamed"}
}

// setOn turns the flag on or off in production through the API and
// returns when the API has answered.
func (s *stack) setOn(tb testing.TB, e relayEnv, on bool) time.Time {
	tb.Helper()
	wantStatus(tb, s.do(tb, http.MethodPatch, api+"/flags/"+e.project+"/"+e.flag, []patchOp{replace("/environments/production/on", on)}), http.StatusOK)
	return time.Now()
}

// streamingClient is LaunchDarkly's Go server SDK streaming from streamURI,
// its events sent to the API front; it closes when the test ends.
func (s *stack) streamingClient(tb testing.TB, sdkKey, streamURI string) *ld.LDClient {
	tb.Helper()
	cfg := ld.Config{
		ServiceEndpoints: interfaces.ServiceEndpoints{Streaming: streamURI, Polling: streamURI, Events: s.server.URL},
		DataSource:       ldcomponents.StreamingDataSource().InitialReconnectDelay(100 * time.Millisecond),
		Logging:          ldcomponents.NoLogging(),
	}
	c, err := ld.MakeCustomClient(sdkKey, cfg, 10*time.Second)
	if c != nil {
		tb.Cleanup(func() { c.Close() })
	}
	if err != nil {
		tb.Fatalf("the SDK did not initialize from %s: %v", streamURI, err)
	}
	return c
}

// valueChanges stamps each change of the flag's value for the context
// with the time the SDK's listener got it.
func valueChanges(c *ld.LDClient, flag string) chan stamped {
	in := c.GetFlagTracker().AddFlagValueChangeListener(flag, ldcontext.New("relay-user"), ldvalue.Bool(false))
	out := make(chan stamped, 64)
	go func() {
		for ev := range in {
			out <- stamped{value: ev.NewValue.BoolValue(), at: time.Now()}
		}
		close(out)
	}()
	return out
}

type stamped struct {
	value bool
	at    time.Time
}

// TestRelayLatency measures how long a change takes from the API's answer
// to the SDK's flag-change listener when the SDK streams from a relay.
func TestRelayLatency(t *testing.T) {
	s := e2eStack(t)
	relay := s.startRelay(t, relayOptions{})
	e := s.newRelayEnv(t, "relay-latency")
	c := s.streamingClient(t, e.sdkKey, relay.url)
	changes := valueChanges(c, e.flag)
	const n = 30
	var lat []time.Duration
	for i := range n {
		want := i%2 == 0 // the flag starts off (false); on serves true
		answered := s.setOn(t, e, want)
		select {
		case ch := <-changes:
			if ch.value != want {
				t.Fatalf("change %d: the SDK saw %v, want %v", i, ch.value, want)
			}
			lat = append(lat, max(ch.at.Sub(answered), 0))
		case <-time.After(5 * time.Second):
			t.Fatalf("change %d did not reach the SDK within 5 s", i)
		}
	}
	p50, p95 := quantile(lat, 0.50), quantile(lat, 0.95)
	t.Logf("relay latency: p50=%sms p95=%sms max=%sms n=%d", ms(p50), ms(p95), ms(quantile(lat, 1)), len(lat))
	if p95 >= time.Second {
		t.Errorf("p95 %v: a change must reach a streaming SDK within 1 s at p95", p95)
	}
}

// rrProxy is a round-robin TCP load balancer in front of relays: each new
// connection goes to the next backend that accepts it.
type rrProxy struct {
	ln       net.Listener
	backends []string // host:port

	mu    sync.Mutex
	next  int
	conns map[net.Conn]int // client connection → backend index
}

func newRRProxy(tb testing.TB, urls ...string) *rrProxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &rrProxy{ln: ln, conns: map[net.Conn]int{}}
	for _, u := range urls {
		p.backends = append(p.backends, strings.TrimPrefix(u, "http://"))
	}
	go p.serve()
	tb.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
	})
	return p
}

func (p *rrProxy) url() string { return "http://" + p.ln.Addr().String() }

func (p *rrProxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(client)
	}
}

func (p *rrProxy) forward(client net.Conn) {
	var backend net.Conn
	var idx int
	for range p.backends {
		p.mu.Lock()
		idx = p.next % len(p.backends)
		p.next++
		p.mu.Unlock()
		c, err := net.DialTimeout("tcp", p.backends[idx], time.Second)
		if err == nil {
			backend = c
			break
		}
	}
	if backend == nil {
		client.Close()
		return
	}
	p.mu.Lock()
	p.conns[client] = idx
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(backend, client); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, backend); done <- struct{}{} }()
	<-done
	client.Close()
	backend.Close()
	p.mu.Lock()
	delete(p.conns, client)
	p.mu.Unlock()
}

// open counts the open connections per backend.
func (p *rrProxy) open() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := make([]int, len(p.backends))
	for _, i := range p.conns {
		n[i]++
	}
	return n
}

// TestRelayReplicas: two relays behind a round-robin load balancer; the
// one the SDK streams from is killed, a change is made while the SDK
// reconnects, and the SDK ends with it. Then a key reset ends a stream
// within about a second, and SIGTERM ends a relay's streams and the
// process within seconds.
func TestRelayReplicas(t *testing.T) {
	s := e2eStack(t)
	relays := []*relayProc{s.startRelay(t, relayOptions{}), s.startRelay(t, relayOptions{})}
	lb := newRRProxy(t, relays[0].url, relays[1].url)
	e := s.newRelayEnv(t, "relay-replicas")
	c := s.streamingClient(t, e.sdkKey, lb.url())
	user := ldcontext.New("relay-user")

	t.Run("a killed replica loses no change: the SDK reconnects to the other and gets it", func(t *testing.T) {
		streaming := -1
		for i, n := range lb.open() {
			if n > 0 {
				streaming = i
			}
		}
		if streaming < 0 {
			t.Fatalf("the SDK holds no connection through the load balancer (%v)", lb.open())
		}
		relays[streaming].kill(t)
		killed := time.Now()
		// The change is made while the SDK reconnects.
		s.setOn(t, e, true)
		deadline := time.Now().Add(10 * time.Second)
		for v, _ := c.BoolVariation(e.flag, user, false); !v; v, _ = c.BoolVariation(e.flag, user, false) {
			if time.Now().After(deadline) {
				t.Fatal("the SDK did not get the change made while its relay was down within 10 s")
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("relay failover: the change made after the kill reached the SDK %sms after the kill", ms(time.Since(killed)))
		if n := lb.open(); n[1-streaming] == 0 {
			t.Errorf("the SDK is not streaming from the surviving replica: connections %v", n)
		}
	})

	survivor := relays[0]
	if survivor.cmd.ProcessState != nil {
		survivor = relays[1]
	}
	t.Run("a key reset through the API ends the relay's stream within about a second", func(t *testing.T) {
		c.Close() // its key is about to go
		events := openRawStream(t, survivor.url, e.sdkKey)
		if ev := nextEvent(t, events, 5*time.Second); ev != "put" {
			t.Fatalf("first event %q, want put", ev)
		}
		wantStatus(t, s.do(t, http.MethodPost, envPath(e.project, "production")+"/apiKey", nil), http.StatusOK)
		reset := time.Now()
		if ev := nextEvent(t, events, 3*time.Second); ev != "closed" {
			t.Fatalf("event %q after the reset, want the stream ended", ev)
		}
		took := time.Since(reset)
		t.Logf("relay key reset: the stream ended %sms after the API answered", ms(took))
		if took > 1500*time.Millisecond {
			t.Errorf("the stream ended %v after the reset, want about a second at most", took)
		}
		req, _ := http.NewRequest(http.MethodGet, survivor.url+"/sdk/latest-all", nil)
		req.Header.Set("Authorization", e.sdkKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("the reset key polls with status %d, want 401", res.StatusCode)
		}
	})

	t.Run("SIGTERM ends the relay's streams at once and the process within seconds", func(t *testing.T) {
		var key struct {
			APIKey string `json:"apiKey"`
		}
		s.do(t, http.MethodGet, envPath(e.project, "production"), nil).JSON(t, &key)
		events := openRawStream(t, survivor.url, key.APIKey)
		if ev := nextEvent(t, events, 5*time.Second); ev != "put" {
			t.Fatalf("first event %q, want put", ev)
		}
		start := time.Now()
		if err := survivor.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if ev := nextEvent(t, events, 2*time.Second); ev != "closed" {
			t.Fatalf("event %q after SIGTERM, want the stream ended", ev)
		}
		streamEnded := time.Since(start)
		select {
		case <-survivor.done:
		case <-time.After(5 * time.Second):
			t.Fatal("the relay still runs 5 s after SIGTERM")
		}
		t.Logf("relay SIGTERM: stream ended after %sms, process exited after %sms", ms(streamEnded), ms(time.Since(start)))
		if survivor.err != nil {
			t.Errorf("the relay exited with %v after SIGTERM, want status 0", survivor.err)
		}
		if streamEnded > time.Second {
			t.Errorf("the stream ended %v after SIGTERM", streamEnded)
		}
	})
}

// openRawStream opens /all with the SDK key and sends the names of its
// events ("closed" when it ends); the connection closes when the test ends.
func openRawStream(tb testing.TB, baseURL, sdkKey string) chan string {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/all", nil)
	req.Header.Set("Authorization", sdkKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		tb.Fatalf("open stream: %v", err)
	}
	tb.Cleanup(func() { cancel(); res.Body.Close() })
	if res.StatusCode != http.StatusOK {
		tb.Fatalf("open stream: status %d", res.StatusCode)
	}
	events := make(chan string, 16)
	go func() {
		br := bufio.NewReader(res.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				events <- "closed"
				return
			}
			if name, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "event: "); ok {
				events <- name
			}
		}
	}()
	return events
}

func nextEvent(tb testing.TB, events chan string, wait time.Duration) string {
	tb.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(wait):
		tb.Fatalf("no event within %v", wait)
		return ""
	}
}

// TestRelayFeedCost measures what the change feed reads from DynamoDB:
// the Queries per poll and their read units, while nothing changes and
// while an entry is in the window the polls read back.
func TestRelayFeedCost(t *testing.T) {
	s := e2eStack(t)
	proxy := &capacityProxy{calls: map[string]int{}}
	ddb := proxy.dynamo(t, s.dynamoEndpoint)
	// A margin of a second, so the idle polls below are soon past every
	// entry of the tests before (the default margin only makes that 5 s).
	const margin, poll = time.Second, 200 * time.Millisecond
	s.startRelay(t, relayOptions{dynamo: ddb.URL, args: []string{"-margin", margin.String(), "-poll", poll.String()}})
	e := s.newRelayEnv(t, "relay-feed")
	time.Sleep(margin + 500*time.Millisecond)
	measure := func(d time.Duration) (queries int, units float64, calls map[string]int) {
		proxy.reset()
		time.Sleep(d)
		proxy.mu.Lock()
		defer proxy.mu.Unlock()
		return proxy.calls["Query"], proxy.readUnits, maps.Clone(proxy.calls)
	}
	const idle = 3 * time.Second
	queries, units, calls := measure(idle)
	polls := float64(idle / poll)
	t.Logf("relay feed cost: idle: %d Queries, %.1f read units reported by DynamoDB Local in %v (%.0f polls): %.2f Queries per poll",
		queries, units, idle, polls, float64(queries)/polls)
	if queries == 0 || len(calls) != 1 {
		t.Fatalf("the idle relay made %d Queries and these calls: %v; want Queries only", queries, calls)
	}
	// One Query per shard of the audit log per poll.
	if perPoll := float64(queries) / polls / e2eAuditShards; perPoll < 0.8 || perPoll > 1.2 {
		t.Errorf("%.2f Queries per poll and shard while idle, want one", perPoll)
	}

	s.setOn(t, e, true)
	queries, units, calls = measure(margin / 2)
	t.Logf("relay feed cost: one entry in the window: %d Queries, %.2f read units: %.2f read units per poll", queries, units, units/float64(queries))
	if queries == 0 || len(calls) != 1 {
		t.Fatalf("the relay made %d Queries and these calls: %v; want Queries only (no stream reads: none is open)", queries, calls)
	}
	// The entry is in one shard: each poll reads it there, eventually
	// consistent (0.5 units), and nothing from the other shards (DynamoDB
	// Local reports 0 for a Query that finds nothing; DynamoDB bills 0.5).
	// The window may cut one poll's shard Queries apart: half a unit either way.
	withEntry := math.Round(float64(queries) / e2eAuditShards)
	if units < 0.5*withEntry-0.5 || units > 0.5*withEntry+0.5 || units == 0 {
		t.Errorf("%.2f read units in %d Queries (%v polls of %d shards), want 0.5 a poll (eventually consistent)", units, queries, withEntry, e2eAuditShards)
	}
}
