package objectstore

import (
	"context"
	"fmt"

	"github.com/google/wire"

	"github.com/formward/formward/ports"
)

// ProviderSet is the store of uploaded files: local disk or an S3-compatible bucket, encrypted
// under keys sealed by the workspace data keys, whose failures the application sees as
// domain.ErrUnavailable.
var ProviderSet = wire.NewSet(ProvideEncrypted, ProvideStore)

// StoreConfig says where uploaded files are kept: in the S3-compatible bucket when S3.Endpoint
// is set, else under LocalDir(DataDir).
type StoreConfig struct {
	DataDir string
	S3      S3Config
}

// ProvideEncrypted opens the store of cfg and encrypts it with cipher.
func ProvideEncrypted(ctx context.Context, cfg StoreConfig, cipher ports.Cipher) (*Encrypted, error) {
	if cfg.S3.Endpoint == "" {
		store, err := NewLocal(LocalDir(cfg.DataDir))
		if err != nil {
			return nil, fmt.Errorf("file storage: %w", err)
		}
		return NewEncrypted(store, cipher), nil
	}
	store, err := NewS3(ctx, cfg.S3)
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
