package persistence

import (
	"encoding/json"
	"fmt"
	"github.com/formward/formward/domain/audit"
	"time"
	"unicode/utf8"

	"github.com/formward/formward/domain/apikey"
	"github.com/formward/formward/domain/form"
	"github.com/formward/formward/domain/submission"
	"github.com/formward/formward/domain/webhook"
	"github.com/formward/formward/domain/workspace"
	"github.com/formward/formward/ports"
)

// Times are stored as unix milliseconds UTC on both dialects, the precision of the API.
func toMillis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func toMillisPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	ms := toMillis(*t)
	return &ms
}

func fromMillisPtr(ms *int64) *time.Time {
	if ms == nil {
		return nil
	}
	t := fromMillis(*ms)
	return &t
}

// Additional authenticated data binds each sealed value to its table and row, so a ciphertext
// copied to another row does not open.
func submissionAAD(id string) []byte { return []byte("submissions/" + id) }

func outboxAAD(eventID string) []byte { return []byte("outbox/" + eventID) }

func idempotencyAAD(scope, key string) []byte { return []byte("idempotency_keys/" + scope + "/" + key) }

type workspaceRow struct {
	ID             string `gorm:"column:id;primaryKey"`
	Name           string `gorm:"column:name"`
	Plan           string `gorm:"column:plan"`
	BillingEmail   string `gorm:"column:billing_email"`
	Status         string `gorm:"column:status"`
	CancelledAt    *int64 `gorm:"column:cancelled_at"`
	DataDeletionAt *int64 `gorm:"column:data_deletion_at"`
	RetainedPlan   string `gorm:"column:retained_plan"`
	CreatedAt      int64  `gorm:"column:created_at"`
	UpdatedAt      int64  `gorm:"column:updated_at"`
}

func (workspaceRow) TableName() string { return "workspaces" }

func workspaceFromDomain(w *workspace.Workspace) workspaceRow {
	r := w.Record()
	return workspaceRow{ID: r.ID, Name: r.Name, Plan: string(r.Plan), BillingEmail: r.BillingEmail, Status: string(r.Status),
		CancelledAt: toMillisPtr(r.CancelledAt), DataDeletionAt: toMillisPtr(r.DataDeletionAt), RetainedPlan: string(r.RetainedPlan),
		CreatedAt: toMillis(r.CreatedAt), UpdatedAt: toMillis(r.UpdatedAt)}
}

func (r workspaceRow) toDomain() *workspace.Workspace {
	return workspace.UnmarshalFromDatabase(workspace.Record{ID: r.ID, Name: r.Name, Plan: workspace.Plan(r.Plan),
		BillingEmail: r.BillingEmail, Status: workspace.Status(r.Status), CancelledAt: fromMillisPtr(r.CancelledAt),
		DataDeletionAt: fromMillisPtr(r.DataDeletionAt), RetainedPlan: workspace.Plan(r.RetainedPlan),
		CreatedAt: fromMillis(r.CreatedAt), UpdatedAt: fromMillis(r.UpdatedAt)})
}

type apiKeyRow struct {
	ID            string `gorm:"column:id;primaryKey"`
	WorkspaceID   string `gorm:"column:workspace_id"`
	Name          string `gorm:"column:name"`
	Scope         string `gorm:"column:scope"`
	SecretHash    []byte `gorm:"column:secret_hash"`
	CreatedByType string `gorm:"column:created_by_type"`
	CreatedByID   string `gorm:"column:created_by_id"`
	CreatedByName string `gorm:"column:created_by_name"`
	CreatedAt     int64  `gorm:"column:created_at"`
	LastUsedAt    *int64 `gorm:"column:last_used_at"`
	RevokedAt     *int64 `gorm:"column:revoked_at"`
}

func (apiKeyRow) TableName() string { return "api_keys" }

