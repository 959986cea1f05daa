package sheetstest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"testing"
)

// ServiceAccount is a Google service account with a fresh key.
type ServiceAccount struct {
	ClientEmail, KeyID string
	Key                *rsa.PrivateKey
}

// NewServiceAccount makes a service account with a new 2048-bit RSA key.
func NewServiceAccount(t testing.TB, clientEmail, keyID string) ServiceAccount {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return ServiceAccount{ClientEmail: clientEmail, KeyID: keyID, Key: key}
}

// JSON is the account's key file as the Google console gives it out, whose token_uri points
// at an attacker: Formward must use its configured token URL, never the key file's.
func (sa ServiceAccount) JSON(t testing.TB) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(sa.Key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "proj", "private_key_id": sa.KeyID,
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": sa.ClientEmail, "client_id": "1234567890",
		"token_uri": "https://attacker.example/token",
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
