package ports_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/formward/formward/ports"
)

// ReadPage asks the store for one item more than the page holds, and answers with the page and
// whether more exist.
func TestReadPage(t *testing.T) {
	stored := []int{1, 2, 3, 4, 5}
	list := func(page ports.Page) ([]int, error) { return stored[:min(page.Limit, len(stored))], nil }
	for _, tc := range []struct {
		limit int
		want  []int
		more  bool
	}{
		{2, []int{1, 2}, true},
		{4, []int{1, 2, 3, 4}, true},
		{5, []int{1, 2, 3, 4, 5}, false},
		{9, []int{1, 2, 3, 4, 5}, false},
	} {
		got, more, err := ports.ReadPage(ports.Page{Limit: tc.limit}, list)
		if err != nil || !slices.Equal(got, tc.want) || more != tc.more {
			t.Errorf("limit %d: %v, %v, %v; want %v, %v", tc.limit, got, more, err, tc.want, tc.more)
		}
	}
	failed := errors.New("store down")
	if got, more, err := ports.ReadPage(ports.Page{Limit: 2}, func(ports.Page) ([]int, error) { return stored, failed }); got != nil || more || !errors.Is(err, failed) {
		t.Errorf("failing store: %v, %v, %v", got, more, err)
	}
}
