// Package oidc signs people in with an OpenID Connect provider (github.com/coreos/go-oidc and
// golang.org/x/oauth2): discovery from the issuer, the authorization code flow with PKCE (S256),
// the ID token checked (signature, issuer, audience, expiry, nonce) and the email accepted only
// when the provider says it is verified.
package oidc

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/formward/formward/adapters/actionkit"
	"github.com/formward/formward/ports"
)

// CallbackPath is where the provider sends the browser back, under the public URL.
const CallbackPath = "/app/oidc/callback"

// DefaultTimeout bounds discovery and each call to the provider.
const DefaultTimeout = 10 * time.Second

// Scopes are requested at sign-in: the subject, the email and the name.
var Scopes = []string{gooidc.ScopeOpenID, "email", "profile"}

var (
	// ErrUnavailable: the issuer could not be discovered (the provider is down or misconfigured).
	ErrUnavailable = errors.New("oidc: the identity provider is unavailable")
	// ErrNonce: the ID token does not carry the nonce of this sign-in (a replayed or foreign token).
	ErrNonce = errors.New("oidc: the ID token's nonce does not match this sign-in")
	// ErrEmailNotVerified: the provider does not vouch for the email address.
	ErrEmailNotVerified = errors.New("oidc: the identity provider has not verified this email address")
	// ErrNoEmail: the provider gave no email address.
	ErrNoEmail = errors.New("oidc: the identity provider gave no email address")
)

// Config is the OpenID provider and this installation's client registration with it.
type Config struct {
	// Issuer is the provider's issuer URL; its discovery document is at
	// <Issuer>/.well-known/openid-configuration.
	Issuer       string
	ClientID     string
	ClientSecret string
	// PublicURL is the installation's public origin; the redirect URL is PublicURL + CallbackPath.
	PublicURL string
	// CAFile is a PEM file of CA certificates trusted for the provider in addition to the
	// system pool (self-hosted providers).
	CAFile string
	// Timeout bounds discovery and each call (DefaultTimeout when zero).
	Timeout time.Duration
}

// Provider implements ports.OIDCProvider. Discovery runs on first use and is retried on the
// next use until it succeeds, so the server starts while the provider is briefly down.
type Provider struct {
	cfg    Config
	client *http.Client

	mu  sync.Mutex
	dis *discovered
}

// discovered is what the discovery document gives.
type discovered struct {
	provider *gooidc.Provider
	verifier *gooidc.IDTokenVerifier
	oauth    *oauth2.Config
}

// New checks the configuration and builds the provider; it does not contact the issuer.
func New(cfg Config) (*Provider, error) {
	if cfg.Issuer == "" || cfg.ClientID == "" || cfg.ClientSecret == "" {
		return nil, errors.New("oidc: issuer, client ID and client secret are all required")
	}
	if u, err := url.Parse(cfg.Issuer); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("oidc: issuer %q is not an absolute http(s) URL", cfg.Issuer)
	}
	if u, err := url.Parse(cfg.PublicURL); err != nil || u.Host == "" {
		return nil, fmt.Errorf("oidc: public URL %q is not an absolute URL", cfg.PublicURL)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	client, err := actionkit.NewHTTPClient(cfg.CAFile, cfg.Timeout)
	if err != nil {
		return nil, fmt.Errorf("oidc: %w", err)
	}
	return &Provider{cfg: cfg, client: client}, nil
}

// RedirectURL is the callback registered with the provider.
func (p *Provider) RedirectURL() string {
	return strings.TrimSuffix(p.cfg.PublicURL, "/") + CallbackPath
}

// Discover fetches the discovery document once; later calls return what the first successful
// one found.
func (p *Provider) Discover(ctx context.Context) error {
	_, err := p.discover(ctx)
	return err
}

