package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"testing"
)

// The pooled HMAC is HMAC-SHA256 of the key, whichever keys alternate and however many
// goroutines sign at once.
func TestTokenMACPooled(t *testing.T) {
	want := func(key []byte, formID, issued, nonce string) string {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(formID + "\x00" + issued + "\x00" + nonce))
		return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	keys := [][]byte{[]byte("k1"), []byte("another key"), make([]byte, 100)}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 300 {
				key := keys[(i+g)%len(keys)]
				issued, nonce := "1700000000", string(rune('a'+i%26))
				if got := tokenMAC(key, "frm_1", issued, nonce); got != want(key, "frm_1", issued, nonce) {
					t.Errorf("key %q: MAC %s, want %s", key, got, want(key, "frm_1", issued, nonce))
					return
				}
			}
		})
	}
	wg.Wait()
}