func apiKeyFromDomain(k *apikey.Key) apiKeyRow {
	by := k.CreatedBy()
	if by.Type == "" {
		by = audit.System
	}
	return apiKeyRow{ID: k.ID(), WorkspaceID: k.WorkspaceID(), Name: k.Name(), Scope: string(k.Scope()),
		SecretHash: k.SecretHash(), CreatedByType: by.Type, CreatedByID: by.ID, CreatedByName: by.Name,
		CreatedAt: toMillis(k.CreatedAt()), LastUsedAt: toMillisPtr(k.LastUsedAt()), RevokedAt: toMillisPtr(k.RevokedAt())}
}

func (r apiKeyRow) toDomain() *apikey.Key {
	return apikey.UnmarshalFromDatabase(r.ID, r.WorkspaceID, r.Name, apikey.Scope(r.Scope), r.SecretHash,
		audit.Actor{Type: r.CreatedByType, ID: r.CreatedByID, Name: r.CreatedByName},
		fromMillis(r.CreatedAt), fromMillisPtr(r.LastUsedAt), fromMillisPtr(r.RevokedAt))
}

type dataKeyRow struct {
	ID          string `gorm:"column:id;primaryKey"`
	WorkspaceID string `gorm:"column:workspace_id"`
	MasterKeyID string `gorm:"column:master_key_id"`
	Wrapped     []byte `gorm:"column:wrapped"`
	CreatedAt   int64  `gorm:"column:created_at"`
}

func (dataKeyRow) TableName() string { return "data_keys" }

func dataKeyFromPort(k ports.WrappedKey) dataKeyRow {
	return dataKeyRow{ID: k.ID, WorkspaceID: k.WorkspaceID, MasterKeyID: k.MasterKeyID, Wrapped: k.Wrapped, CreatedAt: toMillis(k.CreatedAt)}
}

func (r dataKeyRow) toPort() ports.WrappedKey {
	return ports.WrappedKey{ID: r.ID, WorkspaceID: r.WorkspaceID, MasterKeyID: r.MasterKeyID, Wrapped: r.Wrapped, CreatedAt: fromMillis(r.CreatedAt)}
}

type formRow struct {
	ID          string  `gorm:"column:id;primaryKey"`
	WorkspaceID string  `gorm:"column:workspace_id"`
	Name        string  `gorm:"column:name"`
	Description *string `gorm:"column:description"`
	Status      string  `gorm:"column:status"`
	Fields      string  `gorm:"column:fields"`
	Settings    string  `gorm:"column:settings"`
	CreatedAt   int64   `gorm:"column:created_at"`
	UpdatedAt   int64   `gorm:"column:updated_at"`
}

func (formRow) TableName() string { return "forms" }

// fieldJSON is a field's stored shape. Form definitions are not secret and stay readable.
type fieldJSON struct {
	ID          string      `json:"id"`
	Label       string      `json:"label"`
	Type        string      `json:"type"`
	Required    bool        `json:"required,omitempty"`
	Options     []string    `json:"options,omitempty"`
	Placeholder *string     `json:"placeholder,omitempty"`
	Accept      []string    `json:"accept,omitempty"`
	MaxFileSize int64       `json:"max_file_size,omitempty"`
	Key         string      `json:"key,omitempty"`
	Hidden      bool        `json:"hidden,omitempty"`
	Page        int         `json:"page,omitempty"`
	ShowIf      *showIfJSON `json:"show_if,omitempty"`
}

// showIfJSON is a field's stored display rule.
type showIfJSON struct {
	Any        bool                 `json:"any,omitempty"`
	Conditions []fieldConditionJSON `json:"conditions"`
}

type fieldConditionJSON struct {
	FieldID  string `json:"field_id"`
	Operator string `json:"operator"`
	Value    string `json:"value"`
	Kind     string `json:"kind"`
}

func showIfToJSON(r *form.ShowIf) *showIfJSON {
	if r == nil {
		return nil
	}
	out := &showIfJSON{Any: r.Any, Conditions: make([]fieldConditionJSON, len(r.Conditions))}
	for i, c := range r.Conditions {
		out.Conditions[i] = fieldConditionJSON(c)
	}
	return out
}

