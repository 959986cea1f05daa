package bootstrap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/formward/formward/adapters/crypto"
	"github.com/formward/formward/adapters/extend"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// Main runs the CLI and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCommand(stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "formward:", publicMessage(err))
		return 1
	}
	return 0
}

// publicMessage shows validation details plainly and everything else as it is.
func publicMessage(err error) string {
	var verr *domain.ValidationError
	if errors.As(err, &verr) && len(verr.Violations) > 0 {
		v := verr.Violations[0]
		return v.Field + ": " + v.Message
	}
	return err.Error()
}

type cli struct {
	cfg Config
	// init lets a management command create a new data dir, database and master key.
	init   bool
	errs   []error
	binder *binder
	// known is every FORMWARD_ variable of every command, for warnUnknownVariables.
	known  map[string]bool
	stdout io.Writer
	stderr io.Writer
}

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	_, root := newCLI(stdout, stderr)
	return root
}

// newCLI builds the command tree and the configuration its flags fill in.
func newCLI(stdout, stderr io.Writer) (*cli, *cobra.Command) {
	c := &cli{stdout: stdout, stderr: stderr, known: map[string]bool{}}
	c.cfg.settings = map[string]func() string{}
	for _, name := range extend.Variables() {
		c.known[name] = true // an extension's own settings, read with Config.Getenv
	}
	root := &cobra.Command{
		Use:           "formward",
		Short:         "Formward: self-hostable form collection with encrypted capture and signed events",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			// Bad variables, bad parsed flags and invalid settings are reported together.
			return errors.Join(append(c.errs, c.cfg.Validate(func(flag string) bool { return cmd.Flags().Lookup(flag) != nil }))...)
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	c.binder = c.flags(root.PersistentFlags(), "")
	bindCommon(c.binder, &c.cfg)
	c.binder.Bool(&c.init, "init", false, "let a management command (keys, workspaces, users, migrate) create a new data dir, database and master key; serve always may")

	serve := &cobra.Command{Use: "serve", Short: "Run the API server (embedded mode: everything in one process)", Args: cobra.NoArgs}
	bindServe(c.flags(serve.Flags(), ""), &c.cfg)
	bindPublicForms(c.flags(serve.Flags(), ""), &c.cfg)
	bindKafka(c.flags(serve.Flags(), ""), &c.cfg)
	bindDelivery(c.flags(serve.Flags(), ""), &c.cfg)
	bindBackup(c.flags(serve.Flags(), ""), &c.cfg)
	serve.RunE = func(cmd *cobra.Command, _ []string) error { return c.serve(cmd.Context()) }
	relay := &cobra.Command{Use: "relay", Short: "Publish the outbox's events to Kafka (one active relay at a time; others wait)", Args: cobra.NoArgs}
	bindKafka(c.flags(relay.Flags(), ""), &c.cfg)
	bindGroup(c.flags(relay.Flags(), ""), &c.cfg)
	bindMetrics(c.flags(relay.Flags(), ""), &c.cfg)
	relay.RunE = func(cmd *cobra.Command, _ []string) error { return c.relay(cmd.Context()) }
	worker := &cobra.Command{Use: "worker", Short: "Consume events from Kafka, fan them out to webhooks and send the deliveries (run as many as needed)", Args: cobra.NoArgs}
	bindBrokers(c.flags(worker.Flags(), ""), &c.cfg)
	bindWorker(c.flags(worker.Flags(), ""), &c.cfg)
	bindDelivery(c.flags(worker.Flags(), ""), &c.cfg)
	bindMetrics(c.flags(worker.Flags(), ""), &c.cfg)
	worker.RunE = func(cmd *cobra.Command, _ []string) error { return c.worker(cmd.Context()) }
	root.AddCommand(serve, relay, worker, c.migrateCommand(), c.keysCommand(), c.workspacesCommand(), c.usersCommand(),
		c.retentionCommand(), c.privacyCommand(), c.backupCommand(), c.filesCommand(), c.formsCommand(), c.extensionsCommand(), c.eventsCommand(),
		&cobra.Command{Use: "version", Short: "Print the version", Args: cobra.NoArgs, RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(c.stdout, Version)
			return nil
		}})
	return c, root
}

