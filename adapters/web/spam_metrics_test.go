package web_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/formward/formward/adapters/web"
)

// Every spam reason is on the first scrape at 0, before any post was turned away.
func TestSpamReasonsStartAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := web.NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "formward_spam_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	for _, reason := range []string{web.ReasonHoneypot, web.ReasonTokenMissing, web.ReasonTokenInvalid, web.ReasonTokenExpired,
		web.ReasonTokenReplay, web.ReasonTooFast, web.ReasonPoWMissing, web.ReasonPoWInvalid, web.ReasonCaptcha, web.ReasonRateLimited} {
		if v, ok := got[reason]; !ok || v != 0 {
			t.Errorf("formward_spam_total{reason=%q}: present %v, value %v; want present at 0", reason, ok, v)
		}
	}
}
