package netaddr

import (
	"net/netip"
	"testing"
)

func TestCarried4(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"2002:c000:201:ffff::2", "192.0.2.1"},                 // 6to4: bits 16-48
		{"2001:0:4136:e378:8123:1:3fff:fdfe", "192.0.2.1"},     // Teredo: the last 32 bits inverted
		{"64:ff9b::c000:201", "192.0.2.1"},                     // NAT64's well-known /96
		{"2001:1::3fff:fdfe", "2001:1::3fff:fdfe"},             // 2001:1::/32 is not Teredo
		{"2003:c000:201::", "2003:c000:201::"},                 // nor 2003::/16 6to4
		{"64:ff9b:0:0:1::c000:201", "64:ff9b:0:0:1::c000:201"}, // outside the /96
		{"::ffff:192.0.2.1", "::ffff:192.0.2.1"},               // mapped: the caller's Unmap
		{"192.0.2.7", "192.0.2.7"},
	} {
		if got := Carried4(netip.MustParseAddr(c.in)); got != netip.MustParseAddr(c.want) {
			t.Errorf("Carried4(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := Carried4(netip.Addr{}); got.IsValid() {
		t.Errorf("Carried4 of the invalid Addr = %s", got)
	}
}
