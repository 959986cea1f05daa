package apptest

import (
	"maps"
	"slices"

	"github.com/formward/formward/ports"
)

// ClaimFairly picks among n due items, earliest first, what the repositories' ClaimDue picks:
// at most c.PerEndpoint per endpoint and c.PerWorkspace per workspace, counting c.InFlight,
// workspaces in turn, up to c.Limit.
func ClaimFairly(c ports.Claim, n int, owner func(int) (workspaceID, endpointID string)) []int {
	perWorkspace := c.PerWorkspace
	if perWorkspace <= 0 {
		perWorkspace = c.Limit
	}
	ws, ep := maps.Clone(c.InFlight.Workspaces), maps.Clone(c.InFlight.Endpoints)
	if ws == nil {
		ws = map[string]int{}
	}
	if ep == nil {
		ep = map[string]int{}
	}
	type ranked struct{ i, rank int }
	var picks []ranked
	for i := range n {
		w, e := owner(i)
		if c.PerEndpoint > 0 && e != "" {
			if ep[e]++; ep[e] > c.PerEndpoint {
				continue
			}
		}
		if ws[w]++; ws[w] <= perWorkspace {
			picks = append(picks, ranked{i, ws[w]})
		}
	}
	slices.SortStableFunc(picks, func(a, b ranked) int { return a.rank - b.rank })
	out := make([]int, 0, min(len(picks), c.Limit))
	for _, p := range picks[:min(len(picks), c.Limit)] {
		out = append(out, p.i)
	}
	return out
}
