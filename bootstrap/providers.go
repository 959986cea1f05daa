package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/formward/formward/adapters/analytics"
	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/delivery"
	"github.com/formward/formward/adapters/extend"
	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/httpkit"
	"github.com/formward/formward/adapters/metrics"
	"github.com/formward/formward/adapters/objectstore"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/application"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/workflow"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// Runtime is one process's wired adapters and use cases.
type Runtime struct {
	Log         *zap.Logger
	DB          *persistence.DB
	App         *application.Application
	Keyring     *crypto.Keyring
	DataKeys    ports.DataKeyRepository
	Idempotency ports.IdempotencyStore
	Clock       ports.Clock
	// Files holds uploaded files (local disk or S3), served at /files/ through signed links.
	Files ports.ObjectStore
	// FileEncryption is the encrypting store under Files, for encrypting files stored before
	// encryption existed (`formward files encrypt`, and serve at start).
	FileEncryption *objectstore.Encrypted
	// Metrics is the registry served on FORMWARD_METRICS_ADDR (docs/metrics.md).
	Metrics *metrics.Metrics
	// Members are the workspaces' memberships, listed by `formward users list`.
	Members ports.MembershipRepository
}

// Router builds the HTTP handler of the serve role.
func (rt *Runtime) Router(cfg Config) *httpapi.Router {
	r := httpapi.NewRouter(httpapi.Deps{
		App: rt.App, Idempotency: rt.Idempotency, Clock: rt.Clock, Logger: rt.Log, Ready: rt.DB.Ping,
	}, httpapi.Options{
		SigningKey: crypto.DeriveKey(rt.Keyring.Primary(), crypto.LabelCursor),
		RateLimit:  cfg.APIRateLimit, RateBurst: cfg.APIRateBurst, Middleware: serverTracing(),
		FileURL: rt.FileLinker(cfg), PublicURL: publicURL(cfg),
	})
	if rt.Files != nil {
		files := gin.WrapH(objectstore.Serve(rt.Files, rt.FileSigner(cfg), rt.Clock.Now))
		r.GET(objectstore.FilesPath+"*key", files)
		r.HEAD(objectstore.FilesPath+"*key", files)
	}
	return r
}

// FileLinker turns a submission's own uploads into signed download links for the API and the
// dashboard alike; any other value, external links included, is shown as stored.
func (rt *Runtime) FileLinker(cfg Config) httpkit.FileLinker {
	signer := rt.FileSigner(cfg)
	return func(s *submission.Submission, value string) string {
		if link, ok := signer.SubmissionLink(s.WorkspaceID(), s.FormID(), s.ID(), value, rt.Clock.Now().Add(fileLinkLifetime)); ok {
			return link
		}
		return value
	}
}

// fileLinkLifetime is how long a download link in an API response stays valid.
const fileLinkLifetime = time.Hour

// FileSigner makes and checks the signed, expiring download links of uploaded files.
func (rt *Runtime) FileSigner(cfg Config) objectstore.Signer {
	return objectstore.Signer{Key: crypto.DeriveKey(rt.Keyring.Primary(), crypto.LabelFiles), BaseURL: publicURL(cfg)}
}

// publicURL is FORMWARD_PUBLIC_URL, or the listen address when it is unset, without a
// trailing slash.
func publicURL(cfg Config) string {
	base := cfg.PublicURL
	if base == "" {
		base = "http://" + cfg.HTTPAddr
	}
	return strings.TrimSuffix(base, "/")
}

// The adapters' settings read from the configuration; each adapter package's ProviderSet builds
// on them.

// persistenceConfig is the database of FORMWARD_DATABASE_URL, or SQLite in the data dir.
func persistenceConfig(cfg Config) persistence.Config {
	return persistence.Config{
		DatabaseURL: cfg.DatabaseURL, DataDir: cfg.DataDir, MaxConns: cfg.DBMaxConns, GroupCommitMax: cfg.GroupCommitMax,
	}
}

