package workspace

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckStorage(t *testing.T) {
	cases := []struct {
		plan           Plan
		used, incoming int64
		refused        bool
	}{
		{PlanFree, 0, 100 * MB, false},
		{PlanFree, 1, 100 * MB, true},
		{PlanStarter, 1024 * MB, 1, true},
		{PlanGrowth, 10*1024*MB - 10, 10, false},
		{PlanBusiness, 1 << 50, 1 << 50, false},
	}
	for _, c := range cases {
		err := CheckStorage(c.plan, c.used, c.incoming)
		if (err != nil) != c.refused {
			t.Fatalf("%s used %d + %d: err = %v", c.plan, c.used, c.incoming, err)
		}
		if err != nil && (!errors.Is(err, ErrQuotaExceeded) || !strings.Contains(err.Error(), string(c.plan))) {
			t.Fatalf("error %v", err)
		}
	}
	if err := CheckStorage(PlanStarter, 1024*MB, 1); !strings.Contains(err.Error(), "1 GB") {
		t.Fatalf("message %q", err)
	}
}
