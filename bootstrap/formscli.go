package bootstrap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// formsClient is the forms-as-code CLI: an API client of a running server.
type formsClient struct {
	base, key string
	http      *http.Client
}

func (c *cli) formsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "forms", Short: "Forms as code: export forms to YAML and apply YAML to a server (FORMWARD_API_URL, FORMWARD_API_KEY)",
		// An API client needs none of the server's settings.
		PersistentPreRunE: func(*cobra.Command, []string) error { return errors.Join(c.errs...) }}
	// Where the API is: flags with their variables, so that a server started with the same
	// environment knows the names and does not warn about them.
	var apiURL, apiKey string
	api := c.flags(cmd.PersistentFlags(), "")
	api.String(&apiURL, "api-url", "", "the server's public URL, e.g. https://forms.example.com")
	api.Secret(&apiKey, "api-key", "an API key of the workspace (read-write or admin to apply)")
	newFormsClient := func() (*formsClient, error) { return newAPIClient(apiURL, apiKey) }
	var dir string
	var all bool
	export := &cobra.Command{Use: "export [--all | REF...]", Short: "Write each form as <ref>.yaml", RunE: func(cmd *cobra.Command, refs []string) error {
		fc, err := newFormsClient()
		if err != nil {
			return err
		}
		return fc.export(cmd.Context(), c.stdout, dir, all, refs)
	}}
	export.Flags().StringVarP(&dir, "output", "o", ".", "folder to write the files to")
	c.flags(export.Flags(), "forms-").Bool(&all, "all", false, "also export forms without a ref, with a ref derived from their name")
	var file string
	var dry, allowType bool
	apply := &cobra.Command{Use: "apply -f FILE|DIR", Short: "Print the plan and apply it (create / update by ref)", Args: cobra.NoArgs, RunE: func(cmd *cobra.Command, _ []string) error {
		fc, err := newFormsClient()
		if err != nil {
			return err
		}
		return fc.apply(cmd.Context(), c.stdout, file, dry, allowType)
	}}
	apply.Flags().StringVarP(&file, "file", "f", "", "a YAML file or a folder of them (*.yaml, *.yml)")
	b := c.flags(apply.Flags(), "forms-")
	b.Bool(&dry, "dry-run", false, "print the plan only")
	b.Bool(&allowType, "allow-type-change", false, "let fields of forms with submissions change type")
	cmd.AddCommand(export, apply)
	return cmd
}

func newAPIClient(base, key string) (*formsClient, error) {
	base = strings.TrimRight(base, "/")
	if base == "" || key == "" {
		return nil, fmt.Errorf("set FORMWARD_API_URL (e.g. https://forms.example.com) and FORMWARD_API_KEY, or --api-url and --api-key")
	}
	return &formsClient{base: base, key: key, http: &http.Client{}}, nil
}

// call sends a request and decodes the JSON answer into out; an error answer becomes an error.
// A 429 or 503 is retried after its Retry-After (at most 10 seconds, 5 times).
func (fc *formsClient) call(ctx context.Context, method, path string, body any, out any) (int, error) {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return 0, err
		}
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, fc.base+"/v1"+path, bytes.NewReader(b))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+fc.key)
		req.Header.Set("Content-Type", "application/json")
		res, err := fc.http.Do(req)
		if err != nil {
			return 0, err
		}
		if (res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable) && attempt < 5 {
			wait, _ := strconv.Atoi(res.Header.Get("Retry-After"))
			res.Body.Close()
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(time.Duration(min(max(wait, 1), 10)) * time.Second):
			}
			continue
		}
		return fc.decode(res, method, path, out)
	}
}