// fileStoreConfig opens the registered object store FORMWARD_OBJECT_STORE names; by default
// the bucket when FORMWARD_S3_ENDPOINT is set, else <data dir>/files. Whichever it is, the
// caller encrypts it and reports its failures as unavailability.
func fileStoreConfig(cfg Config, log *zap.Logger) objectstore.StoreConfig {
	return objectstore.StoreConfig{Open: func(ctx context.Context) (ports.ObjectStore, error) {
		name := objectStoreName(cfg)
		open, err := extend.ObjectStore(name)
		if err != nil {
			return nil, fmt.Errorf("FORMWARD_OBJECT_STORE: %w", err)
		}
		store, err := open(ctx, extend.ObjectStoreDeps{DataDir: cfg.DataDir, Getenv: cfg.Getenv, Logger: log.Named("objectstore").With(zap.String("object_store", name))})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return store, nil
	}}
}

// objectStoreName is the object store the configuration asks for.
func objectStoreName(cfg Config) string {
	switch {
	case cfg.ObjectStore != "":
		return cfg.ObjectStore
	case cfg.S3Endpoint != "":
		return objectStoreS3
	default:
		return objectStoreLocal
	}
}

// provideKeyring loads the master keys and proves them on the data keys already stored, so a
// process given the wrong key stops at start, naming the key IDs, instead of answering 500 to
// every capture and read. A key is generated into the data dir only in the embedded mode, and
// only while the database holds no data key.
func provideKeyring(ctx context.Context, cfg Config, log *zap.Logger, keys *persistence.DataKeyRepository) (*crypto.Keyring, error) {
	if err := requireMasterKey(cfg); err != nil {
		return nil, err
	}
	stored, err := keys.OnePerMasterKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("master key check: %w", err)
	}
	if len(stored) > 0 && !masterKeyConfigured(cfg) {
		ids := make([]string, len(stored))
		for i, k := range stored {
			ids[i] = k.MasterKeyID
		}
		return nil, fmt.Errorf("no master key: FORMWARD_MASTER_KEY is unset and %s does not exist, but the database holds data keys wrapped by master key %s; "+
			"start with that key in FORMWARD_MASTER_KEY (or its file in the data dir)",
			filepath.Join(cfg.DataDir, crypto.MasterKeyFile), strings.Join(ids, ", "))
	}
	ring, err := loadKeyring(cfg, log)
	if err != nil {
		return nil, err
	}
	if err := crypto.CheckMasterKeys(ring, stored); err != nil {
		return nil, fmt.Errorf("%w; start with the key those data keys were wrapped with in FORMWARD_MASTER_KEY, "+
			"or, during a rotation, list it in FORMWARD_PREVIOUS_MASTER_KEYS", err)
	}
	return ring, nil
}

// masterKeyConfigured reports whether a master key is given (FORMWARD_MASTER_KEY) or was kept
// in the data dir by an earlier start.
func masterKeyConfigured(cfg Config) bool {
	return strings.TrimSpace(cfg.MasterKey) != "" || exists(filepath.Join(cfg.DataDir, crypto.MasterKeyFile))
}

// errMasterKeyRequired: with PostgreSQL every process must hold the same key, and a key
// generated into one process's data dir would be known to that process only.
var errMasterKeyRequired = errors.New("FORMWARD_MASTER_KEY is required with FORMWARD_DATABASE_URL: every process of the " +
	"installation must use the same master key, and one is generated into the data dir only in the embedded mode (SQLite); " +
	"make one with `head -c 32 /dev/urandom | base64`, keep a copy, and give it to every process")

// requireMasterKey refuses PostgreSQL without FORMWARD_MASTER_KEY.
func requireMasterKey(cfg Config) error {
	if cfg.DatabaseURL == "" || strings.TrimSpace(cfg.MasterKey) != "" {
		return nil
	}
	if file := filepath.Join(cfg.DataDir, crypto.MasterKeyFile); exists(file) {
		return fmt.Errorf("%w (%s exists: if it holds the key in use, put its content in FORMWARD_MASTER_KEY)", errMasterKeyRequired, file)
	}
	return errMasterKeyRequired
}