// extensionsCommand is `formward extensions`: what this build has registered (adapters/extend),
// Formward's own and a custom build's, so an operator can tell which binary is running.
func (c *cli) extensionsCommand() *cobra.Command {
	return &cobra.Command{Use: "extensions", Short: "List the workflow action types, object stores and captcha providers of this build", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			actions := slices.Sorted(maps.Keys(extend.Actions()))
			captchas := slices.Sorted(maps.Keys(extend.Captchas()))
			return c.printJSON(map[string][]string{"action_types": actions, "object_stores": extend.ObjectStores(), "captcha_providers": captchas})
		}}
}

// flags binds a command's flags to FORMWARD_<prefix><flag> variables.
func (c *cli) flags(fs *pflag.FlagSet, prefix string) *binder {
	return &binder{fs: fs, prefix: prefix, errs: &c.errs, known: c.known, settings: c.cfg.settings}
}

// withRuntime opens the database (migrating it) and makes sure the default workspace exists.
// It is the management commands' entry: it says which data dir and database it uses, and
// refuses to start a new installation unless --init asks for one.
func (c *cli) withRuntime(ctx context.Context, fn func(*Runtime) error) error {
	if err := c.checkDataDir(); err != nil {
		return err
	}
	log, flush, err := c.startLogger()
	if err != nil {
		return err
	}
	defer flush()
	rt, cleanup, err := newRuntime(ctx, c.cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	if _, err := rt.App.Commands.EnsureDefaultWorkspace.Handle(ctx); err != nil {
		return err
	}
	return fn(rt)
}

// checkDataDir prints the data dir and database in use on stderr, and refuses when they hold
// no installation yet: a key made in a fresh data dir (a command run from another directory)
// would be stored where no server looks, under a master key no server has.
func (c *cli) checkDataDir() error {
	dir, err := filepath.Abs(c.cfg.DataDir)
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	var missing []string
	database := "sqlite " + filepath.Join(dir, persistence.SQLiteFile)
	if c.cfg.DatabaseURL != "" {
		database = "postgres " + redactedDatabase(c.cfg.DatabaseURL)
	} else if !exists(filepath.Join(dir, persistence.SQLiteFile)) {
		missing = append(missing, "no database "+persistence.SQLiteFile)
	}
	if strings.TrimSpace(c.cfg.MasterKey) == "" && !exists(filepath.Join(dir, crypto.MasterKeyFile)) {
		missing = append(missing, "no "+crypto.MasterKeyFile+" and FORMWARD_MASTER_KEY unset")
	}
	fmt.Fprintf(c.stderr, "formward: data dir %s, database %s\n", dir, database)
	if err := requireMasterKey(c.cfg); err != nil {
		return err // --init does not generate a key for PostgreSQL either
	}
	if len(missing) > 0 && !c.init {
		return fmt.Errorf("data dir %s holds no Formward installation (%s): run the command where `formward serve` runs, "+
			"point --data-dir / FORMWARD_DATA_DIR (and FORMWARD_DATABASE_URL, FORMWARD_MASTER_KEY) where serve's point, "+
			"or pass --init to start a new installation there", dir, strings.Join(missing, ", "))
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// redactedDatabase names a PostgreSQL database by host and name, never its credentials.
func redactedDatabase(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Host + u.Path
}

func (c *cli) migrateCommand() *cobra.Command {
	return &cobra.Command{Use: "migrate", Short: "Apply the database migrations (embedded in the binary)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withRuntime(cmd.Context(), func(rt *Runtime) error {
				fmt.Fprintln(c.stdout, "migrations applied ("+rt.DB.Dialect()+")")
				// Submissions stored before the privacy index existed are indexed now (resumable).
				n, err := rt.App.Commands.ReindexPrivacy.Handle(cmd.Context(), workspaceapp.ReindexPrivacy{})
				if err != nil {
					return fmt.Errorf("privacy index backfill: %w", err)
				}
				if n > 0 {
					fmt.Fprintf(c.stdout, "privacy index: %d submissions indexed\n", n)
				}
				return nil
			})
		}}
}

