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
