package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/formward/formward/ports"
)

// cursors signs keyset positions so a client can neither forge one nor use one on another list.
type cursors struct{ key []byte }

type cursorPayload struct {
	List string `json:"l"`
	At   int64  `json:"t"`
	ID   string `json:"i"`
}

func (c cursors) encode(list string, p ports.Position) string {
	raw, _ := json.Marshal(cursorPayload{List: list, At: p.CreatedAt.UnixMilli(), ID: p.ID})
	return base64.RawURLEncoding.EncodeToString(raw) + "." + base64.RawURLEncoding.EncodeToString(c.mac(raw))
}

func (c cursors) decode(list, s string) (*ports.Position, error) {
	bad := badRequest("cursor is not valid for this list; pass next_cursor exactly as returned")
	body, sig, ok := strings.Cut(s, ".")
	if !ok {
		return nil, bad
	}
	raw, err1 := base64.RawURLEncoding.DecodeString(body)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, c.mac(raw)) {
		return nil, bad
	}
	var p cursorPayload
	if err := json.Unmarshal(raw, &p); err != nil || p.List != list || p.ID == "" {
		return nil, bad
	}
	return &ports.Position{CreatedAt: time.UnixMilli(p.At).UTC(), ID: p.ID}, nil
}

func (c cursors) mac(raw []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(raw)
	return m.Sum(nil)[:16]
}