func (c *cli) printJSON(v any) error {
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// allKeys lists the keys of one workspace, or of every workspace when workspaceID is empty,
// revoked ones included, acting as the system in each.
func (c *cli) allKeys(ctx context.Context, rt *Runtime, workspaceID string) ([]*apikey.Key, error) {
	ids := []string{workspaceID}
	if workspaceID == "" {
		all, err := rt.App.Queries.ListWorkspaces.Handle(ctx)
		if err != nil {
			return nil, err
		}
		ids = ids[:0]
		for _, w := range all {
			ids = append(ids, w.ID())
		}
	}
	var out []*apikey.Key
	for _, id := range ids {
		as := auth.WithPrincipal(ctx, auth.SystemPrincipal(id))
		page := ports.Page{Limit: 100}
		for {
			ks, more, err := rt.App.Queries.ListAPIKeys.Handle(as, accounts.ListAPIKeys{Page: page, IncludeRevoked: true})
			if err != nil {
				return nil, err
			}
			out = append(out, ks...)
			if !more || len(ks) == 0 {
				break
			}
			last := ks[len(ks)-1]
			page.After = &ports.Position{CreatedAt: last.CreatedAt(), ID: last.ID()}
		}
	}
	return out, nil
}

// revokeKey revokes the key in whichever workspace holds it, acting as the system there.
func (c *cli) revokeKey(ctx context.Context, rt *Runtime, id string) error {
	all, err := rt.App.Queries.ListWorkspaces.Handle(ctx)
	if err != nil {
		return err
	}
	for _, w := range all {
		err := rt.App.Commands.RevokeAPIKey.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(w.ID())), accounts.RevokeAPIKey{ID: id})
		if !errors.Is(err, domain.ErrNotFound) {
			return err
		}
	}
	return domain.ErrNotFound
}

func (c *cli) keysCommand() *cobra.Command {
	keys := &cobra.Command{Use: "keys", Short: "Manage API keys"}
	var name, scope, wsID string
	var asJSON bool
	create := &cobra.Command{Use: "create", Short: "Create an API key; prints the full key once", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withRuntime(cmd.Context(), func(rt *Runtime) error {
				target, err := c.workspaceOrDefault(cmd.Context(), rt, wsID)
				if err != nil {
					return err
				}
				ctx := auth.WithPrincipal(cmd.Context(), auth.SystemPrincipal(target))
				created, err := rt.App.Commands.CreateAPIKey.Handle(ctx, accounts.CreateAPIKey{Name: name, Scope: scope})
				if err != nil {
					return err
				}
				if asJSON {
					k := created.Key
					return c.printJSON(map[string]string{"id": k.ID(), "key": created.Token, "name": k.Name(), "scope": string(k.Scope()), "workspace_id": k.WorkspaceID()})
				}
				fmt.Fprintln(c.stdout, created.Token)
				return nil
			})
		}}
	kf := c.flags(create.Flags(), "key-")
	kf.String(&name, "name", "", "descriptive name (required)")
	kf.String(&scope, "scope", "", "admin, read-write or read-only (required)")
	kf.String(&wsID, "workspace", "", "workspace ID (default: the default workspace)")
	kf.Bool(&asJSON, "json", false, "print id, key, name, scope and workspace_id as JSON")

	var listWS string
	var listJSON bool
	list := &cobra.Command{Use: "list", Short: "List API keys (never their secrets)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withRuntime(cmd.Context(), func(rt *Runtime) error {
				ks, err := c.allKeys(cmd.Context(), rt, listWS)
				if err != nil {
					return err
				}
				rows := make([]map[string]any, 0, len(ks))
				for _, k := range ks {
					var revoked *string
					if t := k.RevokedAt(); t != nil {
						s := domain.FormatTime(*t)
						revoked = &s
					}
					rows = append(rows, map[string]any{"id": k.ID(), "name": k.Name(), "scope": string(k.Scope()),
						"workspace_id": k.WorkspaceID(), "created_at": domain.FormatTime(k.CreatedAt()), "revoked_at": revoked})
				}
				if listJSON {
					return c.printJSON(rows)
				}
				tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tSCOPE\tWORKSPACE\tCREATED\tREVOKED")
				for _, r := range rows {
					rev := "-"
					if s, _ := r["revoked_at"].(*string); s != nil {
						rev = *s
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r["id"], r["name"], r["scope"], r["workspace_id"], r["created_at"], rev)
				}
				return tw.Flush()
			})
		}}
	lf := c.flags(list.Flags(), "keys-list-")
	lf.String(&listWS, "workspace", "", "only keys of this workspace")
	lf.Bool(&listJSON, "json", false, "print JSON")

	revoke := &cobra.Command{Use: "revoke ID", Short: "Revoke an API key; running servers reject it on the next request", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withRuntime(cmd.Context(), func(rt *Runtime) error {
				if err := c.revokeKey(cmd.Context(), rt, args[0]); err != nil {
					if errors.Is(err, domain.ErrNotFound) {
						return fmt.Errorf("no API key %s", args[0])
					}
					return err
				}
				fmt.Fprintln(c.stderr, "revoked", args[0])
				return nil
			})
		}}

	rotate := &cobra.Command{Use: "rotate-master", Short: "Re-wrap every data key under the current master key", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withRuntime(cmd.Context(), func(rt *Runtime) error {
				n, err := crypto.RotateMaster(cmd.Context(), rt.Keyring, rt.DataKeys)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "re-wrapped %d data keys under master key %s\n", n, rt.Keyring.Primary().ID())
				return nil
			})
		}}
	keys.AddCommand(create, list, revoke, rotate)
	return keys
}

