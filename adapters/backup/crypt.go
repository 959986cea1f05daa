package backup

import (
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
	"io"

	"github.com/minio/sio"

	"github.com/formward/formward/adapters/crypto"
)

// LabelBackups derives the backup key from the master key.
const LabelBackups = "formward backups v1"

// backupKey is the key of one backup: HKDF of the master key's backup subkey with the
// backup's ID as info, so a blob decrypts only under its own ID.
func backupKey(master crypto.MasterKey, id string) ([]byte, error) {
	return hkdf.Key(sha256.New, crypto.DeriveKey(master, LabelBackups), nil, id, 32)
}

func sioConfig(key []byte) sio.Config {
	return sio.Config{Key: key, MinVersion: sio.Version20, MaxVersion: sio.Version20, CipherSuites: []byte{sio.AES_256_GCM}}
}

// encryptWriter encrypts into w in DARE 2.0 packages of 64 KiB, each AES-256-GCM sealed with
// its sequence number, the last one marked final; Close writes the final package.
func encryptWriter(w io.Writer, key []byte) (io.WriteCloser, error) {
	ew, err := sio.EncryptWriter(w, sioConfig(key))
	if err != nil {
		return nil, fmt.Errorf("backup encryption: %w", err)
	}
	return ew, nil
}

// decryptReader authenticates every package as it reads: a changed, reordered, missing or
// truncated package is an error, never wrong plaintext.
func decryptReader(r io.Reader, key []byte) (io.Reader, error) {
	dr, err := sio.DecryptReader(r, sioConfig(key))
	if err != nil {
		return nil, fmt.Errorf("backup decryption: %w", err)
	}
	return dr, nil
}
