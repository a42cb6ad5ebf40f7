package webhook

import (
	"context"
	"net/netip"
	"net/url"
	"testing"
)

func TestGuardReadsEveryFormOfAnAddress(t *testing.T) {
	// No case may reach a resolver: each is an address, however written.
	g := Guard{Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
		t.Errorf("%q was looked up", host)
		return []netip.Addr{netip.MustParseAddr("203.0.113.7")}, nil
	}}
	refused := []string{
		"http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "http://[::ffff:127.0.0.1]/",
		"http://[::1]:8080/", "http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/",
		"http://127.1/", "http://0/", "http://10.1/", "http://0xa9.0xfe.0xa9.0xfe/", "http://100.64.0.1/",
	}
	for _, raw := range refused {
		t.Run(raw+" is refused", func(t *testing.T) {
			u, _ := url.Parse(raw)
			if err := g.Check(context.Background(), u); err == nil {
				t.Error("allowed")
			}
		})
	}
	for _, raw := range []string{"http://203.0.113.7/", "http://3405803783/"} { // 3405803783 is 203.0.113.7
		t.Run(raw+" is allowed", func(t *testing.T) {
			u, _ := url.Parse(raw)
			if err := g.Check(context.Background(), u); err != nil {
				t.Error(err)
			}
		})
	}
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
}
