package apptest

import (
	"maps"
	"slices"

	"github.com/formward/formward/ports"
)

// ClaimFairly picks among n due items, earliest first, what the repositories' ClaimDue picks:
// at most c.PerEndpoint per endpoint (or its c.EndpointLimits) and c.PerWorkspace per workspace,
// counting c.InFlight, workspaces in turn; then, up to c.Spare items in all, items over their
// workspace's share of endpoints whose limit grew above c.PerEndpoint; up to c.Limit.
func ClaimFairly(c ports.Claim, n int, owner func(int) (workspaceID, endpointID string)) []int {
	perWorkspace := c.PerWorkspace
	if perWorkspace <= 0 {
		perWorkspace = c.Limit
	}
	share := perWorkspace
	if c.PerEndpoint > 0 {
		share = min(c.PerEndpoint, perWorkspace)
	}
	limit := func(e string) int {
		if l, ok := c.EndpointLimits[e]; ok {
			return l
		}
		return share
	}
	ws, ep := maps.Clone(c.InFlight.Workspaces), maps.Clone(c.InFlight.Endpoints)
	if ws == nil {
		ws = map[string]int{}
	}
	if ep == nil {
		ep = map[string]int{}
	}
	type ranked struct{ i, rank int }
	type overItem struct {
		i, rank  int
		endpoint string
	}
	var picks []ranked
	var over []overItem
	rejected := map[string]bool{}
	for i := range n {
		w, e := owner(i)
		if e != "" {
			if ep[e] >= limit(e) {
				continue
			}
			if ep[e]++; ep[e] > share {
				over = append(over, overItem{i, ep[e], e})
				continue
			}
		}
		if ws[w]++; ws[w] <= perWorkspace {
			picks = append(picks, ranked{i, ws[w]})
		} else if e != "" {
			rejected[e] = true
		}
	}
	slices.SortStableFunc(picks, func(a, b ranked) int { return a.rank - b.rank })
	out := make([]int, 0, min(len(picks), c.Limit))
	for _, p := range picks {
		out = append(out, p.i)
	}
	slices.SortStableFunc(over, func(a, b overItem) int { return a.rank - b.rank })
	taken := len(out)
	for _, o := range over {
		if rejected[o.endpoint] {
			continue
		}
		if taken++; taken > c.Spare {
			break
		}
		out = append(out, o.i)
	}
	return out[:min(len(out), c.Limit)]
}