func (fc *formsClient) decode(res *http.Response, method, path string, out any) (int, error) {
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, err
	}
	if res.StatusCode >= 300 {
		var e struct {
			Error struct {
				Message string `json:"message"`
				Details []struct {
					Field   string `json:"field"`
					Message string `json:"message"`
				} `json:"details"`
			} `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		msg := e.Error.Message
		for _, d := range e.Error.Details {
			msg += "; " + d.Field + ": " + d.Message
		}
		return res.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, msg)
	}
	return res.StatusCode, json.Unmarshal(raw, out)
}

var refUnsafe = regexp.MustCompile(`[^a-z0-9]+`)

// deriveRef makes a ref from a form's name.
func deriveRef(name string) string {
	r := strings.Trim(refUnsafe.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(r) > 64 {
		r = strings.TrimRight(r[:64], "-")
	}
	if r == "" {
		r = "form"
	}
	return r
}

func (fc *formsClient) export(ctx context.Context, w io.Writer, dir string, all bool, refs []string) error {
	want := map[string]bool{}
	for _, r := range refs {
		want[r] = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cursor := ""
	for {
		var page struct {
			Data []struct {
				ID   string  `json:"id"`
				Ref  *string `json:"ref"`
				Name string  `json:"name"`
			} `json:"data"`
			NextCursor *string `json:"next_cursor"`
		}
		path := "/forms?limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if _, err := fc.call(ctx, "GET", path, nil, &page); err != nil {
			return err
		}
		for _, f := range page.Data {
			ref := ""
			switch {
			case f.Ref != nil:
				ref = *f.Ref
			case all:
				ref = deriveRef(f.Name)
				fmt.Fprintf(w, "%s (%s) has no ref: exported as %s\n", f.Name, f.ID, ref)
			case len(want) == 0:
				fmt.Fprintf(w, "skipped %s (%s): no ref (set one, or use --all)\n", f.Name, f.ID)
				continue
			default:
				continue
			}
			if len(want) > 0 && !want[ref] {
				continue
			}
			var def json.RawMessage
			if _, err := fc.call(ctx, "GET", "/forms/"+f.ID+"/definition", nil, &def); err != nil {
				return err
			}
			b, err := definitionYAML(def, ref)
			if err != nil {
				return err
			}
			name := filepath.Join(dir, ref+".yaml")
			if err := os.WriteFile(name, b, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote %s\n", name)
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return nil
		}
		cursor = *page.NextCursor
	}
}

type formPlan struct {
	Action            string   `json:"action"`
	Ref               string   `json:"ref"`
	Name              bool     `json:"name_changed"`
	Description       bool     `json:"description_changed"`
	Settings          bool     `json:"settings_changed"`
	Added             []string `json:"added"`
	Removed           []string `json:"removed"`
	Relabelled        []string `json:"relabelled"`
	Changed           []string `json:"changed"`
	StoredSubmissions int64    `json:"stored_submissions"`
	FieldChanges      map[string]struct {
		Aspects        []string `json:"aspects"`
		OptionsAdded   []string `json:"options_added"`
		OptionsRemoved []string `json:"options_removed"`
	} `json:"field_changes"`
	RemovedAnswers map[string]int64 `json:"removed_answers"`
	Reordered      bool             `json:"reordered"`
}

// changeText reads what changes on a field for the plan: "type, options (+Team -Free)".
func (p formPlan) changeText(key string) string {
	ch := p.FieldChanges[key]
	parts := make([]string, 0, len(ch.Aspects))
	for _, a := range ch.Aspects {
		if a == "options" && len(ch.OptionsAdded)+len(ch.OptionsRemoved) > 0 {
			var opts []string
			for _, o := range ch.OptionsAdded {
				opts = append(opts, "+"+o)
			}
			for _, o := range ch.OptionsRemoved {
				opts = append(opts, "-"+o)
			}
			a += " (" + strings.Join(opts, " ") + ")"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, ", ")
}

type formDoc struct {
	ref, file string
	body      map[string]any
}

// definitionYAML writes a definition as the API returned it as block-style YAML, keeping the
// API's order of properties (ref, name, description, fields; key, label, type... in each
// field) so that a file reads like the document and diffs stay small; ref is set to ref.
func definitionYAML(def json.RawMessage, ref string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(def, &doc); err != nil { // JSON is YAML: the order is kept
		return nil, err
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		n.Style = 0
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	if root := doc.Content; len(root) == 1 && root[0].Kind == yaml.MappingNode {
		m := root[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "ref" {
				m.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ref}
			}
		}
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return out.Bytes(), enc.Close()
}

// readFormDocs reads a YAML file or every *.yaml / *.yml file of a folder, in name order.
func readFormDocs(path string) ([]formDoc, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if st.IsDir() {
		files = nil
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")) {
				files = append(files, filepath.Join(path, n))
			}
		}
		sort.Strings(files)
	}
	var docs []formDoc
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var body map[string]any
		if err := yaml.Unmarshal(raw, &body); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		ref, _ := body["ref"].(string)
		if ref == "" {
			ref = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), ".yaml"), ".yml")
		}
		docs = append(docs, formDoc{ref: ref, file: f, body: body})
	}
	return docs, nil
}

func (fc *formsClient) apply(ctx context.Context, w io.Writer, path string, dry, allowType bool) error {
	if path == "" {
		return fmt.Errorf("-f FILE|DIR is required")
	}
	docs, err := readFormDocs(path)
	if err != nil {
		return err
	}
	q := ""
	if allowType {
		q = "&allow_type_change=true"
	}
	plans := make([]formPlan, len(docs))
	var create, update, same int
	for i, d := range docs {
		if _, err := fc.call(ctx, "PUT", "/forms/by-ref/"+url.PathEscape(d.ref)+"?dry_run=true"+q, d.body, &plans[i]); err != nil {
			return fmt.Errorf("%s: %w", d.file, err)
		}
		p := plans[i]
		switch p.Action {
		case "create":
			create++
			fmt.Fprintf(w, "+ create %s (%d fields)\n", d.ref, len(p.Added))
		case "update":
			update++
			fmt.Fprintf(w, "~ update %s\n", d.ref)
			if p.Name {
				fmt.Fprintln(w, "    ~ name")
			}
			if p.Description {
				fmt.Fprintln(w, "    ~ description")
			}
			if p.Settings {
				fmt.Fprintln(w, "    ~ settings")
			}
			for _, k := range p.Added {
				fmt.Fprintf(w, "    + %s\n", k)
			}
			for _, k := range p.Relabelled {
				fmt.Fprintf(w, "    ~ %s (relabelled)\n", k)
			}
			for _, k := range p.Changed {
				fmt.Fprintf(w, "    ~ %s: %s\n", k, p.changeText(k))
			}
			for _, k := range p.Removed {
				fmt.Fprintf(w, "    - %s (%d stored answers, kept)\n", k, p.RemovedAnswers[k])
			}
			if p.Reordered {
				fmt.Fprintln(w, "    ~ field order")
			}
		default:
			same++
			fmt.Fprintf(w, "= unchanged %s\n", d.ref)
		}
	}
	fmt.Fprintf(w, "Plan: %d to create, %d to update, %d unchanged.\n", create, update, same)
	if dry || create+update == 0 {
		return nil
	}
	for i, d := range docs {
		if plans[i].Action == "unchanged" {
			continue
		}
		var done formPlan
		if _, err := fc.call(ctx, "PUT", "/forms/by-ref/"+url.PathEscape(d.ref)+"?"+strings.TrimPrefix(q, "&"), d.body, &done); err != nil {
			return fmt.Errorf("%s: %w", d.file, err)
		}
	}
	fmt.Fprintf(w, "Applied: %d created, %d updated.\n", create, update)
	return nil
}
