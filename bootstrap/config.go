// Package bootstrap reads the configuration, wires adapters to use cases (google/wire) and runs
// the process roles and the CLI.
package bootstrap

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/formward/formward/domain/retry"
)

// Version is set at build time with -ldflags.
var Version = "dev"

// Config is every setting; each has a flag and a FORMWARD_ environment variable. Settings are
// grouped by the adapter that reads them; the groups are embedded, so cfg.HTTPAddr reads as
// well as cfg.HTTPConfig.HTTPAddr. Validate checks them all once, at start.
type Config struct {
	LogLevel string

	StorageConfig
	CryptoConfig
	LimitsConfig
	HTTPConfig
	PublicFormsConfig
	KafkaConfig
	DeliveryConfig
	ActionsConfig
	FilesConfig
	BackupConfig
	AccountsConfig

	// settings reads each bound setting by its variable name (Getenv); the binder fills it.
	settings map[string]func() string
}

// Getenv reads a FORMWARD_ setting by its variable name as this command resolved it (flag,
// environment or default), or straight from the environment when no flag binds it (an
// extension's own variables); "" outside FORMWARD_. It is what extensions read settings with.
func (c Config) Getenv(name string) string {
	if !strings.HasPrefix(name, "FORMWARD_") {
		return ""
	}
	if v, ok := c.adapterSetting(name); ok {
		return v
	}
	if get, ok := c.settings[name]; ok {
		return get()
	}
	return os.Getenv(name)
}

// adapterSetting reads the settings the built-in actions, object stores and captcha providers
// are built from straight from c, so a Config changed after it was read (tests do) builds
// them as it says.
func (c Config) adapterSetting(name string) (string, bool) {
	switch name {
	case "FORMWARD_DATA_DIR":
		return c.DataDir, true
	case "FORMWARD_SMTP_URL":
		return c.SMTPURL, true
	case "FORMWARD_SMTP_FROM":
		return c.SMTPFrom, true
	case "FORMWARD_SLACK_API_URL":
		return c.SlackAPIURL, true
	case "FORMWARD_GOOGLE_SHEETS_URL":
		return c.GoogleSheetsURL, true
	case "FORMWARD_GOOGLE_TOKEN_URL":
		return c.GoogleTokenURL, true
	case "FORMWARD_S3_ENDPOINT":
		return c.S3Endpoint, true
	case "FORMWARD_S3_BUCKET":
		return c.S3Bucket, true
	case "FORMWARD_S3_ACCESS_KEY":
		return c.S3AccessKey, true
	case "FORMWARD_S3_SECRET_KEY":
		return c.S3SecretKey, true
	case "FORMWARD_S3_REGION":
		return c.S3Region, true
	case "FORMWARD_S3_USE_SSL":
		return strconv.FormatBool(c.S3UseSSL), true
	case "FORMWARD_S3_CA_FILE":
		return c.S3CAFile, true
	case "FORMWARD_TURNSTILE_VERIFY_URL":
		return c.TurnstileVerifyURL, true
	case "FORMWARD_HCAPTCHA_VERIFY_URL":
		return c.HCaptchaVerifyURL, true
	case "FORMWARD_RECAPTCHA_VERIFY_URL":
		return c.RecaptchaVerifyURL, true
	}
	return "", false
}

// StorageConfig is the database (adapters/persistence).
type StorageConfig struct {
	DataDir        string
	DatabaseURL    string
	DBMaxConns     int
	GroupCommitMax int
}

// CryptoConfig is the key material (adapters/crypto).
type CryptoConfig struct {
	MasterKey          string
	PreviousMasterKeys string
	IPHashSecret       string
}

// LimitsConfig is the plan of new workspaces and the size limits the use cases enforce.
type LimitsConfig struct {
	DefaultPlan   string
	MaxFields     int
	MaxOptions    int
	MaxWebhooks   int
	MaxWorkflows  int
	MaxActions    int
	MaxConditions int
}

// HTTPConfig is the public listener and the API on it (adapters/http).
type HTTPConfig struct {
	HTTPAddr        string
	TLSCertFile     string
	TLSKeyFile      string
	APIRateLimit    float64
	APIRateBurst    int
	ShutdownTimeout time.Duration
	DebugAddr       string
	// RetentionInterval is how often serve runs the retention job; 0 turns it off.
	RetentionInterval time.Duration
}

