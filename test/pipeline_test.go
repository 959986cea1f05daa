package e2e_test

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/formward/formward/test/testkit"
)

// ---- an HTTPS webhook receiver ----

// received is one request a receiver got.
type received struct {
	path   string
	header http.Header
	body   []byte
	at     time.Time
	status int
}

func (r received) bodyObj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("delivery body is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

// receiver is an HTTPS server with a certificate of its own CA, written to caFile for
// FORMWARD_WEBHOOK_CA_FILE. Paths choose the behaviour: /ok answers 204, /slow too after 200ms,
// /flaky answers 500 to the first two attempts of each delivery, /down answers 500 until healed.
type receiver struct {
	srv    *httptest.Server
	caFile string
	healed atomic.Bool

	mu   sync.Mutex
	reqs []received
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(rc.handle))
	t.Cleanup(rc.srv.Close)
	rc.caFile = filepath.Join(t.TempDir(), "receiver-ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw})
	if err := os.WriteFile(rc.caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return rc
}

func (rc *receiver) url(path string) string { return rc.srv.URL + path }

func (rc *receiver) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.HasPrefix(r.URL.Path, "/slow") {
		time.Sleep(200 * time.Millisecond) // keeps attempts in flight when a worker is killed
	}
	rc.mu.Lock()
	rec := received{path: r.URL.Path, header: r.Header.Clone(), body: body, at: time.Now()}
	status := http.StatusNoContent
	switch {
	case strings.HasPrefix(r.URL.Path, "/flaky"):
		n := 0
		for _, old := range rc.reqs {
			if old.header.Get("X-Service-Delivery") == r.Header.Get("X-Service-Delivery") {
				n++
			}
		}
		if n < 2 {
			status = http.StatusInternalServerError
		}
	case strings.HasPrefix(r.URL.Path, "/down"):
		if !rc.healed.Load() {
			status = http.StatusInternalServerError
		}
	}
	rec.status = status
	rc.reqs = append(rc.reqs, rec)
	rc.mu.Unlock()
	w.WriteHeader(status)
}

// requests returns what the receiver got on paths with the prefix, oldest first.
func (rc *receiver) requests(prefix string) []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []received
	for _, r := range rc.reqs {
		if strings.HasPrefix(r.path, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// pipelineEnv points an instance at the receiver with a fast retry schedule.
func pipelineEnv(in *instance, rc *receiver) {
	in.setEnv("FORMWARD_WEBHOOK_CA_FILE", rc.caFile)
	in.setEnv("FORMWARD_ALLOW_PRIVATE_DESTINATIONS", "true")
	in.setEnv("FORMWARD_RETRY_DELAYS", "200ms,200ms,200ms,200ms")
	in.setEnv("FORMWARD_BREAKER_COOLDOWN", "300ms")
	in.setEnv("FORMWARD_API_RATE_LIMIT", "0")
}

// newPipelineInstance is an instance in embedded mode (SQLite, one process) whose deliveries go
// to a new HTTPS receiver (pipelineEnv).
func newPipelineInstance(t *testing.T) (*instance, *receiver) {
	t.Helper()
	rc := newReceiver(t)
	in := newInstance(t, "", "")
	pipelineEnv(in, rc)
	return in, rc
}

// verifySignatures checks X-Service-Signature and the Standard Webhooks headers against secret.
func verifySignatures(t *testing.T, r received, secret string) {
	t.Helper()
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(r.body)
	want := "sha256=" + hex.EncodeToString(m.Sum(nil))
	if got := r.header.Get("X-Service-Signature"); !hmac.Equal([]byte(got), []byte(want)) {
		t.Fatalf("X-Service-Signature = %q, want %q", got, want)
	}
	id, ts := r.header.Get("Webhook-Id"), r.header.Get("Webhook-Timestamp")
	if id != r.header.Get("X-Service-Delivery") {
		t.Fatalf("webhook-id = %q, want the delivery ID %q", id, r.header.Get("X-Service-Delivery"))
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		t.Fatalf("webhook-timestamp = %q, want unix seconds of now", ts)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	sm := hmac.New(sha256.New, key)
	sm.Write([]byte(id + "." + ts + "."))
	sm.Write(r.body)
	wantStd := "v1," + base64.StdEncoding.EncodeToString(sm.Sum(nil))
	found := false
	for _, sig := range strings.Fields(r.header.Get("Webhook-Signature")) {
		if hmac.Equal([]byte(sig), []byte(wantStd)) {
			found = true
		}
	}
	if !found {
		t.Fatalf("webhook-signature = %q, want it to contain %q", r.header.Get("Webhook-Signature"), wantStd)
	}
}

// checkDeliveryHeaders checks the headers every delivery carries.
func checkDeliveryHeaders(t *testing.T, r received, eventType string, attempt int) {
	t.Helper()
	h := r.header
	if h.Get("Content-Type") != "application/json" || h.Get("User-Agent") != "Formward-Webhooks/1" ||
		h.Get("X-Service-Event") != eventType || h.Get("X-Service-Attempt") != strconv.Itoa(attempt) ||
		!strings.HasPrefix(h.Get("X-Service-Delivery"), "dlv_") {
		t.Fatalf("delivery headers: Content-Type %q, User-Agent %q, X-Service-Event %q (want %s), X-Service-Attempt %q (want %d), X-Service-Delivery %q",
			h.Get("Content-Type"), h.Get("User-Agent"), h.Get("X-Service-Event"), eventType, h.Get("X-Service-Attempt"), attempt, h.Get("X-Service-Delivery"))
	}
}

func newSecret(t *testing.T) string {
	t.Helper()
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b[:])
}

// eventually polls cond every 50ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, timeout, cond, "%s", what)
}

// ---- API helpers ----

// createForm makes a form with one required text field; it returns the form and field IDs.
func createForm(t *testing.T, in *instance, key, name string) (string, string) {
	t.Helper()
	r := in.do("POST", "/v1/forms", key, map[string]any{"name": name,
		"fields": []map[string]any{{"label": "Message", "type": "text", "required": true}}})
	r.expect(t, http.StatusCreated)
	fields, _ := r.obj["fields"].([]any)
	f, _ := fields[0].(map[string]any)
	return r.str(t, "id"), f["id"].(string)
}

func registerWebhook(t *testing.T, in *instance, key, url, formID, secret string, events ...string) string {
	t.Helper()
	body := map[string]any{"url": url, "events": events, "form_id": formID}
	if secret != "" {
		body["secret"] = secret
	}
	r := in.do("POST", "/v1/webhooks", key, body)
	r.expect(t, http.StatusCreated)
	if _, ok := r.obj["secret"]; ok {
		t.Fatalf("POST /v1/webhooks returned the secret: %s", r.raw)
	}
	return r.str(t, "id")
}

func submit(t *testing.T, in *instance, key, formID, fieldID, value string) string {
	t.Helper()
	r := in.do("POST", "/v1/forms/"+formID+"/submissions", key, map[string]any{"data": map[string]any{fieldID: value}})
	r.expect(t, http.StatusCreated)
	return r.str(t, "id")
}

// deliveries reads GET /v1/webhooks/{id}/deliveries.
func deliveries(t *testing.T, in *instance, key, webhookID string) []map[string]any {
	t.Helper()
	return listData(t, in, key, "/v1/webhooks/"+webhookID+"/deliveries", "deliveries")
}

func attemptsOf(d map[string]any) []map[string]any {
	return objects(d["attempts"])
}

// listData reads the data of a GET list endpoint at path; what names the list in the failure.
func listData(t *testing.T, in *instance, key, path, what string) []map[string]any {
	t.Helper()
	r := in.do("GET", path, key, nil)
	r.expect(t, http.StatusOK)
	items, ok := r.obj["data"].([]any)
	if !ok {
		t.Fatalf("%s list without data: %s", what, r.raw)
	}
	return objects(items)
}

// objects returns a JSON array of objects as maps (no array: an empty list).
func objects(v any) []map[string]any {
	raw, _ := v.([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, a := range raw {
		out = append(out, a.(map[string]any))
	}
	return out
}

// ---- embedded mode ----

func TestWebhooksEmbedded(t *testing.T) {
	t.Parallel()
	in, rc := newPipelineInstance(t)
	key := in.cli("keys", "create", "--name", "webhooks", "--scope", "admin")
	in.startServe()

	formA, fieldA := createForm(t, in, key, "Signed")
	secret := newSecret(t)
	okHook := registerWebhook(t, in, key, rc.url("/ok"), formA, secret, "submission.created", "form.published")

	// form.published, once, when the form becomes published.
	in.do("PATCH", "/v1/forms/"+formA, key, map[string]any{"status": "published"}).expect(t, http.StatusOK)
	in.do("PATCH", "/v1/forms/"+formA, key, map[string]any{"status": "published"}).expect(t, http.StatusOK)
	eventually(t, 10*time.Second, "form.published", func() bool { return len(rc.requests("/ok")) >= 1 })
	pub := rc.requests("/ok")[0]
	checkDeliveryHeaders(t, pub, "form.published", 1)
	verifySignatures(t, pub, secret)
	body := pub.bodyObj(t)
	data, _ := body["data"].(map[string]any)
	if body["event"] != "form.published" || body["form_id"] != formA || data["name"] != "Signed" {
		t.Fatalf("form.published body = %s", pub.body)
	}
	for _, k := range []string{"timestamp"} {
		if _, err := time.Parse(time.RFC3339, body[k].(string)); err != nil {
			t.Fatalf("%s is not RFC 3339: %s", k, pub.body)
		}
	}
	if _, err := time.Parse(time.RFC3339, data["published_at"].(string)); err != nil {
		t.Fatalf("published_at is not RFC 3339: %s", pub.body)
	}

	// Every submission arrives, signed, with the webhook body of docs/webhooks.md.
	want := map[string]string{}
	for i := range 5 {
		v := fmt.Sprintf("hello %d", i)
		want[submit(t, in, key, formA, fieldA, v)] = v
	}
	// Once the server has recorded every delivery as delivered, every request it made has been
	// answered: the receiver's count is final.
	eventually(t, 10*time.Second, "6 deliveries recorded as delivered", func() bool {
		l := deliveries(t, in, key, okHook)
		for _, d := range l {
			if d["status"] != "delivered" {
				return false
			}
		}
		return len(l) >= 6
	})
	got := rc.requests("/ok")
	if len(got) != 6 {
		t.Fatalf("receiver got %d requests, want 6 (1 form.published, 5 submission.created)", len(got))
	}
	seenDeliveries := map[string]bool{}
	for _, r := range got[1:] {
		checkDeliveryHeaders(t, r, "submission.created", 1)
		verifySignatures(t, r, secret)
		b := r.bodyObj(t)
		d, _ := b["data"].(map[string]any)
		fields, _ := d["fields"].(map[string]any)
		subID, _ := d["submission_id"].(string)
		if b["event"] != "submission.created" || b["form_id"] != formA || want[subID] == "" || fields[fieldA] != want[subID] || len(b) != 4 || len(d) != 2 {
			t.Fatalf("submission.created body = %s", r.body)
		}
		if _, err := time.Parse(time.RFC3339, b["timestamp"].(string)); err != nil {
			t.Fatalf("timestamp is not RFC 3339: %s", r.body)
		}
		delete(want, subID)
		seenDeliveries[r.header.Get("X-Service-Delivery")] = true
	}
	if len(want) != 0 || len(seenDeliveries) != 5 {
		t.Fatalf("missing submissions %v, distinct deliveries %d", want, len(seenDeliveries))
	}
	list := deliveries(t, in, key, okHook)
	if len(list) != 6 {
		t.Fatalf("GET deliveries: %d items, want 6", len(list))
	}
	for _, d := range list {
		if d["status"] != "delivered" || len(attemptsOf(d)) != 1 || d["next_attempt_at"] != nil || d["webhook_id"] != okHook {
			t.Fatalf("delivery = %v", d)
		}
	}

	// Failing twice, then succeeding: delivered on attempt 3. Always failing: undeliverable
	// after 5 attempts, then replayed by hand. No secret: no signature headers.
	formB, fieldB := createForm(t, in, key, "Unreliable")
	flakyHook := registerWebhook(t, in, key, rc.url("/flaky"), formB, "", "submission.created")
	downHook := registerWebhook(t, in, key, rc.url("/down"), formB, "", "submission.created")
	subB := submit(t, in, key, formB, fieldB, "retry me")

	eventually(t, 15*time.Second, "the flaky delivery", func() bool {
		l := deliveries(t, in, key, flakyHook)
		return len(l) == 1 && l[0]["status"] == "delivered"
	})
	flaky := rc.requests("/flaky")
	if len(flaky) != 3 {
		t.Fatalf("flaky receiver got %d requests, want 3", len(flaky))
	}
	for i, r := range flaky {
		checkDeliveryHeaders(t, r, "submission.created", i+1)
		if r.header.Get("X-Service-Delivery") != flaky[0].header.Get("X-Service-Delivery") || string(r.body) != string(flaky[0].body) {
			t.Fatalf("retry %d changed the delivery ID or the body", i+1)
		}
		if r.header.Get("X-Service-Signature") != "" || r.header.Get("Webhook-Signature") != "" {
			t.Fatalf("unsigned webhook got signature headers")
		}
		if i > 0 && r.at.Sub(flaky[i-1].at) < 150*time.Millisecond {
			t.Fatalf("retry %d came %v after the previous attempt, want about 200ms", i+1, r.at.Sub(flaky[i-1].at))
		}
	}
	fd := deliveries(t, in, key, flakyHook)[0]
	if d, _ := fd["data"].(map[string]any); d != nil {
		t.Fatalf("delivery resource has data: %v", fd)
	}
	codes := []float64{}
	for _, a := range attemptsOf(fd) {
		c, _ := a["status_code"].(float64)
		codes = append(codes, c)
	}
	if !slices.Equal(codes, []float64{500, 500, 204}) {
		t.Fatalf("flaky attempts' status codes = %v, want [500 500 204]", codes)
	}
	if b := flaky[2].bodyObj(t); b["data"].(map[string]any)["submission_id"] != subB {
		t.Fatalf("flaky body = %s", flaky[2].body)
	}

	var downDelivery string
	eventually(t, 15*time.Second, "the failing delivery to become undeliverable", func() bool {
		l := deliveries(t, in, key, downHook)
		if len(l) == 1 && l[0]["status"] == "undeliverable" {
			downDelivery = l[0]["id"].(string)
			return true
		}
		return false
	})
	// Recorded undeliverable after its fifth attempt: the receiver has all five. A sixth sent on
	// its own would show after the replay below (7 requests instead of 6).
	down := rc.requests("/down")
	if len(down) != 5 {
		t.Fatalf("failing receiver got %d requests, want 5", len(down))
	}
	for i, r := range down {
		checkDeliveryHeaders(t, r, "submission.created", i+1)
	}
	if n := len(attemptsOf(deliveries(t, in, key, downHook)[0])); n != 5 {
		t.Fatalf("undeliverable delivery lists %d attempts, want 5", n)
	}

	// Replay by hand once the receiver is back.
	rc.healed.Store(true)
	r := in.do("POST", "/v1/webhooks/"+downHook+"/deliveries/"+downDelivery+"/retry", key, nil)
	if r.status < 200 || r.status > 299 {
		t.Fatalf("retry: status %d: %s", r.status, r.raw)
	}
	eventually(t, 10*time.Second, "the replayed delivery", func() bool {
		l := deliveries(t, in, key, downHook)
		return len(l) == 1 && l[0]["status"] == "delivered"
	})
	down = rc.requests("/down")
	if len(down) != 6 || down[5].header.Get("X-Service-Delivery") != downDelivery {
		t.Fatalf("after the replay the receiver has %d requests, want 6 with delivery %s", len(down), downDelivery)
	}

	// DELETE stops pending retries at once.
	rc.healed.Store(false)
	formC, fieldC := createForm(t, in, key, "Deleted hook")
	delHook := registerWebhook(t, in, key, rc.url("/down-deleted"), formC, "", "submission.created")
	// A twin on the same form fails on the same schedule: once it is undeliverable, the deleted
	// hook's retries would have come too.
	twinHook := registerWebhook(t, in, key, rc.url("/down-twin"), formC, "", "submission.created")
	submit(t, in, key, formC, fieldC, "never delivered")
	eventually(t, 10*time.Second, "the first attempt", func() bool { return len(rc.requests("/down-deleted")) >= 1 })
	in.do("DELETE", "/v1/webhooks/"+delHook, key, nil).expect(t, http.StatusNoContent)
	before := len(rc.requests("/down-deleted"))
	eventually(t, 15*time.Second, "the twin's whole retry schedule", func() bool {
		l := deliveries(t, in, key, twinHook)
		return len(l) == 1 && l[0]["status"] == "undeliverable"
	})
	if after := len(rc.requests("/down-deleted")); after > before+1 {
		t.Fatalf("deleted webhook kept receiving: %d requests at DELETE, %d after a whole retry schedule", before, after)
	}
	in.do("GET", "/v1/webhooks/"+delHook+"/deliveries", key, nil).expectError(t, http.StatusNotFound, "not_found")

	in.stopServe()
}

// ---- Kafka mode: serve, relay and worker as three processes ----

// kafkaBrokers starts an in-process Kafka-protocol broker (kfake) for the test and returns its
// addresses.
func kafkaBrokers(t *testing.T) []string {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	return cluster.ListenAddrs()
}

// newKafkaInstance is an instance on a fresh PostgreSQL database, with its own master key, whose
// events go through an in-process Kafka-protocol broker at brokers.
func newKafkaInstance(t *testing.T) (in *instance, brokers []string) {
	t.Helper()
	dbURL := freshPostgresDatabase(t)
	brokers = kafkaBrokers(t)
	in = newInstance(t, dbURL, randomMasterKey(t))
	in.setEnv("FORMWARD_KAFKA_BROKERS", strings.Join(brokers, ","))
	return in, brokers
}

// newKafkaPipelineInstance is newKafkaInstance whose deliveries go to a new HTTPS receiver
// (pipelineEnv).
func newKafkaPipelineInstance(t *testing.T) (*instance, *receiver) {
	t.Helper()
	rc := newReceiver(t)
	in, _ := newKafkaInstance(t)
	pipelineEnv(in, rc)
	return in, rc
}

// inServe makes an admin key named keyName, starts serve alone (the pipeline in-process), runs
// test with the key, then stops serve.
func inServe(t *testing.T, in *instance, keyName string, test func(key string)) {
	t.Helper()
	key := in.cli("keys", "create", "--name", keyName, "--scope", "admin")
	in.startServe()
	test(key)
	in.stopServe()
}

// inThreeProcesses migrates in's database, makes an admin key named keyName, starts serve, the
// relay and a worker, runs test with the key, then stops the worker, the relay and serve.
func inThreeProcesses(t *testing.T, in *instance, keyName string, test func(key string)) {
	t.Helper()
	in.cli("migrate")
	key := in.cli("keys", "create", "--name", keyName, "--scope", "admin")
	in.startServe()
	relay := in.startProc("relay")
	worker := in.startProc("worker")
	test(key)
	worker.stop(t)
	relay.stop(t)
	in.stopServe()
}

// proc is one formward process besides serve.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan error
}

func (in *instance) startProc(args ...string) *proc {
	in.t.Helper()
	cmd := exec.Command(formwardBin, args...)
	cmd.Env = in.environ()
	fmt.Fprintf(in.logs, "$ formward %s\n", strings.Join(args, " "))
	cmd.Stdout, cmd.Stderr = in.logs, in.logs
	if err := cmd.Start(); err != nil {
		in.t.Fatalf("start formward %s: %v", strings.Join(args, " "), err)
	}
	p := &proc{name: strings.Join(args, " "), cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	in.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

// kill ends the process with SIGKILL: no cleanup, no commit, no lease release.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
		p.done <- nil // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatalf("formward %s did not die", p.name)
	}
}

// stop sends SIGTERM and expects exit status 0.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- nil
		if err != nil {
			t.Fatalf("formward %s after SIGTERM: %v", p.name, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("formward %s did not stop within 20s of SIGTERM", p.name)
	}
}

func TestWebhooksKafkaThreeProcesses(t *testing.T) {
	t.Parallel()
	in, rc := newKafkaPipelineInstance(t)
	in.setEnv("FORMWARD_KAFKA_PARTITIONS", "4")
	in.setEnv("FORMWARD_KAFKA_SESSION_TIMEOUT", "6s")
	// A claim's lease is 2×timeout+5s: attempts a killed worker had in flight are retried by the
	// next one after 7s.
	in.setEnv("FORMWARD_DELIVERY_TIMEOUT", "1s")
	in.cli("migrate")
	key := in.cli("keys", "create", "--name", "kafka", "--scope", "admin")
	in.startServe()
	relay := in.startProc("relay")
	worker := in.startProc("worker")

	form, field := createForm(t, in, key, "Through Kafka")
	secret := newSecret(t)
	hook := registerWebhook(t, in, key, rc.url("/slow"), form, secret, "submission.created")

	want := map[string]bool{}
	post := func(n int) {
		for range n {
			want[submit(t, in, key, form, field, "kafka")] = true
			time.Sleep(10 * time.Millisecond) // paces the stream the crash interrupts: the load, not a wait
		}
	}
	post(40)
	eventually(t, 30*time.Second, "the first deliveries", func() bool { return len(rc.requests("/slow")) >= 1 })

	// Crash both in the middle of the stream; submissions keep coming meanwhile.
	post(20)
	t.Logf("killing the worker: %d submissions posted, %d requests received", len(want), len(rc.requests("/slow")))
	worker.kill(t)
	post(20)
	relay.kill(t)
	post(40)
	relay = in.startProc("relay")
	post(20)
	worker = in.startProc("worker")
	post(40)

	eventually(t, 60*time.Second, "every submission at the receiver", func() bool {
		seen := map[string]bool{}
		for _, r := range rc.requests("/slow") {
			var b struct {
				Data struct {
					SubmissionID string `json:"submission_id"`
				} `json:"data"`
			}
			_ = json.Unmarshal(r.body, &b)
			seen[b.Data.SubmissionID] = true
		}
		for id := range want {
			if !seen[id] {
				return false
			}
		}
		return true
	})

	// Duplicates are recognisable: one submission, one delivery ID, however often it came.
	deliveryOf := map[string]string{}
	copies := map[string]int{}
	for _, r := range rc.requests("/slow") {
		verifySignatures(t, r, secret)
		b := r.bodyObj(t)
		sub := b["data"].(map[string]any)["submission_id"].(string)
		id := r.header.Get("X-Service-Delivery")
		if prev, ok := deliveryOf[sub]; ok && prev != id {
			t.Fatalf("submission %s arrived under two delivery IDs: %s and %s", sub, prev, id)
		}
		deliveryOf[sub] = id
		copies[sub]++
	}
	dups := 0
	for _, n := range copies {
		dups += n - 1
	}
	t.Logf("%d submissions, %d requests, %d duplicates (same X-Service-Delivery)", len(want), len(rc.requests("/slow")), dups)
	r := in.do("GET", "/v1/webhooks/"+hook+"/deliveries?limit=100", key, nil)
	r.expect(t, http.StatusOK)
	if items, _ := r.obj["data"].([]any); len(items) != 100 || r.obj["has_more"] != true {
		t.Fatalf("GET deliveries?limit=100: %d items, has_more %v; want 100 of %d and more", len(items), r.obj["has_more"], len(want))
	}

	worker.stop(t)
	relay.stop(t)
	in.stopServe()
}
