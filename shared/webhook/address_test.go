package webhook

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// refusedHost is one line of testdata/refused-hosts.txt.
type refusedHost struct{ host, what string }

func readRefusedHosts(tb testing.TB) []refusedHost {
	tb.Helper()
	f, err := os.Open("testdata/refused-hosts.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []refusedHost
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		host, what, _ := strings.Cut(line, "\t")
		out = append(out, refusedHost{host, what})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// noLookups is a guard whose resolver fails the test: an address, however
// written, must be judged without a DNS query.
func noLookups(tb testing.TB) Guard {
	return Guard{Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
		tb.Errorf("%q was looked up", host)
		return []netip.Addr{netip.MustParseAddr("8.8.8.8")}, nil
	}}
}

// allowed are public addresses in the forms the refused ones use.
var allowed = []string{
	"8.8.8.8", "1572394766" /* 93.184.215.14 */, "[2606:4700:4700::1111]",
	"[::ffff:8.8.8.8]" /* IPv4-mapped: the same host */, "[64:ff9b::808:808]", /* NAT64 of a public address */
}

func TestGuardRefusesEverySpecialPurposeAddress(t *testing.T) {
	g := noLookups(t)
	for _, h := range readRefusedHosts(t) {
		t.Run(h.host+" ("+h.what+") is refused, naming the field", func(t *testing.T) {
			u, err := url.Parse("http://" + h.host + "/hook")
			if err != nil {
				t.Fatal(err)
			}
			err = g.Check(context.Background(), "url", u)
			if err == nil || !strings.Contains(err.Error(), `field "url"`) || !strings.Contains(err.Error(), "may not reach") {
				t.Fatalf("got %v, want a refusal naming the field", err)
			}
		})
	}
	for _, host := range allowed {
		t.Run(host+" is allowed", func(t *testing.T) {
			u, _ := url.Parse("http://" + host + "/hook")
			if err := g.Check(context.Background(), "url", u); err != nil {
				t.Error(err)
			}
		})
	}
	t.Run("allow-private lets every address through", func(t *testing.T) {
		g := Guard{AllowPrivate: true}
		for _, h := range readRefusedHosts(t) {
			if err := g.CheckHost(context.Background(), "host", strings.Trim(h.host, "[]")); err != nil {
				t.Errorf("%s: %v", h.host, err)
			}
		}
	})
}

func TestTheTestListCoversEveryRegistryEntry(t *testing.T) {
	var addrs []netip.Addr
	for _, h := range readRefusedHosts(t) {
		u, err := url.Parse("http://" + h.host + "/")
		if err != nil {
			t.Fatal(err)
		}
		a, err := netip.ParseAddr(u.Hostname())
		if err != nil {
			a, _ = legacyIPv4(u.Hostname())
		}
		addrs = append(addrs, a.WithZone(""))
	}
	for _, bl := range append(append([]block{}, special4...), special6...) {
		t.Run(bl.prefix.String()+" has an address in the list", func(t *testing.T) {
			for _, a := range addrs {
				if bl.prefix.Contains(a) {
					return
				}
			}
			t.Errorf("no address of %s (%s) in testdata/refused-hosts.txt", bl.prefix, bl.name)
		})
	}
}

func TestRefusesSaysWhatAnAddressCarries(t *testing.T) {
	for addr, says := range map[string]string{
		"64:ff9b::7f00:1":                      "NAT64 well-known prefix (RFC 6052) carrying 127.0.0.1, loopback",
		"::127.0.0.1":                          "IPv4-compatible, deprecated (RFC 4291) carrying 127.0.0.1, loopback",
		"2002:7f00:1::1":                       "6to4 (RFC 3056) carrying 127.0.0.1, loopback",
		"2001:0:4136:e378:8000:63bf:80ff:fffe": "Teredo (RFC 4380) carrying 127.0.0.1, loopback",
		"::ffff:198.18.0.1":                    "IPv4-mapped (RFC 4291) carrying 198.18.0.1, benchmarking",
		"2002:808:808::1":                      "6to4 (RFC 3056)",
		"198.18.0.1":                           "benchmarking (RFC 2544)",
	} {
		t.Run(addr+" is refused as "+says, func(t *testing.T) {
			why, refused := Refuses(netip.MustParseAddr(addr))
			if !refused || !strings.HasPrefix(why, says) {
				t.Errorf("got %q (%t)", why, refused)
			}
		})
	}
}

func TestGuardReadsEveryFormOfAnAddress(t *testing.T) {
	t.Run("names that only look numeric are not addresses", func(t *testing.T) {
		for _, host := range []string{"1.2.3.4.5", "0x", "12a", "256.1.1.1", "1.2.3.256", "1.16777216", "1.2.65536", "4294967296", "1e3", "", "-1", "+1"} {
			if a, ok := legacyIPv4(host); ok {
				t.Errorf("%q read as %s", host, a)
			}
		}
	})
	t.Run("the forms inet_aton knows read as it reads them", func(t *testing.T) {
		for host, want := range map[string]string{
			"2130706433": "127.0.0.1", "0x7f000001": "127.0.0.1", "0177.0.0.1": "127.0.0.1", "127.1": "127.0.0.1",
			"127.0.1": "127.0.0.1", "10.65535": "10.0.255.255", "0": "0.0.0.0", "192.0x00A8.1": "192.168.0.1",
		} {
			if a, ok := legacyIPv4(host); !ok || a.String() != want {
				t.Errorf("%q read as %v (%t), want %s", host, a, ok, want)
			}
		}
	})
	t.Run("a name is judged by what it resolves to", func(t *testing.T) {
		g := Guard{Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("64:ff9b::a9fe:a9fe")}, nil
		}}
		err := g.CheckHost(context.Background(), "config.host", "redis.example.com")
		if err == nil || !strings.Contains(err.Error(), `field "config.host"`) || !strings.Contains(err.Error(), "169.254.169.254") {
			t.Errorf("a name with one refused address among its answers: %v", err)
		}
	})
	t.Run("a name that does not resolve is refused", func(t *testing.T) {
		g := Guard{Resolve: func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("no such host") }}
		if err := g.CheckHost(context.Background(), "url", "nowhere.invalid"); err == nil || !strings.Contains(err.Error(), "cannot be resolved") {
			t.Errorf("got %v", err)
		}
	})
}

