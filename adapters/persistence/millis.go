package persistence

import "time"

// Times are stored as unix milliseconds UTC on both dialects, the precision of the API.
func toMillis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func toMillisPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	ms := toMillis(*t)
	return &ms
}

func fromMillisPtr(ms *int64) *time.Time {
	if ms == nil {
		return nil
	}
	t := fromMillis(*ms)
	return &t
}

// floorMillis and ceilMillis turn an exclusive bound of any precision into the equivalent
// bound on stored milliseconds.
func floorMillis(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.Before(time.UnixMilli(ms)) {
		ms-- // UnixMilli truncates toward zero before 1970
	}
	return ms
}

func ceilMillis(t time.Time) int64 {
	ms := floorMillis(t)
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return ms
}
