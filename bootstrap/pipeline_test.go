package bootstrap

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestParseRetryDelays(t *testing.T) {
	got, err := ParseRetryDelays("30s,5m,30m,2h")
	if err != nil || !slices.Equal(got, []time.Duration{30 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour}) {
		t.Fatalf("default schedule = %v, %v", got, err)
	}
	if got, err := ParseRetryDelays(" 200ms , 1s "); err != nil || !slices.Equal(got, []time.Duration{200 * time.Millisecond, time.Second}) {
		t.Fatalf("spaced schedule = %v, %v", got, err)
	}
	for _, bad := range []string{"", ",", "soon", "1s,-1s", "0s"} {
		if _, err := ParseRetryDelays(bad); err == nil {
			t.Errorf("ParseRetryDelays(%q) accepted", bad)
		}
	}
}

func TestPipelineSettingsFromEnvironment(t *testing.T) {
	t.Setenv("FORMWARD_RETRY_DELAYS", "1s,2s")
	t.Setenv("FORMWARD_DELIVERY_TIMEOUT", "3s")
	t.Setenv("FORMWARD_BREAKER_FAILURES", "7")
	t.Setenv("FORMWARD_BREAKER_COOLDOWN", "4s")
	t.Setenv("FORMWARD_WEBHOOK_CA_FILE", "/tmp/ca.pem")
	t.Setenv("FORMWARD_DELIVERY_CONCURRENCY", "3")
	t.Setenv("FORMWARD_ALLOW_PRIVATE_DESTINATIONS", "true")
	t.Setenv("FORMWARD_KAFKA_BROKERS", "k1:9092, k2:9092")
	roles := map[string][]func(*binder, *Config){
		"serve":  {bindCommon, bindServe, bindKafka, bindDelivery},
		"worker": {bindCommon, bindBrokers, bindWorker, bindDelivery},
	}
	for name, binds := range roles {
		var c Config
		var errs []error
		b := &binder{fs: pflag.NewFlagSet(name, pflag.ContinueOnError), errs: &errs}
		for _, bind := range binds {
			bind(b, &c)
		}
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if c.RetryDelays != "1s,2s" || c.DeliveryTimeout != 3*time.Second || c.BreakerFailures != 7 || c.BreakerCooldown != 4*time.Second ||
			c.WebhookCAFile != "/tmp/ca.pem" || c.DeliveryConcurrency != 3 || !c.AllowPrivateDestinations ||
			strings.Join(c.Brokers(), ",") != "k1:9092,k2:9092" {
			t.Fatalf("%s config = %+v", name, c)
		}
	}
}

func TestWorkerNeedsBrokers(t *testing.T) {
	t.Setenv("FORMWARD_KAFKA_BROKERS", "")
	var out bytes.Buffer
	if code := Main([]string{"worker", "--data-dir", t.TempDir()}, &out, &out); code == 0 || !strings.Contains(out.String(), "worker needs Kafka") {
		t.Fatalf("worker without brokers: exit %d, %s", code, out.String())
	}
}
