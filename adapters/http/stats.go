package httpapi

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain/formstats"
)

type formStatsJSON struct {
	Views                   int64           `json:"views"`
	Starts                  int64           `json:"starts"`
	Submissions             int64           `json:"submissions"`
	CompletionRate          *float64        `json:"completion_rate"`
	MedianSecondsToComplete *float64        `json:"median_seconds_to_complete"`
	Daily                   []formDailyJSON `json:"daily"`
	SubmissionsBySource     bySourceJSON    `json:"submissions_by_source"`
	Fields                  []fieldStatJSON `json:"fields"`
	Pages                   []pageStatJSON  `json:"pages"`
}

type bySourceJSON struct {
	Form int64 `json:"form"`
	API  int64 `json:"api"`
}

// fieldStatJSON is one question's summary: options for choice fields, min/median/max for
// number fields (null without answers), neither for other fields.
type fieldStatJSON struct {
	FieldID  string           `json:"field_id"`
	Answered int64            `json:"answered"`
	Options  []optionStatJSON `json:"options,omitempty"`
	// Min, Median and Max hold a *float64 for number fields (null without answers) and stay
	// nil, hence absent, for other fields.
	Min    any `json:"min,omitempty"`
	Median any `json:"median,omitempty"`
	Max    any `json:"max,omitempty"`
}

type optionStatJSON struct {
	Option string `json:"option"`
	Count  int64  `json:"count"`
}

type pageStatJSON struct {
	Page    int   `json:"page"`
	Reached int64 `json:"reached"`
}

type formDailyJSON struct {
	Date        string `json:"date"`
	Views       int64  `json:"views"`
	Starts      int64  `json:"starts"`
	Submissions int64  `json:"submissions"`
}

func presentFormStats(r formstats.Report) formStatsJSON {
	out := formStatsJSON{Views: r.Views, Starts: r.Starts, Submissions: r.Submissions, CompletionRate: r.CompletionRate,
		MedianSecondsToComplete: r.MedianSecondsToComplete, Daily: make([]formDailyJSON, len(r.Daily))}
	for i, d := range r.Daily {
		out.Daily[i] = formDailyJSON{Date: d.Date.Format("2006-01-02"), Views: d.Views, Starts: d.Starts, Submissions: d.Submissions}
	}
	out.SubmissionsBySource = bySourceJSON{Form: r.FormSubmissions, API: r.APISubmissions}
	out.Fields = make([]fieldStatJSON, len(r.Fields))
	for i, f := range r.Fields {
		fj := fieldStatJSON{FieldID: f.FieldID, Answered: f.Answered}
		switch f.Kind {
		case formstats.KindNumber:
			fj.Min, fj.Median, fj.Max = f.Min, f.Median, f.Max
		case formstats.KindChoice:
			fj.Options = make([]optionStatJSON, len(f.Options))
			for k, o := range f.Options {
				fj.Options[k] = optionStatJSON{Option: o.Option, Count: o.Count}
			}
		}
		out.Fields[i] = fj
	}
	out.Pages = make([]pageStatJSON, len(r.Pages))
	for i, p := range r.Pages {
		out.Pages[i] = pageStatJSON{Page: p.Page, Reached: p.Reached}
	}
	return out
}

// getFormStats reports how the form's public page performed over the last ?days= UTC days
// (default 30, today included).
func (a *api) getFormStats(c *gin.Context) {
	days := 30
	if s, ok := c.GetQuery("days"); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > capture.MaxStatsDays {
			fail(c, a.Logger, badRequest("days must be an integer from 1 to "+strconv.Itoa(capture.MaxStatsDays)))
			return
		}
		days = n
	}
	r, err := a.App.Queries.GetFormStats.Handle(c.Request.Context(), capture.GetFormStats{
		FormID: c.Param("id"), Days: days,
	})
	if err != nil {
		fail(c, a.Logger, err)
		return
	}
	c.JSON(http.StatusOK, presentFormStats(r))
}
