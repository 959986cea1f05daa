package ports

import "errors"

// ErrEmailUsed is returned when a capture's one-per-email key is already taken on its form:
// a response with the same email answer was stored before; nothing of this one was stored.
var ErrEmailUsed = errors.New("email answer already used on this form")

// CaptureGuards are the checks a public post must pass inside the transaction that stores it,
// so concurrent posts cannot slip past them together.
type CaptureGuards struct {
	// Token, when set, is the render token's nonce, spent with the submission (ErrTokenUsed).
	Token *SpentToken
	// MaxSubmissions, when above 0, refuses the post with domain.ErrFormClosed once the form
	// holds that many submissions (every stored one counts, API ones included).
	MaxSubmissions int64
	// EmailKey, when set, is the keyed hash of the post's one-per-email answer; a form keeps
	// each at most once (ErrEmailUsed).
	EmailKey string
}
