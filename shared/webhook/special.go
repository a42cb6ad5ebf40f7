package webhook

import (
	"fmt"
	"net/netip"
)

// The one rule for every outbound destination a user's settings name
// (webhooks, integrations, flag import sources, feature store and big
// segment store hosts): Refuses. It is built from IANA's IPv4 and IPv6
// Special-Purpose Address Registries (RFC 6890, as updated by RFC 8190 and
// later registrations; iana.org/assignments/iana-ipv4-special-registry and
// iana-ipv6-special-registry), with the IPv4 and IPv6 multicast blocks
// (RFC 5771, RFC 4291), the deprecated site-local (RFC 3879) and
// IPv4-compatible (RFC 4291 2.5.5.1) blocks added.
//
// Every block listed is refused. Most are not globally reachable per the
// registry. A few are marked globally reachable (the PCP, TURN and SRP
// anycast addresses, AS112, AMT, ORCHIDv2, DETs): they are anycast
// infrastructure or identifiers, never a host a user's webhook or store
// lives on, and each is one more door into some network's internals, so
// they are refused too. IPv6 outside global unicast (2000::/3) is refused
// as well: IANA holds the rest reserved or for the purposes listed.
//
// IPv6 forms that carry an IPv4 address (IPv4-mapped, IPv4-compatible,
// NAT64, 6to4, Teredo) are unwrapped and the IPv4 rule applied to what they
// carry: [64:ff9b::7f00:1] is 127.0.0.1 through a NAT64 gateway. Only the
// IPv4-mapped and well-known NAT64 forms are judged by their IPv4 address
// alone, as they are just another way to reach it; the others are refused
// whatever they carry.

// block is one registry entry.
type block struct {
	prefix netip.Prefix
	// name is the registry's name for the block, with its RFC.
	name string
	// embedded, when set, reads the IPv4 address an address of the block carries.
	embedded func(a [16]byte) netip.Addr
	// byEmbedded: the block is only another spelling of its IPv4 address,
	// which alone decides.
	byEmbedded bool
}

func v4at(i int, xor byte) func([16]byte) netip.Addr {
	return func(a [16]byte) netip.Addr {
		return netip.AddrFrom4([4]byte{a[i] ^ xor, a[i+1] ^ xor, a[i+2] ^ xor, a[i+3] ^ xor})
	}
}

func entry(prefix, name string) block {
	return block{prefix: netip.MustParsePrefix(prefix), name: name}
}

// special4 is IPv4's registry. A narrower entry comes before the one
// holding it, so a refusal names the most precise block.
var special4 = []block{
	entry("0.0.0.0/32", `"this host on this network" (RFC 1122)`),
	entry("0.0.0.0/8", `"this network" (RFC 791)`),
	entry("10.0.0.0/8", "private use (RFC 1918)"),
	entry("100.64.0.0/10", "shared address space, carrier-grade NAT (RFC 6598)"),
	entry("127.0.0.0/8", "loopback (RFC 1122)"),
	entry("169.254.0.0/16", "link local, where cloud metadata services answer (RFC 3927)"),
	entry("172.16.0.0/12", "private use (RFC 1918)"),
	entry("192.0.0.0/29", "IPv4 service continuity prefix (RFC 7335)"),
	entry("192.0.0.8/32", "IPv4 dummy address (RFC 7600)"),
	entry("192.0.0.9/32", "port control protocol anycast (RFC 7723)"),
	entry("192.0.0.10/32", "traversal using relays around NAT anycast (RFC 8155)"),
	entry("192.0.0.170/31", "NAT64/DNS64 discovery (RFC 8880)"),
	entry("192.0.0.0/24", "IETF protocol assignments (RFC 6890)"),
	entry("192.0.2.0/24", "documentation, TEST-NET-1 (RFC 5737)"),
	entry("192.31.196.0/24", "AS112-v4 (RFC 7535)"),
	entry("192.52.193.0/24", "automatic multicast tunneling (RFC 7450)"),
	entry("192.88.99.0/24", "deprecated 6to4 relay anycast (RFC 7526)"),
	entry("192.168.0.0/16", "private use (RFC 1918)"),
	entry("192.175.48.0/24", "direct delegation AS112 service (RFC 7534)"),
	entry("198.18.0.0/15", "benchmarking (RFC 2544)"),
	entry("198.51.100.0/24", "documentation, TEST-NET-2 (RFC 5737)"),
	entry("203.0.113.0/24", "documentation, TEST-NET-3 (RFC 5737)"),
	entry("224.0.0.0/4", "multicast (RFC 5771)"),
	entry("255.255.255.255/32", "limited broadcast (RFC 8190)"),
	entry("240.0.0.0/4", "reserved (RFC 1112)"),
}