func (c *cli) workspaceOrDefault(ctx context.Context, rt *Runtime, id string) (string, error) {
	if id != "" {
		return id, nil
	}
	w, err := rt.App.Commands.EnsureDefaultWorkspace.Handle(ctx)
	if err != nil {
		return "", err
	}
	return w.ID(), nil
}

func (c *cli) workspacesCommand() *cobra.Command {
	ws := &cobra.Command{Use: "workspaces", Short: "Manage workspaces"}
	var name, plan string
	create := &cobra.Command{Use: "create", Short: "Create a workspace; prints its ID", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withRuntime(cmd.Context(), func(rt *Runtime) error {
				w, err := rt.App.Commands.CreateWorkspace.Handle(cmd.Context(), workspaceapp.CreateWorkspace{Name: name, Plan: workspace.Plan(plan)})
				if err != nil {
					return err
				}
				fmt.Fprintln(c.stdout, w.ID())
				return nil
			})
		}}
	wf := c.flags(create.Flags(), "workspace-")
	wf.String(&name, "name", "", "workspace name (required)")
	wf.String(&plan, "plan", "", "free, starter, growth or business (default: --default-plan)")

	var asJSON bool
	list := &cobra.Command{Use: "list", Short: "List workspaces", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withRuntime(cmd.Context(), func(rt *Runtime) error {
				all, err := rt.App.Queries.ListWorkspaces.Handle(cmd.Context())
				if err != nil {
					return err
				}
				rows := make([]map[string]string, 0, len(all))
				for _, w := range all {
					rows = append(rows, map[string]string{"id": w.ID(), "name": w.Name(), "plan": string(w.Plan()), "created_at": domain.FormatTime(w.CreatedAt())})
				}
				if asJSON {
					return c.printJSON(rows)
				}
				tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tPLAN\tCREATED")
				for _, r := range rows {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r["id"], r["name"], r["plan"], r["created_at"])
				}
				return tw.Flush()
			})
		}}
	c.flags(list.Flags(), "workspaces-list-").Bool(&asJSON, "json", false, "print JSON")
	ws.AddCommand(create, list)
	return ws
}

// newLogger writes JSON lines to stderr through a buffer flushed every second (and at exit),
// so a busy server does not pay one write system call per request line.
func newLogger(level string) (*zap.Logger, func(), error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, nil, fmt.Errorf("log level %q: use debug, info, warn or error", level)
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.TimeKey = "time"
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	out := &zapcore.BufferedWriteSyncer{WS: zapcore.Lock(os.Stderr), Size: 256 << 10, FlushInterval: time.Second}
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(encCfg), out, lvl), zap.AddCaller(), zap.ErrorOutput(zapcore.Lock(os.Stderr)))
	return log, func() { _ = log.Sync(); _ = out.Stop() }, nil
}
