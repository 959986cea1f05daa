package dashboard

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	workspaceapp "github.com/formward/formward/application/workspace"
	"github.com/formward/formward/domain/access"
	"github.com/formward/formward/domain/workspace"
)

// Billing: the plan, the usage against its limits, the billing email, cancellation.

// mountBilling adds the billing page to the workspace routes.
func (h *Handler) mountBilling(w *gin.RouterGroup) {
	w.GET("/settings/billing", h.billing)
	w.POST("/settings/billing", h.updateBilling)
	w.GET("/settings/billing/cancel", h.cancelConfirm)
	w.POST("/settings/billing/cancel", h.cancel)
	w.POST("/settings/billing/reactivate", h.reactivate)
}

type usageStat struct {
	Label, Value, Limit string
	Limited             bool
	Percent, Width      int
}

type billingData struct {
	Plan, PlanLabel, Status, Retention, StorageLimit string
	Cancelled                                        bool
	DeletionAt                                       *time.Time
	Plans                                            []selectOption
	Usage                                            []usageStat
	// TimeZone is the workspace's zone, shown to members who chose none; Zones the choices.
	TimeZone string
	Zones    []selectOption
}

var planLabels = map[workspace.Plan]string{workspace.PlanFree: "Free", workspace.PlanStarter: "Starter", workspace.PlanGrowth: "Growth", workspace.PlanBusiness: "Business"}

func (h *Handler) billingData(c *gin.Context) (billingData, map[string]string, error) {
	wv, err := h.app.Queries.GetWorkspace.Handle(c.Request.Context(), workspaceapp.GetWorkspace{})
	if err != nil {
		return billingData{}, nil, err
	}
	w, u := wv.Workspace, wv.Usage
	d := billingData{Plan: string(w.Plan()), PlanLabel: planLabels[w.Plan()], Status: string(w.Status()),
		Cancelled: w.Status() == workspace.StatusCancelled, DeletionAt: w.DataDeletionAt(),
		TimeZone: w.TimeZone(), Zones: h.zoneOptions(w.TimeZone())}
	for _, p := range []workspace.Plan{workspace.PlanFree, workspace.PlanStarter, workspace.PlanGrowth, workspace.PlanBusiness} {
		d.Plans = append(d.Plans, selectOption{Value: string(p), Label: planLabels[p] + " — " + retentionText(p) + ", " + storageText(p) + " files per form", Selected: p == w.Plan()})
	}
	d.Retention = retentionText(w.Plan())
	d.StorageLimit = storageText(w.Plan())
	d.Usage = []usageStat{
		{Label: "Forms", Value: count(u.Forms), Limit: "No limit on this plan"},
		submissionsUsage(w.Plan(), u),
		storageUsage(w.Plan(), u.StorageBytes),
		{Label: "Members", Value: count(u.Members), Limit: "No limit on this plan"},
	}
	return d, map[string]string{"billing_email": w.BillingEmail()}, nil
}

func retentionText(p workspace.Plan) string {
	r := p.Retention()
	switch {
	case r.Keep > 0:
		return fmt.Sprintf("keeps the %d most recent submissions of each form", r.Keep)
	case r.MaxAge > 0:
		return fmt.Sprintf("keeps submissions %d months", int(r.MaxAge.Hours()/24/365*12+0.5))
	}
	return "keeps every submission"
}

func storageText(p workspace.Plan) string {
	limit, ok := workspace.StorageLimit(p)
	if !ok {
		return "unlimited"
	}
	return bytesText(limit)
}

func submissionsUsage(p workspace.Plan, u workspace.Usage) usageStat {
	s := usageStat{Label: "Submissions", Value: count(u.Submissions), Limit: "Kept: " + retentionText(p)}
	if keep := p.Retention().Keep; keep > 0 && u.Forms > 0 {
		return meter(s, u.Submissions, int64(keep)*u.Forms, fmt.Sprintf("%d (%d per form × %d forms)", int64(keep)*u.Forms, keep, u.Forms))
	}
	return s
}

