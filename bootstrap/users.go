package bootstrap

import (
	"context"
	"fmt"
	"net/url"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// setupPath is the dashboard page the first-run link opens.
const setupPath = "/app/setup"

// announceSetup logs the one-time link that creates the first owner, while no user exists.
// It is the one secret the server logs, on purpose: whoever installs Formward reads it there.
// Each start issues a new link; the previous one stops working.
func announceSetup(ctx context.Context, cfg Config, rt *Runtime) error {
	token, issued, err := rt.App.Commands.IssueSetupToken.Handle(ctx, accounts.IssueSetupToken{})
	if err != nil {
		return fmt.Errorf("first-run setup link: %w", err)
	}
	if !issued {
		return nil
	}
	link := publicURL(cfg) + setupPath + "?" + url.Values{"token": {token}}.Encode()
	rt.Log.Info("no user exists yet: open this one-time link to create the first owner (valid 24h)", zap.String("setup_url", link))
	return nil
}

func (c *cli) usersCommand() *cobra.Command {
	users := &cobra.Command{Use: "users", Short: "Manage the people who sign in to the dashboard"}
	var email, name, wsID, role string
	create := &cobra.Command{Use: "create", Short: "Create a person in a workspace; prints a one-time link to set a password", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withRuntime(cmd.Context(), func(rt *Runtime) error {
				ctx := cmd.Context()
				target, err := c.workspaceOrDefault(ctx, rt, wsID)
				if err != nil {
					return err
				}
				created, err := rt.App.Commands.CreateUser.Handle(ctx, accounts.CreateUser{Email: email, Name: name, WorkspaceID: target, Role: role})
				if err != nil {
					return err
				}
				m, err := rt.Members.Find(ctx, target, created.User.ID())
				if err != nil {
					return fmt.Errorf("read membership: %w", err)
				}
				u := created.User
				return c.printJSON(map[string]any{
					"user":             map[string]string{"id": u.ID(), "email": u.Email(), "name": u.Name()},
					"membership_id":    m.ID(),
					"workspace_id":     m.WorkspaceID(),
					"role":             string(m.Role()),
					"set_password_url": created.SetPasswordURL,
					"expires_at":       domain.FormatTime(rt.Clock.Now().Add(accounts.SetPasswordValidity)),
				})
			})
		}}
	uf := c.flags(create.Flags(), "user-")
	uf.String(&email, "email", "", "the person's email address (required)")
	uf.String(&name, "name", "", "the person's name")
	uf.String(&wsID, "workspace", "", "workspace ID (default: the default workspace)")
	uf.String(&role, "role", "owner", "owner, admin, editor or viewer")
	bindPublicURL(c.flags(create.Flags(), ""), &c.cfg)
	c.flags(create.Flags(), "").String(&c.cfg.HTTPAddr, "http-addr", "127.0.0.1:8080", "listen address of serve; the public URL defaults to http://<http-addr>")

	var listWS string
	var asJSON bool
	list := &cobra.Command{Use: "list", Short: "List the members of a workspace", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withRuntime(cmd.Context(), func(rt *Runtime) error {
				target, err := c.workspaceOrDefault(cmd.Context(), rt, listWS)
				if err != nil {
					return err
				}
				if err := workspaceExists(cmd.Context(), rt, target); err != nil {
					return err
				}
				members, err := allMembers(cmd.Context(), rt.Members, target)
				if err != nil {
					return err
				}
				rows := make([]map[string]string, 0, len(members))
				for _, m := range members {
					rows = append(rows, map[string]string{"id": m.User.ID(), "email": m.User.Email(), "name": m.User.Name(),
						"role": string(m.Membership.Role()), "membership_id": m.Membership.ID(), "workspace_id": target,
						"created_at": domain.FormatTime(m.Membership.CreatedAt())})
				}
				if asJSON {
					return c.printJSON(rows)
				}
				tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tEMAIL\tNAME\tROLE\tSINCE")
				for _, r := range rows {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r["id"], r["email"], r["name"], r["role"], r["created_at"])
				}
				return tw.Flush()
			})
		}}
	lf := c.flags(list.Flags(), "users-list-")
	lf.String(&listWS, "workspace", "", "workspace ID (default: the default workspace)")
	lf.Bool(&asJSON, "json", false, "print JSON")
	users.AddCommand(create, list)
	return users
}

// workspaceExists refuses an unknown workspace ID, so that a typo does not read as "no members".
func workspaceExists(ctx context.Context, rt *Runtime, id string) error {
	all, err := rt.App.Queries.ListWorkspaces.Handle(ctx)
	if err != nil {
		return err
	}
	for _, w := range all {
		if w.ID() == id {
			return nil
		}
	}
	return fmt.Errorf("no workspace %s", id)
}

// allMembers reads every member of the workspace, oldest first, page by page.
func allMembers(ctx context.Context, repo ports.MembershipRepository, workspaceID string) ([]ports.Member, error) {
	const limit = 200
	var out []ports.Member
	page := ports.Page{Limit: limit}
	for {
		batch, err := repo.List(ctx, workspaceID, page)
		if err != nil {
			return nil, fmt.Errorf("list members: %w", err)
		}
		out = append(out, batch...)
		if len(batch) < limit {
			return out, nil
		}
		last := batch[len(batch)-1].Membership
		page.After = &ports.Position{CreatedAt: last.CreatedAt(), ID: last.ID()}
	}
}
