package localserver_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The peer benchmarks run the same load against flagplane's local server
// and a real Unleash server (the npm package unleash-server on PostgreSQL,
// which localstack/with-unleash.sh starts: make bench-peers), flagplane
// first, then Unleash, in each of -peer-rounds rounds (3), so a busy
// machine slows both alike. With -test.v each benchmark logs its rounds
// and the ratio of the rates summed over them.
const (
	peerUnleashURL     = "FLAGPLANE_UNLEASH_URL"
	peerUnleashToken   = "FLAGPLANE_UNLEASH_TOKEN"
	peerRequireUnleash = "FLAGPLANE_REQUIRE_UNLEASH"

	// peerFlags is how many flags each server's project holds before a load.
	peerFlags = 100
	// peerEnvironment is the environment the toggle load flips: flagplane's
	// projects and Unleash's default project both have one of this name.
	peerEnvironment = "production"
	// unleashProject is Unleash's built-in project (more need its
	// Enterprise edition).
	unleashProject = "default"
)

// peerRequest is one request of a load; path starts at the server's root.
type peerRequest struct {
	method, path, contentType, body string
}

// peerLoad is an operation as one server takes it: request i (from 0) of
// the load, and the status every answer must have.
type peerLoad struct {
	want    int
	request func(i int64) peerRequest
}

// peerServer is a server under load and the token its requests carry.
type peerServer struct {
	name, base, token string
}

// peerOp is one operation on both servers; nonce is new for every run of a
// load, so requests can name keys no earlier run used.
type peerOp struct {
	name      string
	flagplane func(nonce string) peerLoad
	unleash   func(nonce string) peerLoad
}

func BenchmarkPeerGetFlag(b *testing.B) {
	benchPeers(b, peerOp{
		name: "GET one flag of 100",
		flagplane: func(string) peerLoad {
			return peerLoad{200, func(int64) peerRequest {
				return peerRequest{method: "GET", path: "/api/v2/flags/bench/flag-001"}
			}}
		},
		unleash: func(string) peerLoad {
			return peerLoad{200, func(int64) peerRequest {
				return peerRequest{method: "GET", path: "/api/admin/projects/" + unleashProject + "/features/flag-001"}
			}}
		},
	})
}

// BenchmarkPeerListFlags lists the project's flags: flagplane a page of
// 20, Unleash the project's list, which has no paging and sends all 100.
func BenchmarkPeerListFlags(b *testing.B) {
	benchPeers(b, peerOp{
		name: "list flags (flagplane 20, Unleash all 100)",
		flagplane: func(string) peerLoad {
			return peerLoad{200, func(int64) peerRequest {
				return peerRequest{method: "GET", path: "/api/v2/flags/bench?limit=20"}
			}}
		},
		unleash: func(string) peerLoad {
			return peerLoad{200, func(int64) peerRequest {
				return peerRequest{method: "GET", path: "/api/admin/projects/" + unleashProject + "/features"}
			}}
		},
	})
}

// BenchmarkPeerListFlagsPage lists a page of 20 flags on both: Unleash's
// paged list is its feature search, which its own web console uses.
func BenchmarkPeerListFlagsPage(b *testing.B) {
	benchPeers(b, peerOp{
		name: "list a page of 20 flags",
		flagplane: func(string) peerLoad {
			return peerLoad{200, func(int64) peerRequest {
				return peerRequest{method: "GET", path: "/api/v2/flags/bench?limit=20"}
			}}
		},
		unleash: func(string) peerLoad {
			return peerLoad{200, func(int64) peerRequest {
				return peerRequest{method: "GET", path: "/api/admin/search/features?project=IS:" + unleashProject + "&limit=20"}
			}}
		},
	})
}