func showIfFromJSON(r *showIfJSON) *form.ShowIf {
	if r == nil {
		return nil
	}
	out := &form.ShowIf{Any: r.Any, Conditions: make([]form.Condition, len(r.Conditions))}
	for i, c := range r.Conditions {
		out.Conditions[i] = form.Condition(c)
	}
	return out
}

func formFromDomain(f *form.Form) (formRow, error) {
	fields := f.Fields()
	out := make([]fieldJSON, len(fields))
	for i, fl := range fields {
		out[i] = fieldJSON{ID: fl.ID, Label: fl.Label, Type: string(fl.Type), Required: fl.Required, Options: fl.Options, Placeholder: fl.Placeholder,
			Accept: fl.Accept, MaxFileSize: fl.MaxFileBytes, Key: fl.Key, Hidden: fl.Hidden, Page: fl.Page, ShowIf: showIfToJSON(fl.ShowIf)}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return formRow{}, fmt.Errorf("encode form fields: %w", err)
	}
	return formRow{ID: f.ID(), WorkspaceID: f.WorkspaceID(), Name: f.Name(), Description: f.Description(),
		Status: string(f.Status()), Fields: string(b), CreatedAt: toMillis(f.CreatedAt()), UpdatedAt: toMillis(f.UpdatedAt())}, nil
}

func (r formRow) toDomain() (*form.Form, error) {
	fields, err := decodeFields(r.ID, r.Fields)
	if err != nil {
		return nil, err
	}
	return form.UnmarshalFromDatabase(r.ID, r.WorkspaceID, r.Name, r.Description, form.Status(r.Status), fields,
		fromMillis(r.CreatedAt), fromMillis(r.UpdatedAt)), nil
}

type submissionRow struct {
	ID          string `gorm:"column:id;primaryKey"`
	WorkspaceID string `gorm:"column:workspace_id"`
	FormID      string `gorm:"column:form_id"`
	SubmittedAt int64  `gorm:"column:submitted_at"`
	UpdatedAt   int64  `gorm:"column:updated_at"`
	Sealed      []byte `gorm:"column:sealed"`
}

func (submissionRow) TableName() string { return "submissions" }

// sealedSubmission is the plaintext inside submissions.sealed: everything the respondent sent
// and how it arrived.
type sealedSubmission struct {
	Data     map[string]json.RawMessage `json:"data"`
	Metadata sealedMetadata             `json:"metadata"`
}

type sealedMetadata struct {
	IPHash    *string           `json:"ip_hash,omitempty"`
	UserAgent *string           `json:"user_agent,omitempty"`
	Referrer  *string           `json:"referrer,omitempty"`
	Source    string            `json:"source"`
	UTM       map[string]string `json:"utm,omitempty"`
	ReplyTo   *string           `json:"reply_to,omitempty"`
	Subject   *string           `json:"subject,omitempty"`
}

func encodeSubmission(s *submission.Submission) ([]byte, error) {
	data := s.Data()
	out := sealedSubmission{Data: make(map[string]json.RawMessage, len(data))}
	for k, v := range data {
		var (
			b   []byte
			err error
		)
		if v.IsList() {
			b, err = json.Marshal(v.Strings())
		} else {
			b, err = json.Marshal(v.String())
		}
		if err != nil {
			return nil, fmt.Errorf("encode submission: %w", err)
		}
		out.Data[k] = b
	}
	m := s.Metadata()
	out.Metadata = sealedMetadata{IPHash: m.IPHash, UserAgent: m.UserAgent, Referrer: m.Referrer, Source: string(m.Source), UTM: m.UTM, ReplyTo: m.ReplyTo, Subject: m.Subject}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode submission: %w", err)
	}
	return b, nil
}

