package form

import (
	"fmt"
	netmail "net/mail"
	"strings"
	"unicode/utf8"

	"github.com/formward/formward/domain"
	"github.com/formward/formward/domain/text"
)

// Notifications are the emails a form sends on each response without a workflow: one to its
// owners and a confirmation to the respondent. Both are sent as runs of the run engine, with
// the workflow retry rules.
type Notifications struct {
	Owner      OwnerNotification
	Respondent RespondentNotification
}

// OwnerNotification emails every response to the owners, reply-to set to the respondent.
type OwnerNotification struct {
	Enabled bool
	// To are the owners' addresses (1 to 20 when enabled).
	To []string
}

// RespondentNotification confirms a response to the address given in an email field.
type RespondentNotification struct {
	Enabled bool
	// EmailFieldID is the form's email field whose answer receives the confirmation.
	EmailFieldID string
	// Subject and Body are templates ({{field_id}}, {{submission_id}}, {{form_name}}, …).
	Subject string
	Body    string
}

// Limits of the notification settings.
const (
	MaxOwnerRecipients     = 20
	maxNotificationSubject = 500
	maxNotificationBody    = 20000
	maxNotificationAddress = 254
	ownerNotificationPath  = "settings.notifications.owner"
	respondentNotifyPath   = "settings.notifications.respondent"
)

// DefaultRespondentSubject is the confirmation's subject when the owner sets none.
const DefaultRespondentSubject = "Thank you for your response to {{form_name}}"

// checkNotifications validates what needs no fields and returns the settings in canonical form
// (addresses trimmed to their bare form).
func checkNotifications(vs *domain.Violations, n Notifications) Notifications {
	o := n.Owner
	if o.To != nil || o.Enabled {
		switch {
		case o.Enabled && len(o.To) == 0:
			vs.Add(ownerNotificationPath+".to", "required", "to needs at least one address when the owner notification is enabled")
		case len(o.To) > MaxOwnerRecipients:
			vs.Add(ownerNotificationPath+".to", "too_many", fmt.Sprintf("to takes at most %d addresses", MaxOwnerRecipients))
		}
		if len(o.To) <= MaxOwnerRecipients {
			out := make([]string, len(o.To))
			for i, a := range o.To {
				path := fmt.Sprintf("%s.to[%d]", ownerNotificationPath, i)
				out[i] = a
				if !text.Field(vs, path, a) {
					continue
				}
				bare, ok := ParseEmailAddress(a)
				if !ok {
					vs.Add(path, "invalid_email", "must be one email address such as owner@example.com")
					continue
				}
				out[i] = bare
			}
			o.To = out
		}
	}
	r := n.Respondent
	if r.Enabled && strings.TrimSpace(r.EmailFieldID) == "" {
		vs.Add(respondentNotifyPath+".email_field_id", "required", "email_field_id is required when the confirmation is enabled")
	}
	if text.Field(vs, respondentNotifyPath+".subject", r.Subject) && utf8.RuneCountInString(r.Subject) > maxNotificationSubject {
		vs.Add(respondentNotifyPath+".subject", "too_long", fmt.Sprintf("subject must be at most %d characters", maxNotificationSubject))
	}
	if r.Enabled && strings.TrimSpace(r.Body) == "" {
		vs.Add(respondentNotifyPath+".body", "required", "body is required when the confirmation is enabled")
	}
	if text.Field(vs, respondentNotifyPath+".body", r.Body) && utf8.RuneCountInString(r.Body) > maxNotificationBody {
		vs.Add(respondentNotifyPath+".body", "too_long", fmt.Sprintf("body must be at most %d characters", maxNotificationBody))
	}
	return Notifications{Owner: o, Respondent: r}
}

// checkNotificationFields checks the rules that depend on the form's fields: the confirmation's
// email_field_id must name an email field of the form.
func checkNotificationFields(n Notifications, fields []Field) domain.Violations {
	r := n.Respondent
	if r.EmailFieldID == "" {
		return nil
	}
	for _, f := range fields {
		if f.ID == r.EmailFieldID {
			if f.Type == TypeEmail {
				return nil
			}
			break
		}
	}
	var vs domain.Violations
	vs.Add(respondentNotifyPath+".email_field_id", "invalid_value", "email_field_id must be the ID of an email field of this form")
	return vs
}

// ParseEmailAddress accepts exactly one address ("a@b.c" or "Name <a@b.c>") of at most 254
// characters and returns it bare.
func ParseEmailAddress(s string) (string, bool) {
	if len(s) > maxNotificationAddress*2 {
		return "", false
	}
	list, err := netmail.ParseAddressList(s)
	if err != nil || len(list) != 1 || len(list[0].Address) > maxNotificationAddress {
		return "", false
	}
	return list[0].Address, true
}

// Enabled reports whether any notification is on.
func (n Notifications) Enabled() bool { return n.Owner.Enabled || n.Respondent.Enabled }

// SubjectTemplate returns the confirmation's subject template (the default when none is set).
func (r RespondentNotification) SubjectTemplate() string {
	if strings.TrimSpace(r.Subject) == "" {
		return DefaultRespondentSubject
	}
	return r.Subject
}