func storageUsage(p workspace.Plan, used int64) usageStat {
	s := usageStat{Label: "File storage (all forms)", Value: bytesText(used), Limit: "No storage limit on this plan"}
	if limit, ok := workspace.StorageLimit(p); ok {
		return meter(s, used, limit, bytesText(limit)+" per form")
	}
	return s
}

func meter(s usageStat, used, limit int64, limitText string) usageStat {
	s.Limited, s.Limit = true, limitText
	if limit > 0 {
		s.Percent = int(used * 100 / limit)
	}
	s.Width = min(s.Percent, 100)
	return s
}

func count(n int64) string {
	str := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range str {
		if i > 0 && (len(str)-i)%3 == 0 {
			b.WriteRune(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return trimZero(float64(n)/(1<<30)) + " GB"
	case n >= 1<<20:
		return trimZero(float64(n)/(1<<20)) + " MB"
	case n >= 1<<10:
		return trimZero(float64(n)/(1<<10)) + " KB"
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimZero(f float64) string {
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", f), "0"), ".")
}

func (h *Handler) billing(c *gin.Context) {
	d, form, err := h.billingData(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, "billing", &view{Title: "Billing", Data: d, Form: form})
}

func (h *Handler) updateBilling(c *gin.Context) {
	var s workspace.Settings
	notice := "Billing contact saved."
	switch c.PostForm("section") {
	case "plan":
		plan := c.PostForm("plan")
		s.Plan = &plan
		notice = "Plan changed to " + planLabels[workspace.Plan(plan)] + "."
	case "time_zone":
		zone := strings.TrimSpace(c.PostForm("time_zone"))
		s.TimeZone = &zone
		notice = "Workspace time zone set to " + zone + "."
	default:
		email := strings.TrimSpace(c.PostForm("billing_email"))
		s.BillingEmail = &email
	}
	h.updateWorkspace(c, s, notice)
}

func (h *Handler) updateWorkspace(c *gin.Context, s workspace.Settings, notice string) {
	_, err := h.app.Commands.UpdateWorkspace.Handle(c.Request.Context(), workspaceapp.UpdateWorkspace{Settings: s})
	if err != nil {
		b, ok := h.invalid(c, err)
		if !ok {
			return
		}
		d, form, lerr := h.billingData(c)
		if lerr != nil {
			h.fail(c, lerr)
			return
		}
		if s.BillingEmail != nil {
			form["billing_email"] = *s.BillingEmail
		}
		if s.TimeZone != nil {
			d.Zones = h.zoneOptions(*s.TimeZone)
		}
		v := &view{Title: "Billing", Data: d, Form: form}
		v.Errors, v.Error = fieldErrors(b, map[string]string{"plan": "plan", "billing_email": "billing_email", "time_zone": "time_zone"})
		h.render(c, b.Status, "billing", v)
		return
	}
	h.redirect(c, "/app/settings/billing", notice)
}

func (h *Handler) cancelConfirm(c *gin.Context) {
	if err := principal(c).Require(access.ManageAccount); err != nil {
		h.fail(c, err)
		return
	}
	deletion := h.now().Add(workspace.GracePeriod).In(h.zone(c)).Format("2 January 2006")
	h.render(c, http.StatusOK, "confirm", &view{Title: "Cancel workspace", Data: confirmData{
		Heading: "Cancel this workspace?",
		Paragraphs: []string{"Forms stop being managed through this workspace's plan, and all its data — forms, submissions, files, workflows and webhooks — will be deleted on " + deletion + ", 90 days from now.",
			"You can reactivate the workspace any time before then to keep everything."},
		Action: "/app/settings/billing/cancel", Button: "Cancel workspace", Cancel: "/app/settings/billing", Danger: true}})
}

func (h *Handler) cancel(c *gin.Context) {
	status := string(workspace.StatusCancelled)
	h.updateWorkspace(c, workspace.Settings{Status: &status}, "The workspace is cancelled.")
}

func (h *Handler) reactivate(c *gin.Context) {
	status := string(workspace.StatusActive)
	h.updateWorkspace(c, workspace.Settings{Status: &status}, "The workspace is active again.")
}