func TestTheDialerRefusesWhatANameResolvesToWhenConnecting(t *testing.T) {
	// A name that passed the check at creation can resolve elsewhere
	// later (DNS rebinding): the dialer judges the address it connects to.
	var reached atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	t.Run("a name resolving to loopback is not connected to", func(t *testing.T) {
		res, err := Guard{}.Client(2 * time.Second).Get("http://localhost:" + port + "/")
		if err == nil {
			res.Body.Close()
			t.Fatal("the request went through")
		}
		if !strings.Contains(err.Error(), "loopback") {
			t.Errorf("the error does not say why: %v", err)
		}
		if reached.Load() != 0 {
			t.Error("the server was reached")
		}
	})
	t.Run("allow-private connects", func(t *testing.T) {
		res, err := Guard{AllowPrivate: true}.Client(2 * time.Second).Get("http://localhost:" + port + "/")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if reached.Load() != 1 {
			t.Errorf("the server was reached %d times", reached.Load())
		}
	})
	t.Run("every refused address is refused at dial time", func(t *testing.T) {
		for _, h := range readRefusedHosts(t) {
			u, _ := url.Parse("http://" + h.host + ":80/")
			a, err := netip.ParseAddr(u.Hostname())
			if err != nil {
				continue // the dialer sees addresses, never inet_aton spellings
			}
			if err := (Guard{}).DialControl("tcp", netip.AddrPortFrom(a, 80).String(), nil); err == nil {
				t.Errorf("%s (%s) was let through", h.host, h.what)
			}
		}
		for _, host := range allowed {
			u, _ := url.Parse("http://" + host + ":80/")
			if a, err := netip.ParseAddr(u.Hostname()); err == nil {
				if err := (Guard{}).DialControl("tcp", netip.AddrPortFrom(a, 80).String(), nil); err != nil {
					t.Errorf("%s: %v", host, err)
				}
			}
		}
	})
}
