package ports

import "time"

// Claim asks a repository for due work (deliveries or workflow runs) on behalf of one engine,
// fairly: no workspace and no endpoint gets more than its share, counting what the engine is
// already working on, so a workspace whose endpoints hang cannot take every slot.
type Claim struct {
	// Now is the time work must be due by.
	Now time.Time
	// Limit is the most items claimed.
	Limit int
	// Lease is how long claimed items stay hidden from other engines (their next attempt moves to Now+Lease).
	Lease time.Duration
	// PerWorkspace, when positive, is the most items of one workspace in flight, InFlight included.
	PerWorkspace int
	// PerEndpoint, when positive, is the most deliveries to one webhook in flight, InFlight
	// included. Runs have no single endpoint and ignore it.
	PerEndpoint int
	// EndpointLimits, when set, replaces PerEndpoint for the endpoints it names: the delivery
	// engine's adaptive limits, which may be above PerWorkspace.
	EndpointLimits map[string]int
	// Spare, when positive, lets a workspace go over PerWorkspace with deliveries to endpoints
	// whose EndpointLimits is above PerEndpoint (they answer well), as long as the claim takes at
	// most Spare items in all. Items within their workspace's share come first.
	Spare int
	// InFlight is what the engine is working on now.
	InFlight InFlight
}

// InFlight counts an engine's items in progress per workspace and per endpoint (webhook) ID.
type InFlight struct {
	Workspaces map[string]int
	Endpoints  map[string]int
}
