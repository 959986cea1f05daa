package workflow

import "github.com/formward/formward/domain/form"

// AddScore sets {{score}} to the submission's score when its form scores submissions (score
// non-nil). Call it before AddFieldKeys: on a form with scores, {{score}} is the score even
// when a field's key is "score" (the field stays reachable by its ID).
func AddScore(vars map[string]string, score *float64) {
	if score != nil {
		vars["score"] = form.FormatScore(*score)
	}
}
