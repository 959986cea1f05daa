package ports

import "context"

// ReadAhead is a request's note to the repositories that it is about one form: the adapter
// that reads the caller's API key may read that form in the same round trip, and the form
// repository then answers from it. Only an optimisation: the form is read for the key's own
// workspace, and only a Get of that workspace's form with that ID uses it.
type ReadAhead struct {
	FormID string
	// Form is whatever the key's reader left for the form reader (nil: nothing, read as usual).
	Form any
}

type readAheadKey struct{}

// WithReadAhead notes that the request is about the form formID.
func WithReadAhead(ctx context.Context, formID string) context.Context {
	return context.WithValue(ctx, readAheadKey{}, &ReadAhead{FormID: formID})
}

// ReadAheadFrom is the request's note, or nil.
func ReadAheadFrom(ctx context.Context) *ReadAhead {
	ra, _ := ctx.Value(readAheadKey{}).(*ReadAhead)
	return ra
}