// BenchmarkPeerCreateFlag creates a flag with a new key in each request.
func BenchmarkPeerCreateFlag(b *testing.B) {
	benchPeers(b, peerOp{
		name: "create a flag",
		flagplane: func(nonce string) peerLoad {
			return peerLoad{201, func(i int64) peerRequest {
				return peerRequest{"POST", "/api/v2/flags/bench", "application/json",
					fmt.Sprintf(`{"key":"new-%s-%d","name":"New %d"}`, nonce, i, i)}
			}}
		},
		unleash: func(nonce string) peerLoad {
			return peerLoad{201, func(i int64) peerRequest {
				return peerRequest{"POST", "/api/admin/projects/" + unleashProject + "/features", "application/json",
					fmt.Sprintf(`{"name":"new-%s-%d"}`, nonce, i)}
			}}
		},
	})
}

// BenchmarkPeerToggleFlag turns flags on and off in one environment:
// request i turns flag i%100 on in even hundreds and off in odd ones, so
// every request changes what it names (all start off).
func BenchmarkPeerToggleFlag(b *testing.B) {
	benchPeers(b, peerOp{
		name: "turn a flag on or off",
		flagplane: func(string) peerLoad {
			return peerLoad{200, func(i int64) peerRequest {
				flag, on := peerToggle(i)
				kind := "turnFlagOff"
				if on {
					kind = "turnFlagOn"
				}
				return peerRequest{"PATCH", "/api/v2/flags/bench/" + flag,
					"application/json; domain-model=launchdarkly.semanticpatch",
					`{"environmentKey":"` + peerEnvironment + `","instructions":[{"kind":"` + kind + `"}]}`}
			}}
		},
		unleash: func(string) peerLoad {
			return peerLoad{200, func(i int64) peerRequest {
				flag, on := peerToggle(i)
				state := "off"
				if on {
					state = "on"
				}
				return peerRequest{method: "POST",
					path: "/api/admin/projects/" + unleashProject + "/features/" + flag + "/environments/" + peerEnvironment + "/" + state}
			}}
		},
	})
}

// peerToggle is the flag request i of the toggle load names and whether it
// turns it on.
func peerToggle(i int64) (string, bool) {
	return peerFlagKey(int(i % peerFlags)), (i/peerFlags)%2 == 0
}

func peerFlagKey(i int) string { return fmt.Sprintf("flag-%03d", i) }

// peerRoundCount is how many rounds each peer benchmark runs. Rounds are
// sub-benchmarks because -count repeats each sub-benchmark in a row,
// which would not alternate the servers.
var peerRoundCount = flag.Int("peer-rounds", 3, "rounds of the peer benchmarks, each flagplane then Unleash")

// peerRound is one round: each server's last measured rate and p99.
type peerRound struct {
	flagplane, unleash peerResult
}

type peerResult struct {
	rate float64
	p99  time.Duration
}

// benchPeers runs op in rounds, each on flagplane's local server, then on
// Unleash, and logs every round's rates and ratio and the ratio of the
// rates summed over the rounds.
func benchPeers(b *testing.B, op peerOp) {
	unleash := unleashPeer(b)
	var rounds []peerRound
	for r := 1; r <= *peerRoundCount; r++ {
		var round peerRound
		b.Run(fmt.Sprintf("round=%d", r), func(b *testing.B) {
			b.Run("server=flagplane", func(b *testing.B) {
				base, token, stop := startLocal(b, filepath.Join(b.TempDir(), "bench.db"))
				defer stop()
				seedFlags(b, base, token, "bench", peerFlags)
				// Each run of this function replaces the result: the last, longest one stays.
				round.flagplane = loadPeer(b, peerServer{"flagplane", base, token}, op.flagplane(peerNonce()))
			})
			b.Run("server=unleash", func(b *testing.B) {
				unleash.reset(b)
				round.unleash = loadPeer(b, unleash, op.unleash(peerNonce()))
				if round.flagplane.rate > 0 && round.unleash.rate > 0 {
					b.ReportMetric(round.flagplane.rate/round.unleash.rate, "flagplane/unleash")
				}
			})
		})
		if b.Failed() || round.flagplane.rate == 0 || round.unleash.rate == 0 {
			return
		}
		rounds = append(rounds, round)
	}
	var sumF, sumU float64
	lo, hi := math.Inf(1), 0.0
	for i, r := range rounds {
		ratio := r.flagplane.rate / r.unleash.rate
		b.Logf("%s, round %d: flagplane %.0f req/s (p99 %.1f ms), Unleash %.0f req/s (p99 %.1f ms): %.2f×",
			op.name, i+1, r.flagplane.rate, peerMillis(r.flagplane.p99), r.unleash.rate, peerMillis(r.unleash.p99), ratio)
		sumF += r.flagplane.rate
		sumU += r.unleash.rate
		lo, hi = min(lo, ratio), max(hi, ratio)
	}
	if len(rounds) > 0 {
		b.Logf("%s: flagplane/Unleash %.2f× summed over %d rounds (%.2f–%.2f×)", op.name, sumF/sumU, len(rounds), lo, hi)
	}
}

