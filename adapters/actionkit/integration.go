package actionkit

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/formward/formward/ports"
)

// Prepare makes the checks an integration action makes before it calls out, in order: a
// canceled ctx is a retryable failure (see Canceled); a config validate rejects, and a missing
// credential (in.Credentials[credential] empty) failing with notConnected, are permanent.
// It returns the credential, or ok false and the outcome the action must return.
func Prepare(ctx context.Context, in ports.ActionInput, validate func(map[string]any) []ports.ConfigViolation,
	credential string, notConnected error) (secret string, out ports.ActionOutcome, ok bool) {
	if ctx.Err() != nil {
		return "", Canceled(ctx), false
	}
	if vs := validate(in.Config); len(vs) > 0 {
		return "", ports.ActionOutcome{Err: fmt.Errorf("invalid action config: %s: %s", vs[0].Key, vs[0].Message), Permanent: true}, false
	}
	secret = in.Credentials[credential]
	if secret == "" {
		return "", ports.ActionOutcome{Err: notConnected, Permanent: true}, false
	}
	return secret, ports.ActionOutcome{}, true
}

// ClientError is what an integration reports for a call that got no answer: the context's
// error when it ended, else the client's cause without the request URL (which may carry IDs).
func ClientError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