// plainJSONString reads a JSON string without escapes (most answers) without the decoder's
// reflection: exports read every stored answer of a form.
func plainJSONString(raw json.RawMessage) (string, bool) {
	n := len(raw)
	if n < 2 || raw[0] != '"' || raw[n-1] != '"' {
		return "", false
	}
	for _, b := range raw[1 : n-1] {
		if b == '\\' || b == '"' || b < 0x20 {
			return "", false
		}
	}
	if !utf8.Valid(raw[1 : n-1]) {
		return "", false
	}
	return string(raw[1 : n-1]), true
}

func decodeSubmission(r submissionRow, plaintext []byte) (*submission.Submission, error) {
	data, meta, ok := decodeSealedFast(plaintext)
	if !ok {
		var err error
		if data, meta, err = decodeSealedJSON(plaintext); err != nil {
			return nil, fmt.Errorf("decode submission %s: %w", r.ID, err)
		}
	}
	return submission.UnmarshalFromDatabase(r.ID, r.WorkspaceID, r.FormID, data, meta, fromMillis(r.SubmittedAt), fromMillis(r.UpdatedAt)), nil
}

// decodeSealedJSON is decodeSealedFast through encoding/json: any text it takes.
func decodeSealedJSON(plaintext []byte) (map[string]submission.Value, submission.Metadata, error) {
	var in sealedSubmission
	if err := json.Unmarshal(plaintext, &in); err != nil {
		return nil, submission.Metadata{}, err
	}
	data := make(map[string]submission.Value, len(in.Data))
	for k, raw := range in.Data {
		if len(raw) > 0 && raw[0] == '[' {
			var list []string
			if err := json.Unmarshal(raw, &list); err != nil {
				return nil, submission.Metadata{}, err
			}
			data[k] = submission.List(list)
			continue
		}
		if one, ok := plainJSONString(raw); ok {
			data[k] = submission.Single(one)
			continue
		}
		var one string
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, submission.Metadata{}, err
		}
		data[k] = submission.Single(one)
	}
	m := in.Metadata
	return data, submission.Metadata{IPHash: m.IPHash, UserAgent: m.UserAgent, Referrer: m.Referrer, Source: submission.Source(m.Source), UTM: m.UTM,
		ReplyTo: m.ReplyTo, Subject: m.Subject}, nil
}

type outboxRow struct {
	Seq         int64  `gorm:"column:seq;primaryKey"`
	ID          string `gorm:"column:id"`
	Type        string `gorm:"column:type"`
	WorkspaceID string `gorm:"column:workspace_id"`
	FormID      string `gorm:"column:form_id"`
	Payload     []byte `gorm:"column:payload"`
	CreatedAt   int64  `gorm:"column:created_at"`
	PublishedAt *int64 `gorm:"column:published_at"`

	TraceParent *string `gorm:"column:traceparent"` // W3C trace context, NULL when not traced
}

func (outboxRow) TableName() string { return "outbox" }

type idempotencyRow struct {
	WorkspaceID string `gorm:"column:workspace_id;primaryKey"`
	Scope       string `gorm:"column:scope;primaryKey"`
	Key         string `gorm:"column:key;primaryKey"`
	Fingerprint []byte `gorm:"column:fingerprint"`
	Status      *int   `gorm:"column:status"`
	Body        []byte `gorm:"column:body"`
	CreatedAt   int64  `gorm:"column:created_at"`
	// SubmissionID names the submission the request created; with Status NULL, that its
	// response was deleted with the submission.
	SubmissionID *string `gorm:"column:submission_id"`
}

func (idempotencyRow) TableName() string { return "idempotency_keys" }

// floorMillis and ceilMillis turn an exclusive bound of any precision into the equivalent
// bound on stored milliseconds.
func floorMillis(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.Before(time.UnixMilli(ms)) {
		ms-- // UnixMilli truncates toward zero before 1970
	}
	return ms
}