// loadKeyring reads the master key (FORMWARD_MASTER_KEY, else the data dir's key file, which
// the embedded mode generates when missing) and FORMWARD_PREVIOUS_MASTER_KEYS. With
// PostgreSQL, FORMWARD_MASTER_KEY is required.
func loadKeyring(cfg Config, log *zap.Logger) (*crypto.Keyring, error) {
	if err := requireMasterKey(cfg); err != nil {
		return nil, err
	}
	primary, generated, err := crypto.LoadOrCreateMasterKey(cfg.DataDir, cfg.MasterKey)
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	if generated {
		log.Warn("generated a new master key in the data dir; back it up, or set FORMWARD_MASTER_KEY",
			zap.String("master_key_id", primary.ID()), zap.String("data_dir", cfg.DataDir))
	}
	previous, err := crypto.ParsePreviousKeys(cfg.PreviousMasterKeys)
	if err != nil {
		return nil, fmt.Errorf("previous master keys: %w", err)
	}
	return crypto.NewKeyring(primary, previous...), nil
}

// provideIPHasher keys the respondent IP hash. Set FORMWARD_IP_HASH_SECRET to keep hashes
// stable across master key rotations.
func provideIPHasher(cfg Config, ring *crypto.Keyring) *crypto.IPHasher {
	if cfg.IPHashSecret != "" {
		return crypto.NewIPHasher([]byte(cfg.IPHashSecret))
	}
	return crypto.NewIPHasher(crypto.DeriveKey(ring.Primary(), crypto.LabelIPHash))
}

func provideSettings(cfg Config) (application.Settings, error) {
	plan, err := workspace.ParsePlan(cfg.DefaultPlan)
	if err != nil {
		return application.Settings{}, fmt.Errorf("default plan %q: use free, starter, growth or business", cfg.DefaultPlan)
	}
	if cfg.MaxFields < 1 || cfg.MaxOptions < 1 || cfg.MaxWebhooks < 1 || cfg.MaxWorkflows < 1 || cfg.MaxActions < 1 || cfg.MaxConditions < 1 {
		return application.Settings{}, fmt.Errorf("max fields, options, webhooks, workflows, actions and conditions must be positive")
	}
	if cfg.MaxFilesPerField < 0 || cfg.MaxFilesPerPost < 0 {
		return application.Settings{}, fmt.Errorf("max files per field and per post must not be negative")
	}
	return application.Settings{FormLimits: form.Limits{MaxFields: cfg.MaxFields, MaxOptions: cfg.MaxOptions, CaptchaProviders: captchaProviders()}, DefaultPlan: plan,
		MaxWebhooks: cfg.MaxWebhooks, MaxWorkflowsPerForm: cfg.MaxWorkflows,
		WorkflowLimits: workflow.Limits{MaxActions: cfg.MaxActions, MaxConditions: cfg.MaxConditions},
		FileLimits:     submission.FileLimits{PerField: cfg.MaxFilesPerField, PerPost: cfg.MaxFilesPerPost},
		PublicURL:      publicURL(cfg), MailRetry: cfg.Retry, OutboxRetention: cfg.OutboxRetention}, nil
}

// provideURLChecker checks webhook URLs at registration; FORMWARD_ALLOW_PRIVATE_DESTINATIONS
// lifts the public-address rule, the HTTPS rule stays.
func provideURLChecker(cfg Config) delivery.URLChecker {
	return delivery.URLChecker{AllowPrivate: cfg.AllowPrivateDestinations}
}

// formActivityWindow is how long the counter of the public pages' views, starts and
// submissions remembers a page's start: the render token's lifetime, or a day.
func formActivityWindow(cfg Config) analytics.Window {
	window := cfg.FormTokenTTL
	if window <= 0 {
		window = 24 * time.Hour
	}
	return analytics.Window(window)
}
