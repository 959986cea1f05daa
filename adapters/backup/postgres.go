package backup

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// postgresDB is a PostgreSQL database reached by URL, dumped and restored with the PostgreSQL
// client tools, which are looked up each time one is needed.
type postgresDB struct {
	url       string
	pgDump    Tool
	pgRestore Tool
	tmp       string
}

func (postgresDB) kind() string   { return "postgres" }
func (postgresDB) format() string { return "pg_dump-custom" }
func (p postgresDB) workDir() string {
	return p.tmp
}

// Tool is one PostgreSQL client tool. It is looked up when a backup, verify or restore runs,
// never before: a process that takes no PostgreSQL backup runs without the tools.
type Tool struct {
	// Path is the configured tool, a path or a name on the PATH; empty looks the tool up by its
	// own name on the PATH, then in the newest /usr/lib/postgresql/*/bin.
	Path string
	// Setting names what configures Path (for example FORMWARD_PG_DUMP), for the error that
	// says how to fix a missing tool.
	Setting string
}

// Find returns the path of the tool called name (pg_dump, pg_restore).
func (t Tool) Find(name string) (string, error) {
	fix := "install the PostgreSQL client tools"
	if t.Setting != "" {
		fix += " or set " + t.Setting + " to the tool's path"
	}
	if t.Path != "" {
		p, err := exec.LookPath(t.Path)
		if err != nil {
			what := "the configured path"
			if t.Setting != "" {
				what = t.Setting
			}
			return "", fmt.Errorf("%s not found at %q (%s): %s", name, t.Path, what, fix)
		}
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) > 0 {
		return matches[len(matches)-1], nil
	}
	return "", fmt.Errorf("%s not found on the PATH nor in /usr/lib/postgresql/*/bin: %s", name, fix)
}

// connArgs returns the URL without its password, and the environment that carries the
// password, so it never shows in the process list.
func (p postgresDB) connArgs() (string, []string, error) {
	u, err := url.Parse(p.url)
	if err != nil {
		return "", nil, errors.New("backup: database url is not a valid URL")
	}
	env := os.Environ()
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			env = append(env, "PGPASSWORD="+pw)
			u.User = url.User(u.User.Username())
		}
	}
	return u.String(), env, nil
}

func (p postgresDB) run(ctx context.Context, tool string, args ...string) error {
	dsn, env, err := p.connArgs()
	if err != nil {
		return err
	}
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "{dsn}", dsn)
	}
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", filepath.Base(tool), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// snapshot exports a snapshot from a repeatable-read transaction, counts every table in it,
// and has pg_dump dump exactly that snapshot: the counts and the dump agree, and the dump is
// consistent while writers go on.
func (p postgresDB) snapshot(ctx context.Context, db *sql.DB, path string) (map[string]int64, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres backup: %w", err)
	}
	defer func() { _ = conn.Close() }()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("postgres backup: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var snap string
	if err := tx.QueryRowContext(ctx, "SELECT pg_export_snapshot()").Scan(&snap); err != nil {
		return nil, fmt.Errorf("postgres backup: export snapshot: %w", err)
	}
	counts, err := countTables(ctx, tx, "postgres", `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		return nil, err
	}
	pgDump, err := p.pgDump.Find("pg_dump")
	if err != nil {
		return nil, fmt.Errorf("postgres backup: %w", err)
	}
	if err := p.run(ctx, pgDump, "--format=custom", "--snapshot="+snap, "--file="+path, "--dbname={dsn}"); err != nil {
		return nil, err
	}
	return counts, nil
}

// check runs pg_restore --list (the archive's table of contents must read), then has
// pg_restore write the data section as a script, without any database, and counts each
// table's COPY rows against the manifest.
func (p postgresDB) check(ctx context.Context, path string, m Manifest) error {
	pgRestore, err := p.pgRestore.Find("pg_restore")
	if err != nil {
		return fmt.Errorf("postgres backup check: %w", err)
	}
	if err := exec.CommandContext(ctx, pgRestore, "--list", path).Run(); err != nil {
		return fmt.Errorf("%w: pg_restore --list: %v", ErrCorrupt, err)
	}
	cmd := exec.CommandContext(ctx, pgRestore, "--data-only", "--file=-", path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pg_restore: %w", err)
	}
	counts, parseErr := countCopyRows(out)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%w: pg_restore: %v: %s", ErrCorrupt, err, strings.TrimSpace(stderr.String()))
	}
	if parseErr != nil {
		return parseErr
	}
	return compareCounts(m.Tables, counts)
}

// countCopyRows counts the data lines of every COPY block of a plain-format dump (one line per
// row: COPY's text format escapes newlines inside values).
func countCopyRows(r io.Reader) (map[string]int64, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	counts := map[string]int64{}
	table := ""
	for {
		chunk, err := br.ReadSlice('\n')
		line := append([]byte(nil), chunk[:min(len(chunk), 4096)]...)
		whole := !errors.Is(err, bufio.ErrBufferFull)
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = br.ReadSlice('\n') // the rest of a long line
		}
		if len(line) > 0 {
			switch {
			case table != "":
				if whole && bytes.Equal(bytes.TrimRight(line, "\r\n"), []byte(`\.`)) {
					table = ""
				} else {
					counts[table]++
				}
			case bytes.HasPrefix(line, []byte("COPY ")):
				name := strings.Fields(string(line[5:]))[0]
				if i := strings.LastIndexByte(name, '.'); i >= 0 {
					name = name[i+1:]
				}
				table = strings.Trim(name, `"`)
				counts[table] += 0
			}
		}
		if errors.Is(err, io.EOF) {
			return counts, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read pg_restore output: %w", err)
		}
	}
}

// restore replaces the database's contents with the archive in one transaction: objects of the
// archive are dropped first (--clean --if-exists), owners and grants are not restored.
func (p postgresDB) restore(ctx context.Context, path string) error {
	pgRestore, err := p.pgRestore.Find("pg_restore")
	if err != nil {
		return fmt.Errorf("postgres restore: %w", err)
	}
	return p.run(ctx, pgRestore, "--clean", "--if-exists", "--single-transaction", "--exit-on-error",
		"--no-owner", "--no-privileges", "--dbname={dsn}", path)
}