func peerMillis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// peerNonce is new on every call, for keys no earlier load used.
func peerNonce() string {
	return strconv.FormatInt(time.Now().UnixNano(), 36)
}

// unleashPeer is the Unleash server localstack/with-unleash.sh started;
// without one the benchmark skips, or fails when one is required.
func unleashPeer(b *testing.B) peerServer {
	b.Helper()
	s := peerServer{name: "Unleash", base: os.Getenv(peerUnleashURL), token: os.Getenv(peerUnleashToken)}
	if s.base == "" || s.token == "" {
		if os.Getenv(peerRequireUnleash) == "1" {
			b.Fatalf("%s=1 but %s or %s is not set: the Unleash server did not start", peerRequireUnleash, peerUnleashURL, peerUnleashToken)
		}
		b.Skipf("no Unleash server to compare with (%s unset); make bench-peers starts one", peerUnleashURL)
	}
	return s
}

// reset leaves Unleash's project with flags flag-000 to flag-099, all off
// in peerEnvironment, and no other live flag: what earlier loads created
// is archived, so every load starts from the same project. (Not deleted:
// Unleash 7.4.1 records an archived flag's lifecycle after answering, and
// a delete that comes first makes that insert fail and the server exit.)
// Each flag has been on once, because the first time Unleash turns a flag
// on it also adds a default strategy: every toggle load then only toggles.
func (s peerServer) reset(tb testing.TB) {
	tb.Helper()
	c := &http.Client{}
	var list struct {
		Features []struct {
			Name         string `json:"name"`
			Environments []struct {
				Name          string `json:"name"`
				Enabled       bool   `json:"enabled"`
				HasStrategies bool   `json:"hasStrategies"`
			} `json:"environments"`
		} `json:"features"`
	}
	project := "/api/admin/projects/" + unleashProject
	if err := json.Unmarshal(s.must(tb, c, peerRequest{method: "GET", path: project + "/features"}, 200), &list); err != nil {
		tb.Fatalf("Unleash's flag list: %v", err)
	}
	toggle := func(flag, state string) {
		s.must(tb, c, peerRequest{method: "POST", path: project + "/features/" + flag + "/environments/" + peerEnvironment + "/" + state}, 200)
	}
	seeded := map[string]bool{}
	var extra, unprimed []string
	for _, f := range list.Features {
		var n int
		if _, err := fmt.Sscanf(f.Name, "flag-%03d", &n); err == nil && n < peerFlags && peerFlagKey(n) == f.Name {
			seeded[f.Name] = true
			primed := false
			for _, e := range f.Environments {
				if e.Name == peerEnvironment {
					primed = e.HasStrategies
					if e.Enabled {
						toggle(f.Name, "off")
					}
				}
			}
			if !primed {
				unprimed = append(unprimed, f.Name)
			}
			continue
		}
		extra = append(extra, f.Name)
	}
	for chunk := range slices.Chunk(extra, 500) {
		body, _ := json.Marshal(map[string][]string{"features": chunk})
		s.must(tb, c, peerRequest{"POST", project + "/archive", "application/json", string(body)}, 202)
	}
	for i := range peerFlags {
		if key := peerFlagKey(i); !seeded[key] {
			s.must(tb, c, peerRequest{"POST", project + "/features", "application/json", `{"name":"` + key + `"}`}, 201)
			unprimed = append(unprimed, key)
		}
	}
	for _, flag := range unprimed {
		toggle(flag, "on")
		toggle(flag, "off")
	}
}