// special6 is IPv6's registry, narrower entries first.
var special6 = []block{
	entry("::1/128", "loopback (RFC 4291)"),
	entry("::/128", "unspecified (RFC 4291)"),
	{prefix: netip.MustParsePrefix("::ffff:0:0/96"), name: "IPv4-mapped (RFC 4291)", embedded: v4at(12, 0), byEmbedded: true},
	{prefix: netip.MustParsePrefix("::/96"), name: "IPv4-compatible, deprecated (RFC 4291)", embedded: v4at(12, 0)},
	{prefix: netip.MustParsePrefix("64:ff9b::/96"), name: "NAT64 well-known prefix (RFC 6052)", embedded: v4at(12, 0), byEmbedded: true},
	// Operators may use the local-use prefix at any RFC 6052 length; the
	// /96 layout is read, and the block is refused whatever it carries.
	{prefix: netip.MustParsePrefix("64:ff9b:1::/48"), name: "local-use NAT64 (RFC 8215)", embedded: v4at(12, 0)},
	entry("100::/64", "discard-only (RFC 6666)"),
	entry("100:0:0:1::/64", "dummy IPv6 prefix (RFC 9780)"),
	// Teredo's client address is the last 32 bits, inverted (RFC 4380).
	{prefix: netip.MustParsePrefix("2001::/32"), name: "Teredo (RFC 4380)", embedded: v4at(12, 0xff)},
	entry("2001:1::1/128", "port control protocol anycast (RFC 7723)"),
	entry("2001:1::2/128", "traversal using relays around NAT anycast (RFC 8155)"),
	entry("2001:1::3/128", "DNS-SD service registration protocol anycast (RFC 9665)"),
	entry("2001:2::/48", "benchmarking (RFC 5180)"),
	entry("2001:3::/32", "automatic multicast tunneling (RFC 7450)"),
	entry("2001:4:112::/48", "AS112-v6 (RFC 7535)"),
	entry("2001:10::/28", "deprecated ORCHID (RFC 4843)"),
	entry("2001:20::/28", "ORCHIDv2 (RFC 7343)"),
	entry("2001:30::/28", "drone remote ID entity tags (RFC 9374)"),
	entry("2001::/23", "IETF protocol assignments (RFC 2928)"),
	entry("2001:db8::/32", "documentation (RFC 3849)"),
	// 6to4 carries its IPv4 address in bits 16 to 47 (RFC 3056).
	{prefix: netip.MustParsePrefix("2002::/16"), name: "6to4 (RFC 3056)", embedded: v4at(2, 0)},
	entry("2620:4f:8000::/48", "direct delegation AS112 service (RFC 7534)"),
	entry("3fff::/20", "documentation (RFC 9637)"),
	entry("5f00::/16", "segment routing SIDs (RFC 9602)"),
	entry("fc00::/7", "unique local (RFC 4193)"),
	entry("fe80::/10", "link-local unicast (RFC 4291)"),
	entry("fec0::/10", "deprecated site-local (RFC 3879)"),
	entry("ff00::/8", "multicast (RFC 4291)"),
}

// globalUnicast is IPv6's global unicast space (RFC 4291; IANA's IPv6
// address space registry).
var globalUnicast = netip.MustParsePrefix("2000::/3")

// Refuses reports whether an outbound connection to a may not be made,
// and why: the block it lies in, or the IPv4 address it carries and that
// address's block. See the rule above.
func Refuses(a netip.Addr) (why string, refused bool) {
	if !a.IsValid() {
		return "not an IP address", true
	}
	a = a.WithZone("")
	if a.Is4() {
		return refuses4(a)
	}
	raw := a.As16()
	for _, bl := range special6 {
		if !bl.prefix.Contains(a) {
			continue
		}
		if bl.embedded == nil {
			return bl.name, true
		}
		v4 := bl.embedded(raw)
		if why4, bad := refuses4(v4); bad {
			return fmt.Sprintf("%s carrying %s, %s", bl.name, v4, why4), true
		}
		if bl.byEmbedded {
			return "", false
		}
		return bl.name, true
	}
	if !globalUnicast.Contains(a) {
		return "outside IPv6 global unicast 2000::/3, reserved by IANA", true
	}
	return "", false
}

func refuses4(a netip.Addr) (string, bool) {
	for _, bl := range special4 {
		if bl.prefix.Contains(a) {
			return bl.name, true
		}
	}
	return "", false
}
