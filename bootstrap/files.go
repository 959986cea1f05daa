package bootstrap

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
)

// filesCommand is `formward files encrypt`: encrypt the files stored before uploads were
// encrypted at rest, and delete their plaintext. serve does the same in the background at
// every start; the command runs it in the foreground and prints what it did.
func (c *cli) filesCommand() *cobra.Command {
	files := &cobra.Command{Use: "files", Short: "Manage uploaded files"}
	encrypt := &cobra.Command{Use: "encrypt", Short: "Encrypt files stored in plaintext by an older version, then delete the plaintext (idempotent, safe while serving)",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withRuntime(cmd.Context(), func(rt *Runtime) error {
				m, err := rt.FileEncryption.EncryptPlaintext(cmd.Context(), rt.Clock.Now())
				if err != nil {
					return err
				}
				return c.printJSON(m)
			})
		}}
	files.AddCommand(encrypt)
	return files
}

// encryptPlaintextFiles runs the migration of plaintext files in the background of serve; a
// failure is logged and retried at the next start (or with `formward files encrypt`).
func encryptPlaintextFiles(ctx context.Context, rt *Runtime) {
	if rt.FileEncryption == nil {
		return
	}
	m, err := rt.FileEncryption.EncryptPlaintext(ctx, rt.Clock.Now())
	switch {
	case errors.Is(err, context.Canceled):
	case err != nil:
		rt.Log.Error("encrypting plaintext files stopped; run `formward files encrypt`", zap.Error(err),
			zap.Int("files_encrypted", m.Encrypted))
	case m.Encrypted+m.Removed+m.TempRemoved > 0:
		rt.Log.Info("encrypted the files stored in plaintext", zap.Int("files_encrypted", m.Encrypted),
			zap.Int("plaintext_removed", m.Removed), zap.Int("temporary_files_removed", m.TempRemoved))
	}
}