// must sends r and returns the answer, which must have status want.
func (s peerServer) must(tb testing.TB, c *http.Client, r peerRequest, want int) []byte {
	tb.Helper()
	status, answer, err := s.do(c, r, 0)
	if err != nil {
		tb.Fatal(err)
	}
	if status != want {
		tb.Fatalf("%s %s %s: status %d, want %d: %.300s", s.name, r.method, r.path, status, want, answer)
	}
	return answer
}

// do sends r and returns the status and the answer; an answer with status
// discard (0: none) is read and dropped, as a load needs no answer it
// expected, and keeping each would add the client's allocations to the
// server's in the figures.
func (s peerServer) do(c *http.Client, r peerRequest, discard int) (int, []byte, error) {
	req, err := http.NewRequest(r.method, s.base+r.path, strings.NewReader(r.body))
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s %s: %w", s.name, r.method, r.path, err)
	}
	req.Header.Set("Authorization", s.token)
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s %s: %w", s.name, r.method, r.path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == discard {
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return 0, nil, fmt.Errorf("%s %s %s: reading the answer: %w", s.name, r.method, r.path, err)
		}
		return resp.StatusCode, nil, nil
	}
	var answer bytes.Buffer
	if _, err := io.Copy(&answer, resp.Body); err != nil {
		return 0, nil, fmt.Errorf("%s %s %s: reading the answer: %w", s.name, r.method, r.path, err)
	}
	return resp.StatusCode, answer.Bytes(), nil
}

// loadPeer sends b.N requests of load to s from loopbackConnections
// keep-alive clients at once and reports requests/s and the 99th
// percentile latency. Every loopback benchmark loads through it. Every answer must have the load's status: the first
// that does not fails the benchmark, so a failing server cannot look fast.
func loadPeer(b *testing.B, s peerServer, load peerLoad) peerResult {
	b.Helper()
	transport := &http.Transport{MaxIdleConnsPerHost: 2 * loopbackConnections}
	client := &http.Client{Transport: transport}
	defer transport.CloseIdleConnections()
	var (
		mu        sync.Mutex
		latencies []time.Duration
		next      atomic.Int64
		failed    atomic.Bool
	)
	// RunParallel starts parallelism × GOMAXPROCS goroutines.
	b.SetParallelism(max(1, loopbackConnections/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 1024)
		defer func() {
			mu.Lock()
			latencies = append(latencies, local...)
			mu.Unlock()
		}()
		for pb.Next() {
			if failed.Load() {
				continue // drain pb: the benchmark has already failed
			}
			r := load.request(next.Add(1) - 1)
			t0 := time.Now()
			status, answer, err := s.do(client, r, load.want)
			if err == nil && status != load.want {
				err = fmt.Errorf("%s %s %s: status %d, want %d: %.300s", s.name, r.method, r.path, status, load.want, answer)
			}
			if err != nil {
				if failed.CompareAndSwap(false, true) {
					b.Error(err)
				}
				continue
			}
			local = append(local, time.Since(t0))
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if failed.Load() || len(latencies) == 0 {
		return peerResult{}
	}
	slices.Sort(latencies)
	res := peerResult{
		rate: float64(len(latencies)) / elapsed.Seconds(),
		p99:  latencies[len(latencies)*99/100],
	}
	b.ReportMetric(res.rate, "req/s")
	b.ReportMetric(float64(res.p99.Microseconds())/1000, "p99-ms")
	return res
}
