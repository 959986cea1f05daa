package capture

import "github.com/formward/formward/domain/form"

// ScoreColumn is the title of the last column of a tabular export of a form with scores.
const ScoreColumn = "score"

// appendScoreColumn adds the score column after the metadata columns, for forms with scores
// only: the exports of other forms stay as they were.
func appendScoreColumn(cols []string, fields []form.Field) []string {
	if form.HasScores(fields) {
		return append(cols, ScoreColumn)
	}
	return cols
}

// scoreCell is a submission's score as the export writes it; empty when it has none (sent
// before the form had scores).
func scoreCell(score *float64) string {
	if score == nil {
		return ""
	}
	return form.FormatScore(*score)
}
