package persistence

import (
	"gorm.io/gorm"

	"github.com/formward/formward/adapters/jsoncodec"
	"github.com/formward/formward/domain/audit"
)

type auditRow struct {
	ID          string  `gorm:"column:id;primaryKey"`
	WorkspaceID string  `gorm:"column:workspace_id"`
	Action      string  `gorm:"column:action"`
	ActorType   string  `gorm:"column:actor_type"`
	ActorID     string  `gorm:"column:actor_id"`
	ActorName   string  `gorm:"column:actor_name"`
	TargetType  *string `gorm:"column:target_type"`
	TargetID    *string `gorm:"column:target_id"`
	IPHash      *string `gorm:"column:ip_hash"`
	Details     string  `gorm:"column:details"`
	CreatedAt   int64   `gorm:"column:created_at"`
}

func (auditRow) TableName() string { return "audit_events" }

func auditFromDomain(e audit.Event) (auditRow, error) {
	details, err := jsoncodec.Marshal(e.Details)
	if err != nil {
		return auditRow{}, err
	}
	r := auditRow{ID: e.ID, WorkspaceID: e.WorkspaceID, Action: string(e.Action), ActorType: e.Actor.Type,
		ActorID: e.Actor.ID, ActorName: e.Actor.Name, Details: string(details), CreatedAt: toMillis(e.CreatedAt)}
	if e.Target != nil {
		r.TargetType, r.TargetID = &e.Target.Type, &e.Target.ID
	}
	if e.IPHash != "" {
		r.IPHash = &e.IPHash
	}
	return r, nil
}

func (r auditRow) toDomain() audit.Event {
	e := audit.Event{ID: r.ID, WorkspaceID: r.WorkspaceID, Action: audit.Action(r.Action),
		Actor: audit.Actor{Type: r.ActorType, ID: r.ActorID, Name: r.ActorName}, CreatedAt: fromMillis(r.CreatedAt)}
	if r.TargetType != nil && r.TargetID != nil {
		e.Target = &audit.Target{Type: *r.TargetType, ID: *r.TargetID}
	}
	if r.IPHash != nil {
		e.IPHash = *r.IPHash
	}
	_ = jsoncodec.Unmarshal([]byte(r.Details), &e.Details)
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	return e
}

// writeAudit inserts audit events inside the caller's transaction, so an event exists exactly
// when the change it records does.
func writeAudit(tx *gorm.DB, events []audit.Event) error {
	for _, e := range events {
		row, err := auditFromDomain(e)
		if err != nil {
			return err
		}
		if err := tx.Create(&row).Error; err != nil {
			return mapErr("write audit event", err)
		}
	}
	return nil
}