func (p *Provider) discover(ctx context.Context) (*discovered, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dis != nil {
		return p.dis, nil
	}
	ctx, cancel := context.WithTimeout(gooidc.ClientContext(ctx, p.client), p.cfg.Timeout)
	defer cancel()
	prov, err := gooidc.NewProvider(ctx, p.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("%w: discovery of %s: %w", ErrUnavailable, p.cfg.Issuer, err)
	}
	p.dis = &discovered{
		provider: prov,
		verifier: prov.Verifier(&gooidc.Config{ClientID: p.cfg.ClientID}),
		oauth: &oauth2.Config{
			ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret,
			Endpoint: prov.Endpoint(), RedirectURL: p.RedirectURL(), Scopes: Scopes,
		},
	}
	return p.dis, nil
}

// AuthURL is the provider's authorization endpoint for this sign-in: the state, the nonce and
// the S256 challenge of the verifier. It is empty while the issuer cannot be discovered.
func (p *Provider) AuthURL(state, nonce, verifier string) string {
	d, err := p.discover(context.Background())
	if err != nil {
		return ""
	}
	return d.oauth.AuthCodeURL(state, gooidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier))
}

// Exchange redeems the code with the PKCE verifier, verifies the ID token (signature against
// the provider's keys, issuer, audience, expiry) and its nonce, and returns the identity. The
// email comes from the ID token, or from the userinfo endpoint when the token carries none
// (for the same subject); it must be marked verified.
func (p *Provider) Exchange(ctx context.Context, code, verifier, nonce string) (ports.OIDCIdentity, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return ports.OIDCIdentity{}, err
	}
	ctx, cancel := context.WithTimeout(gooidc.ClientContext(ctx, p.client), 2*p.cfg.Timeout)
	defer cancel()
	tok, err := d.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return ports.OIDCIdentity{}, fmt.Errorf("oidc: code exchange: %w", err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return ports.OIDCIdentity{}, errors.New("oidc: the token response has no ID token")
	}
	idt, err := d.verifier.Verify(ctx, raw)
	if err != nil {
		return ports.OIDCIdentity{}, fmt.Errorf("oidc: ID token: %w", err)
	}
	if idt.Subject == "" {
		return ports.OIDCIdentity{}, errors.New("oidc: the ID token has no subject")
	}
	if nonce == "" || subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return ports.OIDCIdentity{}, ErrNonce
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return ports.OIDCIdentity{}, fmt.Errorf("oidc: access token: %w", err)
		}
	}
	var c claims
	if err := idt.Claims(&c); err != nil {
		return ports.OIDCIdentity{}, fmt.Errorf("oidc: ID token claims: %w", err)
	}
	if c.Email == "" {
		// Providers may keep the scope claims for the userinfo endpoint when they also issue an
		// access token (OpenID Connect Core 5.4).
		info, err := d.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return ports.OIDCIdentity{}, fmt.Errorf("oidc: userinfo: %w", err)
		}
		if info.Subject != idt.Subject {
			return ports.OIDCIdentity{}, errors.New("oidc: userinfo is about another subject than the ID token")
		}
		var ic claims
		if err := info.Claims(&ic); err != nil {
			return ports.OIDCIdentity{}, fmt.Errorf("oidc: userinfo claims: %w", err)
		}
		if c.Name == "" {
			c.Name = ic.Name
		}
		c.Email, c.EmailVerified = ic.Email, ic.EmailVerified
	}
	if c.Email == "" {
		return ports.OIDCIdentity{}, ErrNoEmail
	}
	if !c.EmailVerified {
		return ports.OIDCIdentity{}, ErrEmailNotVerified
	}
	return ports.OIDCIdentity{Subject: idt.Subject, Email: strings.TrimSpace(c.Email), Name: strings.TrimSpace(c.Name)}, nil
}

// claims are the standard claims read from the ID token or the userinfo response.
type claims struct {
	Email         string       `json:"email"`
	EmailVerified verifiedFlag `json:"email_verified"`
	Name          string       `json:"name"`
}

// verifiedFlag reads email_verified as a JSON boolean or, as some providers send it, the
// string "true"; anything else is not verified.
type verifiedFlag bool

func (f *verifiedFlag) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case bool:
		*f = verifiedFlag(v)
	case string:
		*f = verifiedFlag(v == "true")
	default:
		*f = false
	}
	return nil
}

var _ ports.OIDCProvider = (*Provider)(nil)
