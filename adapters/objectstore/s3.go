package objectstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// S3Config reaches an S3-compatible store (AWS S3, MinIO, Ceph, R2, …): FORMWARD_S3_ENDPOINT
// (host:port), FORMWARD_S3_BUCKET, FORMWARD_S3_ACCESS_KEY, FORMWARD_S3_SECRET_KEY,
// FORMWARD_S3_REGION, FORMWARD_S3_USE_SSL and FORMWARD_S3_CA_FILE.
type S3Config struct {
	Endpoint  string
	Bucket    string
	AccessKey string
	SecretKey string
	Region    string
	UseSSL    bool
	// CAFile is a PEM file of extra CA certificates trusted for the endpoint (self-hosted stores).
	CAFile string
}

// S3 stores objects in one bucket. Objects are written without any ACL, so they stay as
// private as the bucket; downloads go through Serve's signed URLs, never to the bucket.
type S3 struct {
	client *minio.Client
	bucket string
}

var _ ports.ObjectStore = (*S3)(nil)

// NewS3 connects and creates the bucket when it is missing.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" {
		return nil, errors.New("s3: endpoint and bucket are required")
	}
	opts := &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: cfg.UseSSL,
		Region: cfg.Region,
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("s3 ca file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("s3 ca file %s: no PEM certificates", cfg.CAFile)
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
		opts.Transport = tr
	}
	client, err := minio.New(cfg.Endpoint, opts)
	if err != nil {
		return nil, fmt.Errorf("s3 client: %w", err)
	}
	exists, err := client.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("s3 bucket %s: %w", cfg.Bucket, err)
	}
	if !exists {
		if err := client.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: cfg.Region}); err != nil {
			// Another process may have created it in between.
			if code := minio.ToErrorResponse(err).Code; code != "BucketAlreadyOwnedByYou" && code != "BucketAlreadyExists" {
				return nil, fmt.Errorf("s3 create bucket %s: %w", cfg.Bucket, err)
			}
		}
	}
	return &S3{client: client, bucket: cfg.Bucket}, nil
}

// Put uploads the object with its content type.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	if _, err := s.client.PutObject(ctx, s.bucket, key, r, size, minio.PutObjectOptions{ContentType: contentType}); err != nil {
		return fmt.Errorf("s3 put %s: %w", key, err)
	}
	return nil
}

// Get opens the object, or returns domain.ErrNotFound.
func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, ports.ObjectInfo, error) {
	if err := ValidateKey(key); err != nil {
		return nil, ports.ObjectInfo{}, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, ports.ObjectInfo{}, s.err("get", key, err)
	}
	st, err := obj.Stat()
	if err != nil {
		_ = obj.Close()
		return nil, ports.ObjectInfo{}, s.err("get", key, err)
	}
	return obj, ports.ObjectInfo{Size: st.Size, ContentType: st.ContentType, ModTime: st.LastModified.UTC()}, nil
}

func (s *S3) err(op, key string, err error) error {
	if code := minio.ToErrorResponse(err).Code; code == "NoSuchKey" || code == "NotFound" {
		return fmt.Errorf("object %s: %w", key, domain.ErrNotFound)
	}
	return fmt.Errorf("s3 %s %s: %w", op, key, err)
}

// Delete removes the object; S3 answers a missing object with success too.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		if code := minio.ToErrorResponse(err).Code; code == "NoSuchKey" {
			return nil
		}
		return fmt.Errorf("s3 delete %s: %w", key, err)
	}
	return nil
}

// DeletePrefix lists the objects under prefix and removes them in batches.
func (s *S3) DeletePrefix(ctx context.Context, prefix string) error {
	if err := ValidatePrefix(prefix); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	listed := s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true})
	var listErr error
	objects := make(chan minio.ObjectInfo)
	go func() {
		defer close(objects)
		for o := range listed {
			if o.Err != nil {
				listErr = o.Err
				return
			}
			select {
			case objects <- o:
			case <-ctx.Done():
				return
			}
		}
	}()
	var firstErr error
	for e := range s.client.RemoveObjects(ctx, s.bucket, objects, minio.RemoveObjectsOptions{}) {
		if e.Err != nil && firstErr == nil {
			firstErr = fmt.Errorf("s3 delete %s: %w", e.ObjectName, e.Err)
		}
	}
	if firstErr != nil {
		return firstErr
	}
	if listErr != nil {
		return fmt.Errorf("s3 list %s: %w", prefix, listErr)
	}
	return nil
}

// Usage sums the sizes of the objects under prefix.
func (s *S3) Usage(ctx context.Context, prefix string) (int64, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return 0, err
	}
	var total int64
	for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return 0, fmt.Errorf("s3 list %s: %w", prefix, o.Err)
		}
		total += o.Size
	}
	return total, nil
}

// List calls fn with the key of every object under prefix.
func (s *S3) List(ctx context.Context, prefix string, fn func(key string) error) error {
	if err := ValidatePrefix(prefix); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return fmt.Errorf("s3 list %s: %w", prefix, o.Err)
		}
		if err := fn(o.Key); err != nil {
			return err
		}
	}
	return nil
}
