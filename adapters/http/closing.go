package httpapi

import (
	"encoding/json"
	"time"

	"github.com/formward/formward/domain/form"
)

var closingProps = []string{"closes_at", "max_submissions", "one_per_email_field", "message"}

type closingJSON struct {
	ClosesAt         *string `json:"closes_at"`
	MaxSubmissions   *int64  `json:"max_submissions"`
	OnePerEmailField *string `json:"one_per_email_field"`
	Message          *string `json:"message"`
}

// closingSettings reads settings.closing; omitted or null properties turn their rule off.
func closingSettings(so object) form.Closing {
	var c form.Closing
	co, ok := so.child("closing")
	if !ok {
		return c
	}
	co.allow(closingProps, nil)
	if v, _ := co.nullableStr("closes_at"); v != nil {
		t, err := time.Parse(time.RFC3339Nano, *v)
		if err != nil {
			co.vs.Add(co.at("closes_at"), "invalid_value", "closes_at must be an RFC 3339 timestamp such as 2026-12-31T23:59:59Z")
		} else {
			c.ClosesAt = &t
		}
	}
	if raw, present := co.props["max_submissions"]; present && !co.isNull("max_submissions") {
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil {
			co.typeError("max_submissions", "an integer")
		} else {
			c.MaxSubmissions = &n
		}
	}
	c.OnePerEmailField, _ = co.nullableStr("one_per_email_field")
	c.Message, _ = co.nullableStr("message")
	return c
}

func presentClosing(c form.Closing) closingJSON {
	return closingJSON{ClosesAt: optionalTime(c.ClosesAt), MaxSubmissions: c.MaxSubmissions, OnePerEmailField: c.OnePerEmailField, Message: c.Message}
}