// PublicFormsConfig is the respondent's pages, /f/... (adapters/web), and their metrics
// listener: see bindPublicForms.
type PublicFormsConfig struct {
	TrustedProxies     []netip.Prefix
	FormRateLimit      int
	FormTokenTTL       time.Duration
	PoWMaxNumber       int
	TurnstileVerifyURL string
	HCaptchaVerifyURL  string
	RecaptchaVerifyURL string
	MetricsAddr        string
}

// KafkaConfig is the event pipeline: the relay's producer and the workers' consumer group
// (adapters/kafka).
type KafkaConfig struct {
	KafkaBrokers    string
	KafkaTopic      string
	KafkaPartitions int
	RelayBatch      int
	RelayPoll       time.Duration
	OutboxRetention time.Duration

	KafkaGroup          string
	KafkaSessionTimeout time.Duration
}

// DeliveryConfig is the outbound webhook client and its schedule (adapters/delivery).
type DeliveryConfig struct {
	// AllowPrivateDestinations lifts the public-address rule for webhook URLs (registration and
	// connect time); HTTPS stays required.
	AllowPrivateDestinations bool

	Retry               retry.Schedule
	DeliveryTimeout     time.Duration
	BreakerFailures     int
	BreakerCooldown     time.Duration
	WebhookCAFile       string
	DeliveryConcurrency int
	// DeliveryConcurrencyPerWorkspace and …PerEndpoint bound one workspace's and one
	// endpoint's share of DeliveryConcurrency (and of the run engine's).
	DeliveryConcurrencyPerWorkspace int
	DeliveryConcurrencyPerEndpoint  int
	// DeliveryConcurrencyPerEndpointMax is how far one webhook's adaptive limit may grow from
	// DeliveryConcurrencyPerEndpoint while it answers fast (at most DeliveryConcurrency).
	DeliveryConcurrencyPerEndpointMax int
}

// ActionsConfig is the workflow actions: the SMTP relay of send_email and the API bases of the
// integrations (adapters/email, chat, sheets).
type ActionsConfig struct {
	SMTPURL         string
	SMTPFrom        string
	SlackAPIURL     string
	GoogleSheetsURL string
	GoogleTokenURL  string
}

// FilesConfig is where uploaded files are kept (adapters/objectstore): the local disk under
// the data dir, or an S3-compatible store when S3Endpoint is set. PublicURL is the origin of
// the signed download links.
type FilesConfig struct {
	// ObjectStore names the registered object store of uploaded files; empty: "s3" when
	// S3Endpoint is set, else "local".
	ObjectStore string
	S3Endpoint  string
	S3Bucket    string
	S3AccessKey string
	S3SecretKey string
	S3Region    string
	S3UseSSL    bool
	S3CAFile    string
	PublicURL   string

	// Public form posts: files per file field and per post, and where large uploads are
	// spooled while a post is read (default <data dir>/tmp).
	MaxFilesPerField int
	MaxFilesPerPost  int
	TempDir          string
}

// AccountsConfig is how people sign in to the dashboard besides their password: an OpenID
// Connect provider (adapters/oidc) when all three of issuer, client ID and client secret are set.
type AccountsConfig struct {
	OIDCIssuer       string
	OIDCClientID     string
	OIDCClientSecret string
	OIDCCAFile       string
}

// OIDCEnabled reports whether sign-in with the OpenID provider is configured.
func (c AccountsConfig) OIDCEnabled() bool { return c.OIDCIssuer != "" }

