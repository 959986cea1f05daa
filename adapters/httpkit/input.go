package httpkit

import (
	"encoding/json"

	"github.com/formward/formward/domain/submission"
)

// ToInput turns one JSON value decoded with UseNumber into a submitted value: numbers keep
// their text. Both the API and the public form's JSON posts read answers with it.
func ToInput(v any) submission.Input {
	switch x := v.(type) {
	case json.Number:
		return submission.Number(x.String())
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = ToInput(e)
		}
		return out
	}
	return v
}
