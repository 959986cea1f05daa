package dashboard

import (
	"strings"

	"github.com/formward/formward/domain/form"
)

// scoreText writes a score as people read it: 2, 0.5, -1.25.
func scoreText(x float64) string { return form.FormatScore(x) }

// scoresText lists a field's scores for the history, or "none".
func scoresText(scores []float64) string {
	if len(scores) == 0 {
		return "none"
	}
	parts := make([]string, len(scores))
	for i, x := range scores {
		parts[i] = scoreText(x)
	}
	return strings.Join(parts, ", ")
}
