package webhook

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/flagplane/flagplane/shared/fault"
)

// CheckURL refuses anything but an absolute http(s) URL with a host and
// without user info, so a webhook can only ever be a plain POST target.
func CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fault.New(fault.Invalid, "field \"url\" is not a URL: %s", err.Error())
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fault.New(fault.Invalid, "field \"url\" must be an absolute http or https URL, not %q", raw)
	case u.Host == "" || u.Hostname() == "":
		return nil, fault.New(fault.Invalid, "field \"url\" has no host")
	case u.User != nil:
		return nil, fault.New(fault.Invalid, "field \"url\" must not carry a user name or password")
	case len(raw) > 2048:
		return nil, fault.New(fault.Invalid, "field \"url\" must be at most 2048 characters")
	}
	return u, nil
}

// Guard decides which addresses outbound requests a user's settings aim
// may reach: by default none that Refuses refuses (loopback, private,
// link-local where cloud metadata services answer, and every other
// special-purpose block), so a webhook, an integration, an import source
// or a store cannot be aimed at the service's own network (SSRF). Local
// mode and tests allow them.
type Guard struct {
	AllowPrivate bool
	// Resolve looks a host up; nil uses the system resolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Check refuses, with a 400 naming field, a URL whose host resolves to a
// refused address.
func (g Guard) Check(ctx context.Context, field string, u *url.URL) error {
	return g.CheckHost(ctx, field, u.Hostname())
}

// CheckHost refuses, with a 400 naming field, a host (a name, or an
// address however written) that is or resolves to a refused address, or
// that does not resolve: what cannot be judged is not stored.
func (g Guard) CheckHost(ctx context.Context, field, host string) error {
	if g.AllowPrivate {
		return nil
	}
	addrs, err := g.lookup(ctx, host)
	if err != nil {
		return fault.New(fault.Invalid, "field %q: host %q cannot be resolved", field, host)
	}
	for _, a := range addrs {
		if why, refused := Refuses(a); refused {
			return fault.New(fault.Invalid, "field %q: host %q is %s, %s: outbound requests may not reach it", field, host, a, why)
		}
	}
	return nil
}

func (g Guard) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a}, nil
	}
	if a, ok := legacyIPv4(host); ok {
		return []netip.Addr{a}, nil
	}
	if g.Resolve != nil {
		return g.Resolve(ctx, host)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %q: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %q: no addresses", host)
	}
	return ips, nil
}

// legacyIPv4 reads the old inet_aton forms of an IPv4 address that
// netip refuses but many HTTP clients and resolvers still accept:
// 2130706433, 0x7f000001, 0177.0.0.1, 127.1 are all 127.0.0.1. A webhook
// URL written so is judged by the address it means, without a DNS query.
func legacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil || p == "" || strings.ContainsAny(p, "+-_") {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	// Every part but the last is one byte; the last fills the bytes left.
	var ip uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		ip |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	ip |= last
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

// DialControl refuses, at connect time, an address Refuses refuses: the
// check at creation cannot see a DNS answer that changes later (DNS
// rebinding).
func (g Guard) DialControl(network, address string, _ syscall.RawConn) error {
	if g.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("outbound dial %s: %w", address, err)
	}
	if why, refused := Refuses(ap.Addr()); refused {
		return fmt.Errorf("outbound dial %s refused: %s", address, why)
	}
	return nil
}

// Client returns an HTTP client for requests a user's settings aim (a
// webhook, an event hook, an import source): every connection passes the
// guard when it dials, redirects are not followed (the request gets
// exactly its URL) and each request ends within timeout.
func (g Guard) Client(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, Control: g.DialControl}
	return &http.Client{
		Timeout:       timeout,
		Transport:     &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: 4, ResponseHeaderTimeout: timeout},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