func ceilMillis(t time.Time) int64 {
	ms := floorMillis(t)
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return ms
}

func decodeFields(formID, raw string) ([]form.Field, error) {
	var stored []fieldJSON
	if err := json.Unmarshal([]byte(raw), &stored); err != nil {
		return nil, fmt.Errorf("decode fields of form %s: %w", formID, err)
	}
	fields := make([]form.Field, len(stored))
	for i, s := range stored {
		fields[i] = form.Field{ID: s.ID, Label: s.Label, Type: form.FieldType(s.Type), Required: s.Required, Options: s.Options, Placeholder: s.Placeholder,
			Accept: s.Accept, MaxFileBytes: s.MaxFileSize, Key: s.Key, Hidden: s.Hidden, Page: s.Page, ShowIf: showIfFromJSON(s.ShowIf)}
	}
	return fields, nil
}

func webhookAAD(id string) []byte { return []byte("webhooks/" + id) }

func deliveryAAD(id string) []byte { return []byte("deliveries/" + id) }

type webhookRow struct {
	ID          string  `gorm:"column:id;primaryKey"`
	WorkspaceID string  `gorm:"column:workspace_id"`
	URL         string  `gorm:"column:url"`
	Events      string  `gorm:"column:events"`
	FormID      *string `gorm:"column:form_id"`
	Secret      []byte  `gorm:"column:secret"` // sealed; nil when no secret is set
	Enabled     int     `gorm:"column:enabled"`
	EnabledAt   int64   `gorm:"column:enabled_since"` // 0: never switched off
	CreatedAt   int64   `gorm:"column:created_at"`
	UpdatedAt   int64   `gorm:"column:updated_at"`
}

func (webhookRow) TableName() string { return "webhooks" }

type deliveryRow struct {
	ID            string `gorm:"column:id;primaryKey"`
	WorkspaceID   string `gorm:"column:workspace_id"`
	WebhookID     string `gorm:"column:webhook_id"`
	EventID       string `gorm:"column:event_id"`
	EventType     string `gorm:"column:event_type"`
	FormID        string `gorm:"column:form_id"`
	Body          []byte `gorm:"column:body"` // sealed
	Status        string `gorm:"column:status"`
	Cycle         int    `gorm:"column:cycle"`
	Attempts      string `gorm:"column:attempts"`
	NextAttemptAt *int64 `gorm:"column:next_attempt_at"`
	CreatedAt     int64  `gorm:"column:created_at"`
	UpdatedAt     int64  `gorm:"column:updated_at"`

	TraceParent *string `gorm:"column:traceparent"` // W3C trace context, NULL when not traced
}

func (deliveryRow) TableName() string { return "deliveries" }

// attemptJSON is an attempt's stored shape: status codes, durations and error strings only.
type attemptJSON struct {
	Number     int     `json:"n"`
	At         int64   `json:"at"`
	StatusCode *int    `json:"status_code,omitempty"`
	DurationMS int64   `json:"duration_ms"`
	Error      *string `json:"error,omitempty"`
}

func encodeAttempts(as []webhook.Attempt) (string, error) {
	out := make([]attemptJSON, len(as))
	for i, a := range as {
		out[i] = attemptJSON{Number: a.Number, At: toMillis(a.At), StatusCode: a.StatusCode, DurationMS: a.Duration.Milliseconds(), Error: a.Error}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encode attempts: %w", err)
	}
	return string(b), nil
}

func decodeAttempts(id, raw string) ([]webhook.Attempt, error) {
	var in []attemptJSON
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return nil, fmt.Errorf("decode attempts of delivery %s: %w", id, err)
	}
	out := make([]webhook.Attempt, len(in))
	for i, a := range in {
		out[i] = webhook.Attempt{Number: a.Number, At: fromMillis(a.At), StatusCode: a.StatusCode, Duration: time.Duration(a.DurationMS) * time.Millisecond, Error: a.Error}
	}
	return out, nil
}
