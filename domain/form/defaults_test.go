package form_test

import (
	"testing"

	"github.com/formward/formward/domain/form"
)

// The default spam rules must let a respondent without JavaScript answer: proof of work (solved
// by the page's script) stays off until the owner turns it on.
func TestDefaultSettingsWorkWithoutJavaScript(t *testing.T) {
	s := form.DefaultSettings()
	if s.Spam.ProofOfWork {
		t.Fatal("proof of work is on by default: respondents without JavaScript could not answer")
	}
	if !s.Spam.Honeypot || s.Spam.MinFillSeconds <= 0 {
		t.Fatalf("default spam rules = %+v, want the honeypot and a minimum fill time on", s.Spam)
	}
}