// Brokers returns the configured Kafka brokers; none means embedded mode.
func (c Config) Brokers() []string {
	var out []string
	for _, b := range strings.Split(c.KafkaBrokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// envName turns a flag name into its environment variable.
func envName(flag string) string {
	return "FORMWARD_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// binder registers flags whose defaults come from the environment, so flag > env > default.
// prefix keeps the variables of command-specific flags apart (FORMWARD_KEY_NAME, FORMWARD_WORKSPACE_NAME).
// Every variable it reads is recorded in known (when set), the list unknown variables are
// checked against.
type binder struct {
	fs     *pflag.FlagSet
	prefix string
	errs   *[]error
	known  map[string]bool
	// settings, when set, records how to read each bound setting (Config.Getenv).
	settings map[string]func() string
}

// record makes the setting name readable by Config.Getenv.
func (b *binder) record(name string, get func() string) {
	if b.settings != nil {
		b.settings[envName(b.prefix+name)] = get
	}
}

func (b *binder) fail(err error) { *b.errs = append(*b.errs, err) }

func (b *binder) env(name string) (string, bool) {
	v := envName(b.prefix + name)
	if b.known != nil {
		b.known[v] = true
	}
	return os.LookupEnv(v)
}

func (b *binder) usage(name, usage string) string {
	return fmt.Sprintf("%s [%s]", usage, envName(b.prefix+name))
}

// Secret is a string flag whose environment value never shows as a default in --help.
func (b *binder) Secret(p *string, name, usage string) {
	b.fs.StringVar(p, name, "", b.usage(name, usage))
	if v, ok := b.env(name); ok {
		*p = v
	}
	b.record(name, func() string { return *p })
}

func (b *binder) Bool(p *bool, name string, def bool, usage string) {
	if v, ok := b.env(name); ok {
		parsed, err := strconv.ParseBool(v)
		if err != nil {
			b.fail(fmt.Errorf("%s: not true or false", envName(b.prefix+name)))
		}
		def = parsed
	}
	b.fs.BoolVar(p, name, def, b.usage(name, usage))
	b.record(name, func() string { return strconv.FormatBool(*p) })
}

func (b *binder) String(p *string, name, def, usage string) {
	if v, ok := b.env(name); ok {
		def = v
	}
	b.fs.StringVar(p, name, def, b.usage(name, usage))
	b.record(name, func() string { return *p })
}

func (b *binder) Int(p *int, name string, def int, usage string) {
	if v, ok := b.env(name); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.fail(fmt.Errorf("%s: not an integer", envName(b.prefix+name)))
		}
		def = n
	}
	b.fs.IntVar(p, name, def, b.usage(name, usage))
	b.record(name, func() string { return strconv.Itoa(*p) })
}

func (b *binder) Float(p *float64, name string, def float64, usage string) {
	if v, ok := b.env(name); ok {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			b.fail(fmt.Errorf("%s: not a number", envName(b.prefix+name)))
		}
		def = n
	}
	b.fs.Float64Var(p, name, def, b.usage(name, usage))
	b.record(name, func() string { return strconv.FormatFloat(*p, 'g', -1, 64) })
}

func (b *binder) Duration(p *time.Duration, name string, def time.Duration, usage string) {
	if v, ok := b.env(name); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.fail(fmt.Errorf("%s: not a duration such as 15s", envName(b.prefix+name)))
		}
		def = d
	}
	b.fs.DurationVar(p, name, def, b.usage(name, usage))
	b.record(name, func() string { return p.String() })
}

