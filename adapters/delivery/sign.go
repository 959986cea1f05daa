package delivery

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
)

// standardSecretPrefix marks a Standard Webhooks secret: "whsec_" + base64 of the key.
const standardSecretPrefix = "whsec_"

// Sign returns the X-Service-Signature value for body: "sha256=" + hex(HMAC-SHA256(secret,
// body)). The key is the secret string's bytes exactly as registered, whatever its form.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// SignStandard returns the Standard Webhooks webhook-signature value: "v1," +
// base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)), timestamp in unix seconds.
//
// The key is derived from the secret as Standard Webhooks libraries do: when the secret starts
// with "whsec_", the key is the base64 decoding of the rest; otherwise (or when the rest is not
// valid base64) the key is the secret string's bytes. Receivers that use a Standard Webhooks
// library with a non-"whsec_" secret must therefore pass it the key as "whsec_" +
// base64(secret); docs/webhooks.md tells receivers so, per language.
func SignStandard(secret, id string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, standardKey(secret))
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(strconv.FormatInt(timestamp, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func standardKey(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, standardSecretPrefix); ok {
		if key, err := base64.StdEncoding.DecodeString(rest); err == nil && len(key) > 0 {
			return key
		}
	}
	return []byte(secret)
}
