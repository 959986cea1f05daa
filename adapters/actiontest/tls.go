package actiontest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/ports"
)

// TestCA is a throwaway certificate authority and a server certificate it issued for
// localhost and 127.0.0.1.
type TestCA struct {
	// File is the CA certificate as a PEM file, for FORMWARD_WEBHOOK_CA_FILE-style settings.
	File string
	// Pool trusts the CA only.
	Pool *x509.CertPool
	// Server is the certificate a test server presents.
	Server tls.Certificate
}

// NewCA creates a TestCA whose file lives in t's temporary directory.
func NewCA(t testing.TB) *TestCA {
	t.Helper()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Formward test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caKey, caDER := issue(t, caTmpl, nil, nil)
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	key, leafDER := issue(t, leafTmpl, caCert, caKey)
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return &TestCA{File: file, Pool: pool, Server: tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}}
}

// issue makes a P-256 key and the certificate of tmpl for it, signed by parent with parentKey,
// or by itself when parent is nil.
func issue(t testing.TB, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return key, der
}

// TLSConfig is a server TLS configuration presenting the CA's server certificate.
func (ca *TestCA) TLSConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{ca.Server}, MinVersion: tls.VersionTLS12}
}

// HTTPSServer starts an HTTPS test server with the CA's certificate, closed with t.
func (ca *TestCA) HTTPSServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.TLS = ca.TLSConfig()
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// Sender is the SSRF-safe sender Formward gives actions (adapters/delivery, as
// extend.ActionDeps.Sender), set up for a test: it trusts the CA, and lets loopback
// addresses through so that it reaches an HTTPSServer on 127.0.0.1. Everything else (HTTPS
// only, no redirects, the per-endpoint breaker, the headers) is as in production.
func (ca *TestCA) Sender(t testing.TB) ports.Sender {
	t.Helper()
	c, err := delivery.NewClient(delivery.Options{AllowPrivate: true, ExtraCAFile: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return delivery.Sender{Client: c}
}
