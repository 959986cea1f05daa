package persistence

import "github.com/formward/formward/domain/form"

// notificationsJSON is the stored shape of a form's notification settings (configuration, in
// clear like the rest of the form definition); absent when every notification is unset.
type notificationsJSON struct {
	OwnerEnabled      bool     `json:"owner_enabled,omitempty"`
	OwnerTo           []string `json:"owner_to,omitempty"`
	RespondentEnabled bool     `json:"respondent_enabled,omitempty"`
	RespondentFieldID string   `json:"respondent_email_field_id,omitempty"`
	RespondentSubject string   `json:"respondent_subject,omitempty"`
	RespondentBody    string   `json:"respondent_body,omitempty"`
}

func encodeNotifications(n form.Notifications) *notificationsJSON {
	out := notificationsJSON{OwnerEnabled: n.Owner.Enabled, OwnerTo: n.Owner.To, RespondentEnabled: n.Respondent.Enabled,
		RespondentFieldID: n.Respondent.EmailFieldID, RespondentSubject: n.Respondent.Subject, RespondentBody: n.Respondent.Body}
	if !out.OwnerEnabled && len(out.OwnerTo) == 0 && !out.RespondentEnabled && out.RespondentFieldID == "" && out.RespondentSubject == "" && out.RespondentBody == "" {
		return nil
	}
	return &out
}

func decodeNotifications(in *notificationsJSON) form.Notifications {
	if in == nil {
		return form.Notifications{}
	}
	return form.Notifications{
		Owner: form.OwnerNotification{Enabled: in.OwnerEnabled, To: in.OwnerTo},
		Respondent: form.RespondentNotification{Enabled: in.RespondentEnabled, EmailFieldID: in.RespondentFieldID,
			Subject: in.RespondentSubject, Body: in.RespondentBody},
	}
}
