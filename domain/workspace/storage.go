package workspace

import (
	"errors"
	"fmt"
	"strconv"
)

// MB is the unit of the plans' storage limits and of their messages.
const MB = 1 << 20

// StorageLimit is the file storage one form may hold on a plan; ok is false for business,
// which is unlimited.
func StorageLimit(plan Plan) (limit int64, ok bool) {
	switch plan {
	case PlanFree:
		return 100 * MB, true
	case PlanStarter:
		return 1024 * MB, true
	case PlanGrowth:
		return 10 * 1024 * MB, true
	}
	return 0, false
}

// ErrQuotaExceeded is matched (errors.Is) by every *QuotaError.
var ErrQuotaExceeded = errors.New("file storage quota exceeded")

// QuotaError says an upload would take a form past its plan's file storage.
type QuotaError struct {
	Plan     Plan
	Limit    int64
	Used     int64
	Incoming int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("this form has reached its file storage limit of %s on the %s plan; delete files or upgrade the plan",
		formatMB(e.Limit), e.Plan)
}

// Is makes errors.Is(err, ErrQuotaExceeded) true.
func (e *QuotaError) Is(target error) bool { return target == ErrQuotaExceeded }

// CheckStorage returns a *QuotaError when incoming more bytes would take a form that already
// holds used bytes past the plan's limit; business is never limited.
func CheckStorage(plan Plan, used, incoming int64) error {
	limit, ok := StorageLimit(plan)
	if !ok || used+incoming <= limit {
		return nil
	}
	return &QuotaError{Plan: plan, Limit: limit, Used: used, Incoming: incoming}
}

func formatMB(n int64) string {
	if n >= 1024*MB && n%(1024*MB) == 0 {
		return strconv.FormatInt(n/(1024*MB), 10) + " GB"
	}
	return strconv.FormatInt(n/MB, 10) + " MB"
}
