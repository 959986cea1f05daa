package bootstrap

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestPipelineSettingsFromEnvironment(t *testing.T) {
	t.Setenv("FORMWARD_RETRY_DELAYS", "1s,2s")
	t.Setenv("FORMWARD_DELIVERY_TIMEOUT", "3s")
	t.Setenv("FORMWARD_BREAKER_FAILURES", "7")
	t.Setenv("FORMWARD_BREAKER_COOLDOWN", "4s")
	t.Setenv("FORMWARD_WEBHOOK_CA_FILE", "/tmp/ca.pem")
	t.Setenv("FORMWARD_DELIVERY_CONCURRENCY", "3")
	t.Setenv("FORMWARD_DELIVERY_CONCURRENCY_PER_WORKSPACE", "2")
	t.Setenv("FORMWARD_DELIVERY_CONCURRENCY_PER_ENDPOINT", "1")
	t.Setenv("FORMWARD_DELIVERY_CONCURRENCY_PER_ENDPOINT_MAX", "3")
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
		if c.Retry.String() != "1s,2s" || c.Retry.MaxAttempts() != 3 || c.DeliveryTimeout != 3*time.Second || c.BreakerFailures != 7 || c.BreakerCooldown != 4*time.Second ||
			c.WebhookCAFile != "/tmp/ca.pem" || c.DeliveryConcurrency != 3 ||
			c.DeliveryConcurrencyPerWorkspace != 2 || c.DeliveryConcurrencyPerEndpoint != 1 || c.DeliveryConcurrencyPerEndpointMax != 3 || !c.AllowPrivateDestinations ||
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

// The retry schedule is parsed once, when the settings are read: a bad value stops the start.
func TestRetryDelaysParsedWithTheSettings(t *testing.T) {
	t.Setenv("FORMWARD_RETRY_DELAYS", "30s,soon")
	var c Config
	var errs []error
	bindDelivery(&binder{fs: pflag.NewFlagSet("t", pflag.ContinueOnError), errs: &errs}, &c)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "FORMWARD_RETRY_DELAYS") {
		t.Fatalf("bad schedule from the environment: %v", errs)
	}

	t.Setenv("FORMWARD_RETRY_DELAYS", "")
	os.Unsetenv("FORMWARD_RETRY_DELAYS")
	c, errs = Config{}, nil
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	bindDelivery(&binder{fs: fs, errs: &errs}, &c)
	if len(errs) != 0 || c.Retry.String() != "30s,5m,30m,2h" {
		t.Fatalf("default schedule %q, %v", c.Retry, errs)
	}
	if err := fs.Parse([]string{"--retry-delays", "200ms, 1s"}); err != nil || c.Retry.String() != "200ms,1s" {
		t.Fatalf("flag schedule %q, %v", c.Retry, err)
	}
	if err := fs.Parse([]string{"--retry-delays", "0s"}); err != nil || len(errs) != 1 || !strings.Contains(errs[0].Error(), "FORMWARD_RETRY_DELAYS") {
		t.Fatalf("a zero wait was accepted: %v %v", err, errs)
	}
}

func TestFairSharesMustAllowAnAttempt(t *testing.T) {
	shares := func(total, perWorkspace, perEndpoint int) Config {
		var c Config
		c.DeliveryConcurrency, c.DeliveryConcurrencyPerWorkspace, c.DeliveryConcurrencyPerEndpoint = total, perWorkspace, perEndpoint
		c.DeliveryConcurrencyPerEndpointMax = 16
		return c
	}
	noMax := shares(16, 4, 2)
	noMax.DeliveryConcurrencyPerEndpointMax = 0
	for _, c := range []Config{shares(16, 0, 2), shares(16, 4, -1), noMax} {
		if err := checkFairShares(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if err := checkFairShares(shares(16, 4, 2)); err != nil {
		t.Fatal(err)
	}
}
