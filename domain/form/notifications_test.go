package form_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/formward/formward/domain/form"
)

func notifying(n form.Notifications) *form.Settings {
	s := form.DefaultSettings()
	s.Notifications = n
	return &s
}

func TestNotificationSettings(t *testing.T) {
	many := make([]string, form.MaxOwnerRecipients+1)
	for i := range many {
		many[i] = fmt.Sprintf("o%d@example.com", i)
	}
	respondent := func(fieldID string) form.RespondentNotification {
		return form.RespondentNotification{Enabled: true, EmailFieldID: fieldID, Subject: "Thanks", Body: "Hi {{fld_1}}"}
	}
	tests := []struct {
		name  string
		n     form.Notifications
		field string // expected violation path, "" for none
		code  string
	}{
		{"off", form.Notifications{}, "", ""},
		{"owner one address", form.Notifications{Owner: form.OwnerNotification{Enabled: true, To: []string{"a@example.com"}}}, "", ""},
		{"owner twenty addresses", form.Notifications{Owner: form.OwnerNotification{Enabled: true, To: many[:20]}}, "", ""},
		{"owner enabled without address", form.Notifications{Owner: form.OwnerNotification{Enabled: true}}, "settings.notifications.owner.to", "required"},
		{"owner 21 addresses", form.Notifications{Owner: form.OwnerNotification{Enabled: true, To: many}}, "settings.notifications.owner.to", "too_many"},
		{"owner bad address", form.Notifications{Owner: form.OwnerNotification{Enabled: true, To: []string{"a@example.com", "nope"}}}, "settings.notifications.owner.to[1]", "invalid_email"},
		{"owner two addresses in one", form.Notifications{Owner: form.OwnerNotification{Enabled: true, To: []string{"a@x.org, b@x.org"}}}, "settings.notifications.owner.to[0]", "invalid_email"},
		{"owner control character", form.Notifications{Owner: form.OwnerNotification{Enabled: true, To: []string{"a@x.org\x00"}}}, "settings.notifications.owner.to[0]", ""},
		{"owner disabled keeps a bad address out", form.Notifications{Owner: form.OwnerNotification{To: []string{"nope"}}}, "settings.notifications.owner.to[0]", "invalid_email"},
		{"respondent on email field", form.Notifications{Respondent: respondent("fld_1")}, "", ""},
		{"respondent on text field", form.Notifications{Respondent: respondent("fld_2")}, "settings.notifications.respondent.email_field_id", "invalid_value"},
		{"respondent on unknown field", form.Notifications{Respondent: respondent("fld_9")}, "settings.notifications.respondent.email_field_id", "invalid_value"},
		{"respondent without field", form.Notifications{Respondent: respondent("")}, "settings.notifications.respondent.email_field_id", "required"},
		{"respondent without body", form.Notifications{Respondent: form.RespondentNotification{Enabled: true, EmailFieldID: "fld_1"}}, "settings.notifications.respondent.body", "required"},
		{"respondent body too long", form.Notifications{Respondent: form.RespondentNotification{Enabled: true, EmailFieldID: "fld_1", Body: strings.Repeat("x", 20001)}}, "settings.notifications.respondent.body", "too_long"},
		{"respondent subject too long", form.Notifications{Respondent: form.RespondentNotification{Enabled: true, EmailFieldID: "fld_1", Body: "x", Subject: strings.Repeat("x", 501)}}, "settings.notifications.respondent.subject", "too_long"},
	}
	fields := []form.FieldSpec{{Label: "Email", Type: "email"}, {Label: "Name", Type: "text"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, _ := seqIDs()
			f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "F", Fields: fields, Settings: notifying(tt.n)}, ids, form.DefaultLimits, t0)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if got := f.Settings().Notifications; got.Owner.Enabled != tt.n.Owner.Enabled || got.Respondent != tt.n.Respondent {
					t.Fatalf("stored %+v, want %+v", got, tt.n)
				}
				return
			}
			vs := violations(t, err)
			if !hasViolation(vs, tt.field, tt.code) {
				t.Fatalf("violations %v, want %s %s", vs, tt.field, tt.code)
			}
		})
	}
}

func TestOwnerAddressesAreStoredBare(t *testing.T) {
	ids, _ := seqIDs()
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "F", Settings: notifying(form.Notifications{
		Owner: form.OwnerNotification{Enabled: true, To: []string{"Ada <ada@example.com>", " bob@example.com "}}})}, ids, form.DefaultLimits, t0)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if got := f.Settings().Notifications.Owner.To; len(got) != 2 || got[0] != "ada@example.com" || got[1] != "bob@example.com" {
		t.Fatalf("to = %q", got)
	}
}

// Removing (or retyping) the confirmation's email field is refused while the confirmation
// points to it, so a stored form never names a missing field.
func TestPatchFieldsKeepsTheConfirmationField(t *testing.T) {
	ids, _ := seqIDs()
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: "F", Fields: []form.FieldSpec{{Label: "Email", Type: "email"}},
		Settings: notifying(form.Notifications{Respondent: form.RespondentNotification{Enabled: true, EmailFieldID: "fld_1", Body: "Thanks"}})},
		ids, form.DefaultLimits, t0)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	_, err = f.Apply(form.Patch{Fields: &[]form.FieldSpec{{ID: "fld_1", Label: "Email", Type: "text"}}}, ids, form.DefaultLimits, t1)
	if vs := violations(t, err); !hasViolation(vs, "settings.notifications.respondent.email_field_id", "invalid_value") {
		t.Fatalf("violations %v", vs)
	}
	if f.Fields()[0].Type != form.TypeEmail {
		t.Fatal("a refused patch changed the form")
	}
	off := form.DefaultSettings()
	if _, err := f.Apply(form.Patch{Settings: &off, Fields: &[]form.FieldSpec{{ID: "fld_1", Label: "Email", Type: "text"}}}, ids, form.DefaultLimits, t1); err != nil {
		t.Fatalf("Apply with the confirmation off: %v", err)
	}
}