// bindCommon registers the settings every command uses.
func bindCommon(b *binder, c *Config) {
	b.String(&c.DataDir, "data-dir", "./data", "directory for the SQLite database, the generated master key and local files")
	b.Secret(&c.DatabaseURL, "database-url", "postgres://… to use PostgreSQL; empty uses SQLite in the data dir")
	b.Secret(&c.MasterKey, "master-key", "base64 of 32 bytes wrapping the data keys; generated into the data dir when empty")
	b.Secret(&c.PreviousMasterKeys, "previous-master-keys", "comma-separated older master keys, still accepted while rotating")
	b.Secret(&c.IPHashSecret, "ip-hash-secret", "secret keying the respondent IP hash; derived from the master key when empty")
	b.String(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	b.String(&c.DefaultPlan, "default-plan", "business", "plan of new workspaces: free, starter, growth, business")
	b.Int(&c.DBMaxConns, "db-max-conns", 0, "maximum open database connections (0: a sensible default per database)")
	b.Int(&c.GroupCommitMax, "group-commit-max", 128, "most submissions committed in one transaction")
	b.Int(&c.MaxFields, "max-fields", 200, "most fields per form")
	b.Int(&c.MaxOptions, "max-options", 500, "most options per field")
	b.Int(&c.MaxWebhooks, "max-webhooks", 100, "most webhooks per workspace")
	b.Int(&c.MaxWorkflows, "max-workflows", 50, "most workflows per form")
	b.Int(&c.MaxActions, "max-actions", 20, "most actions per workflow")
	b.Int(&c.MaxConditions, "max-conditions", 20, "most conditions per workflow trigger")
	b.Bool(&c.AllowPrivateDestinations, "allow-private-destinations", false, "let webhooks reach loopback and private addresses (self-hosted and test setups); HTTPS stays required")
	bindActions(b, c)
	bindFiles(b, c)
}

// bindFiles registers where uploaded files are kept (every role may delete forms and their files).
func bindFiles(b *binder, c *Config) {
	b.String(&c.ObjectStore, "object-store", "", "object store of uploaded files, by registered name: local, s3, or one a custom build adds; default s3 when --s3-endpoint is set, else local")
	b.String(&c.S3Endpoint, "s3-endpoint", "", "host:port of an S3-compatible store for uploaded files; empty keeps them under the data dir")
	b.String(&c.S3Bucket, "s3-bucket", "formward", "bucket of the uploaded files, created at start when missing")
	b.Secret(&c.S3AccessKey, "s3-access-key", "access key of the S3-compatible store")
	b.Secret(&c.S3SecretKey, "s3-secret-key", "secret key of the S3-compatible store")
	b.String(&c.S3Region, "s3-region", "", "region of the bucket (empty: the store's default)")
	b.Bool(&c.S3UseSSL, "s3-use-ssl", true, "reach the S3-compatible store over HTTPS")
	b.String(&c.S3CAFile, "s3-ca-file", "", "PEM file of extra CA certificates trusted for the S3-compatible store")
}

// bindActions registers the workflow action settings (every role builds the action runners:
// serve validates action configs with them, the executor runs them).
func bindActions(b *binder, c *Config) {
	b.Secret(&c.SMTPURL, "smtp-url", "SMTP relay of send_email: smtp://user:pass@host:port (STARTTLS when offered) or smtps://… (implicit TLS)")
	b.String(&c.SMTPFrom, "smtp-from", "", "sender address of send_email, e.g. forms@example.com")
	b.String(&c.SlackAPIURL, "slack-api-url", "https://slack.com", "base URL of the Slack Web API (a proxy or test server)")
	b.String(&c.GoogleSheetsURL, "google-sheets-url", "https://sheets.googleapis.com", "base URL of the Google Sheets API v4")
	b.String(&c.GoogleTokenURL, "google-token-url", "https://oauth2.googleapis.com/token", "Google OAuth token endpoint of the service-account flow (also the JWT audience)")
}

// bindServe registers the HTTP server settings.
func bindServe(b *binder, c *Config) {
	b.String(&c.HTTPAddr, "http-addr", "127.0.0.1:8080", "listen address")
	b.String(&c.TLSCertFile, "tls-cert-file", "", "TLS certificate (PEM); with --tls-key-file serves HTTPS, TLS 1.2 or higher")
	b.String(&c.TLSKeyFile, "tls-key-file", "", "TLS private key (PEM)")
	b.Float(&c.APIRateLimit, "api-rate-limit", 100, "API requests per second per key; 0 turns the limit off")
	b.Int(&c.APIRateBurst, "api-rate-burst", 200, "API burst per key")
	b.Duration(&c.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long a shutdown waits for requests in flight")
	b.String(&c.DebugAddr, "debug-addr", "", "when set, serves Go's pprof profiles on this address (keep it on loopback)")
	b.Duration(&c.RetentionInterval, "retention-interval", time.Hour, "how often serve applies the plans' retention and pending deletions (one process at a time); 0 turns it off")
	bindPublicURL(b, c)
	bindAccounts(b, c)
}

// bindPublicURL registers the public origin, the base of every link the server prints or sends.
func bindPublicURL(b *binder, c *Config) {
	b.String(&c.PublicURL, "public-url", "", "public origin of the service (https://forms.example.com): the base of the links it prints and sends (setup, invitations, password links, files, public forms); default http://<http-addr>")
}

// bindAccounts registers the dashboard's sign-in with an OpenID Connect provider.
func bindAccounts(b *binder, c *Config) {
	b.String(&c.OIDCIssuer, "oidc-issuer", "", "issuer URL of an OpenID Connect provider for dashboard sign-in (with --oidc-client-id and --oidc-client-secret); its redirect URL is <public URL>/app/oidc/callback")
	b.String(&c.OIDCClientID, "oidc-client-id", "", "client ID registered with the OpenID Connect provider")
	b.Secret(&c.OIDCClientSecret, "oidc-client-secret", "client secret registered with the OpenID Connect provider")
	b.String(&c.OIDCCAFile, "oidc-ca-file", "", "PEM file of extra CA certificates trusted for the OpenID Connect provider")
}

// bindKafka registers the event pipeline settings (relay and, with brokers, serve).
func bindKafka(b *binder, c *Config) {
	bindBrokers(b, c)
	b.Int(&c.KafkaPartitions, "kafka-partitions", 12, "partitions of the topic when the relay creates it at start")
	b.Int(&c.RelayBatch, "relay-batch", 500, "most outbox events published at once")
	b.Duration(&c.RelayPoll, "relay-poll", 20*time.Millisecond, "how often an idle relay reads the outbox")
	b.Duration(&c.OutboxRetention, "outbox-retention", 168*time.Hour, "how long published outbox rows are kept")
}

// bindBrokers registers where the events are (relay, worker, and serve, which runs the pipeline
// itself when there are none).
func bindBrokers(b *binder, c *Config) {
	b.String(&c.KafkaBrokers, "kafka-brokers", "", "comma-separated Kafka brokers (host:port); required by relay and worker, and without them serve runs the event pipeline in-process")
	b.String(&c.KafkaTopic, "kafka-topic", "formward.events.v1", "topic of the events")
}

// bindWorker registers the consumer group settings of the worker role.
func bindWorker(b *binder, c *Config) {
	bindGroup(b, c)
	b.Duration(&c.KafkaSessionTimeout, "kafka-session-timeout", 10*time.Second, "how long the group waits for a silent worker before giving its partitions to the others")
}

// bindGroup registers the workers' consumer group (worker, and the relay, which reports its lag).
func bindGroup(b *binder, c *Config) {
	b.String(&c.KafkaGroup, "kafka-group", "formward-worker", "consumer group of the workers; every worker of one installation joins it, and the relay reports its lag")
}

// bindDelivery registers the webhook delivery settings (worker, and serve in embedded mode).
func bindDelivery(b *binder, c *Config) {
	bindParsed(b, &c.Retry, "retry-delays", retry.Default().String(), "durations",
		"waits before each retry of a failed delivery or workflow action; one more failure after the last gives up", retry.Parse)
	b.Duration(&c.DeliveryTimeout, "delivery-timeout", 10*time.Second, "how long an endpoint has to answer 2xx")
	b.Int(&c.BreakerFailures, "breaker-failures", 5, "consecutive failures that open an endpoint's circuit breaker")
	b.Duration(&c.BreakerCooldown, "breaker-cooldown", 30*time.Second, "how long an open breaker refuses attempts before it lets one through")
	b.String(&c.WebhookCAFile, "webhook-ca-file", "", "PEM file of extra CA certificates trusted for outbound HTTPS (self-hosted and test receivers)")
	b.Int(&c.DeliveryConcurrency, "delivery-concurrency", 16, "deliveries sent at the same time by one process")
	b.Int(&c.DeliveryConcurrencyPerWorkspace, "delivery-concurrency-per-workspace", 4, "most of them (and of the workflow runs advanced at once) belonging to one workspace")
	b.Int(&c.DeliveryConcurrencyPerEndpoint, "delivery-concurrency-per-endpoint", 2, "most of them going to one webhook at first")
	b.Int(&c.DeliveryConcurrencyPerEndpointMax, "delivery-concurrency-per-endpoint-max", 16,
		"how far one webhook's limit may grow while it answers fast (at most delivery-concurrency; at most delivery-concurrency-per-endpoint: fixed)")
}
