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

// Guard decides which addresses webhooks may reach. By default it refuses
// loopback, private, link-local (which holds cloud metadata services),
// unspecified and multicast addresses, so a webhook cannot be aimed at the
// service's own network (SSRF). Local mode and tests allow them.
type Guard struct {
	AllowPrivate bool
	// Resolve looks a host up; nil uses the system resolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Check refuses a URL whose host resolves to a forbidden address.
func (g Guard) Check(ctx context.Context, u *url.URL) error {
	if g.AllowPrivate {
		return nil
	}
	addrs, err := g.lookup(ctx, u.Hostname())
	if err != nil {
		return fault.New(fault.Invalid, "field \"url\": host %q cannot be resolved", u.Hostname())
	}
	for _, a := range addrs {
		if forbidden(a) {
			return fault.New(fault.Invalid, "field \"url\": host %q resolves to %s, a loopback, private, link-local or metadata address that webhooks may not reach", u.Hostname(), a)
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

// metadata is the address cloud instance metadata services answer on.
var metadata = netip.MustParseAddr("169.254.169.254")

func forbidden(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() || a == metadata ||
		// IPv6 unique local (fc00::/7) is covered by IsPrivate; 100.64/10 (carrier NAT) is not.
		netip.MustParsePrefix("100.64.0.0/10").Contains(a)
}

// DialControl refuses, at connect time, an address the guard forbids: the
// check at creation cannot see a DNS answer that changes later.
func (g Guard) DialControl(network, address string, _ syscall.RawConn) error {
	if g.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook dial %s: %w", address, err)
	}
	if forbidden(ap.Addr()) {
		return fmt.Errorf("webhook dial %s: the address is loopback, private, link-local or metadata", address)
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
