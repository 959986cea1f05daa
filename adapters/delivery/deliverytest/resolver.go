// Package deliverytest helps tests of outbound HTTP through adapters/delivery.
package deliverytest

import (
	"context"
	"net"
)

// Resolver is a fixed DNS table for delivery.Options.Resolver: each name resolves to its
// addresses, in order; any other name does not resolve.
type Resolver map[string][]string

// LookupIPAddr answers from the table.
func (r Resolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ips, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]net.IPAddr, len(ips))
	for i, ip := range ips {
		out[i] = net.IPAddr{IP: net.ParseIP(ip)}
	}
	return out, nil
}
