package objectstore

import (
	"context"
	"fmt"

	"github.com/google/wire"

	"github.com/formward/formward/ports"
)

// ProviderSet is the store of uploaded files, whichever store keeps the bytes (local disk, an
// S3-compatible bucket, or one an extension registered), encrypted under keys sealed by the
// workspace data keys, whose failures the application sees as domain.ErrUnavailable.
var ProviderSet = wire.NewSet(ProvideEncrypted, ProvideStore)

// StoreConfig opens the store that keeps the bytes of uploaded files.
type StoreConfig struct {
	Open func(ctx context.Context) (ports.ObjectStore, error)
}

// ProvideEncrypted opens the store of cfg and encrypts it with cipher.
func ProvideEncrypted(ctx context.Context, cfg StoreConfig, cipher ports.Cipher) (*Encrypted, error) {
	store, err := cfg.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("file storage: %w", err)
	}
	return NewEncrypted(store, cipher), nil
}

// ProvideStore is the file store the application uses: storage failures come back as
// domain.ErrUnavailable.
func ProvideStore(files *Encrypted) ports.ObjectStore {
	return Unavailable(files)
}
