package httpkit

import (
	"fmt"
	"unicode/utf8"
)

// InvalidUTF8Error says where a request body stops being valid UTF-8. JSON text must be UTF-8,
// and Go's decoder would otherwise replace bad bytes with U+FFFD and store a value the client
// never sent, so both the API and the public form's JSON post refuse such a body with 400.
type InvalidUTF8Error struct {
	// Offset is the position of the first byte that is not part of a valid UTF-8 sequence.
	Offset int
}

func (e *InvalidUTF8Error) Error() string {
	return fmt.Sprintf("the body is not valid UTF-8 (byte %d)", e.Offset)
}

// CheckUTF8 returns nil when body is valid UTF-8, else an *InvalidUTF8Error.
func CheckUTF8(body []byte) error {
	if utf8.Valid(body) {
		return nil
	}
	for i := 0; i < len(body); {
		r, size := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && size <= 1 {
			return &InvalidUTF8Error{Offset: i}
		}
		i += size
	}
	return &InvalidUTF8Error{Offset: len(body)}
}
