package domain

import "time"

// TimeLayout is the one timestamp format of the API and the events: UTC, milliseconds, Z.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime writes t in TimeLayout.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }
