package bootstrap

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/formward/formward/domain/workspace"
)

// Validate checks every setting the command uses, once, at start, before anything is opened,
// and reports all bad values at once, each by its variable's name. has tells which flags the
// running command registered: a group the command does not read is not checked (its zero
// values would not be valid). The retry schedule is parsed where the delivery engine is built.
func (c Config) Validate(has func(flag string) bool) error {
	var v validator
	if _, err := zapcore.ParseLevel(c.LogLevel); err != nil {
		v.fail("log-level", "use debug, info, warn or error")
	}
	// Every command reads these.
	c.StorageConfig.validate(&v)
	c.LimitsConfig.validate(&v)
	c.ActionsConfig.validate(&v)
	c.FilesConfig.validate(&v)
	// The other groups are checked when the command registered the flag that marks them.
	for _, g := range []struct {
		flag     string
		validate func(*validator)
	}{
		{"http-addr", func(v *validator) { v.addr("http-addr", c.HTTPAddr, false) }},
		{"shutdown-timeout", c.HTTPConfig.validate},
		{"oidc-issuer", c.AccountsConfig.validate},
		{"trusted-proxies", c.PublicFormsConfig.validate},
		{"kafka-partitions", c.KafkaConfig.validateRelay},
		{"kafka-group", c.KafkaConfig.validateWorker},
		{"delivery-timeout", c.DeliveryConfig.validate},
		{"backup-retention", c.BackupConfig.validate},
	} {
		if has(g.flag) {
			g.validate(&v)
		}
	}
	return errors.Join(v.errs...)
}

func (c StorageConfig) validate(v *validator) {
	v.check(c.DatabaseURL == "" || strings.HasPrefix(c.DatabaseURL, "postgres://") || strings.HasPrefix(c.DatabaseURL, "postgresql://"),
		"database-url", "must start with postgres:// or postgresql:// (empty: SQLite in the data dir)")
	v.check(c.DBMaxConns >= 0, "db-max-conns", "must be 0 (a default per database) or more")
	v.check(c.GroupCommitMax >= 1, "group-commit-max", "must be at least 1")
}

func (c LimitsConfig) validate(v *validator) {
	if _, err := workspace.ParsePlan(c.DefaultPlan); err != nil {
		v.fail("default-plan", "use free, starter, growth or business")
	}
	for _, l := range []struct {
		flag string
		n    int
	}{{"max-fields", c.MaxFields}, {"max-options", c.MaxOptions}, {"max-webhooks", c.MaxWebhooks},
		{"max-workflows", c.MaxWorkflows}, {"max-actions", c.MaxActions}, {"max-conditions", c.MaxConditions}} {
		v.check(l.n >= 1, l.flag, "must be at least 1")
	}
}

func (c ActionsConfig) validate(v *validator) {
	v.url("slack-api-url", c.SlackAPIURL, false, "http", "https")
	v.url("google-sheets-url", c.GoogleSheetsURL, false, "http", "https")
	v.url("google-token-url", c.GoogleTokenURL, false, "http", "https")
	v.url("smtp-url", c.SMTPURL, true, "smtp", "smtps")
}

func (c FilesConfig) validate(v *validator) {
	v.check(c.S3Endpoint == "" || c.S3Bucket != "", "s3-bucket", "is required with an S3 endpoint")
	v.url("public-url", c.PublicURL, true, "http", "https")
}

func (c HTTPConfig) validate(v *validator) {
	v.addr("debug-addr", c.DebugAddr, true)
	v.check((c.TLSCertFile == "") == (c.TLSKeyFile == ""), "tls-cert-file", "set both --tls-cert-file and --tls-key-file, or neither")
	v.check(c.APIRateLimit >= 0, "api-rate-limit", "must be 0 (off) or more")
	v.check(c.APIRateBurst >= 0, "api-rate-burst", "must be 0 or more")
	v.positive("shutdown-timeout", c.ShutdownTimeout)
	v.check(c.RetentionInterval >= 0, "retention-interval", "must be 0 (off) or more")
}

// validate: the OpenID provider needs all three of issuer, client ID and client secret.
func (c AccountsConfig) validate(v *validator) {
	set := 0
	for _, s := range []string{c.OIDCIssuer, c.OIDCClientID, c.OIDCClientSecret} {
		if s != "" {
			set++
		}
	}
	v.check(set == 0 || set == 3, "oidc-issuer", "set all of FORMWARD_OIDC_ISSUER, FORMWARD_OIDC_CLIENT_ID and FORMWARD_OIDC_CLIENT_SECRET, or none")
	v.url("oidc-issuer", c.OIDCIssuer, true, "https", "http")
}

func (c PublicFormsConfig) validate(v *validator) {
	v.check(c.FormRateLimit >= 0, "form-rate-limit", "must be 0 (off) or more")
	v.positive("form-token-ttl", c.FormTokenTTL)
	v.check(c.PoWMaxNumber >= 1, "pow-max-number", "must be at least 1")
	v.url("turnstile-verify-url", c.TurnstileVerifyURL, false, "http", "https")
	v.url("hcaptcha-verify-url", c.HCaptchaVerifyURL, false, "http", "https")
	v.url("recaptcha-verify-url", c.RecaptchaVerifyURL, false, "http", "https")
	v.addr("metrics-addr", c.MetricsAddr, true)
}

func (c KafkaConfig) validateRelay(v *validator) {
	v.check(c.KafkaPartitions >= 1, "kafka-partitions", "must be at least 1")
	v.check(c.RelayBatch >= 1, "relay-batch", "must be at least 1")
	v.positive("relay-poll", c.RelayPoll)
	v.positive("outbox-retention", c.OutboxRetention)
}

func (c KafkaConfig) validateWorker(v *validator) {
	v.check(c.KafkaGroup != "", "kafka-group", "must not be empty")
	v.positive("kafka-session-timeout", c.KafkaSessionTimeout)
}

func (c DeliveryConfig) validate(v *validator) {
	v.positive("delivery-timeout", c.DeliveryTimeout)
	v.check(c.BreakerFailures >= 1, "breaker-failures", "must be at least 1")
	v.positive("breaker-cooldown", c.BreakerCooldown)
	v.check(c.DeliveryConcurrency >= 1, "delivery-concurrency", "must be at least 1")
}

type validator struct{ errs []error }

func (v *validator) fail(flag, msg string) {
	v.errs = append(v.errs, fmt.Errorf("%s (--%s): %s", envName(flag), flag, msg))
}

func (v *validator) check(ok bool, flag, msg string) {
	if !ok {
		v.fail(flag, msg)
	}
}

func (v *validator) positive(flag string, d time.Duration) {
	v.check(d > 0, flag, "must be a positive duration such as 30s")
}

// addr checks a host:port listen address.
func (v *validator) addr(flag, value string, optional bool) {
	if value == "" && optional {
		return
	}
	if _, _, err := net.SplitHostPort(value); err != nil {
		v.fail(flag, "must be host:port, e.g. 127.0.0.1:8080")
	}
}

// url checks an absolute URL with one of the schemes.
func (v *validator) url(flag, value string, optional bool, schemes ...string) {
	if value == "" && optional {
		return
	}
	u, err := url.Parse(value)
	ok := err == nil && u.Host != ""
	if ok {
		ok = false
		for _, s := range schemes {
			ok = ok || u.Scheme == s
		}
	}
	if !ok {
		v.fail(flag, "must be an absolute "+strings.Join(schemes, " or ")+" URL")
	}
}
