package httpapi

import "encoding/json"

// scores reads a choice field's scores: nil when absent (an existing field keeps its scores),
// an empty list for null or [] (the field's scores are removed).
func (o object) scores(name string) *[]float64 {
	raw, ok := o.props[name]
	if !ok {
		return nil
	}
	out := []float64{}
	if o.isNull(name) {
		return &out
	}
	var v []float64
	if err := json.Unmarshal(raw, &v); err != nil {
		o.typeError(name, "an array of numbers")
		return nil
	}
	if v != nil {
		out = v
	}
	return &out
}
