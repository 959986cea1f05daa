package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"go.uber.org/zap"

	httpapi "github.com/formward/formward/adapters/http"
	"github.com/formward/formward/adapters/persistence"
	"github.com/formward/formward/adapters/persistence/persistencetest"
	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/application/accounts"
	"github.com/formward/formward/application/auth"
)

// TestDeletedResponseTakesItsIdempotentAnswer: a response created through the API with an
// Idempotency-Key and deleted from the dashboard takes the API's stored answer with it: the
// same request again gets 409 conflict, without the answers.
func TestDeletedResponseTakesItsIdempotentAnswer(t *testing.T) {
	persistencetest.Each(t, func(t *testing.T, db *persistence.DB) {
		h := newHarness(t, db, "http://127.0.0.1:8080")
		owner := h.owner()
		f, _ := responsesForm(t, h, db, 0)
		ctx := context.Background()
		ws, err := persistence.NewWorkspaceRepository(db).Oldest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		k, err := h.app.Commands.CreateAPIKey.Handle(auth.WithPrincipal(ctx, auth.SystemPrincipal(ws.ID())),
			accounts.CreateAPIKey{Name: "importer", Scope: "read-write"})
		if err != nil {
			t.Fatal(err)
		}
		api := httpapi.NewRouter(httpapi.Deps{App: h.app, Idempotency: persistence.NewIdempotencyStore(db, persistencetest.Cipher()),
			Clock: system.Clock{}, Logger: zap.NewNop(), Ready: db.Ping}, httpapi.Options{SigningKey: []byte("cursor key for tests")})
		post := func() (int, map[string]any) {
			body := `{"data":{"` + f.Fields()[0].ID + `":"Ada Lovelace"}}`
			req := httptest.NewRequest(http.MethodPost, "/v1/forms/"+f.ID()+"/submissions", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+k.Token)
			req.Header.Set("Idempotency-Key", "import-1")
			rec := httptest.NewRecorder()
			api.ServeHTTP(rec, req)
			var out map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
				t.Fatalf("%d %s", rec.Code, rec.Body.String())
			}
			return rec.Code, out
		}
		status, created := post()
		if status != http.StatusCreated {
			t.Fatalf("create: %d %v", status, created)
		}
		base := "/app/forms/" + f.ID() + "/responses"
		owner.post(base+"/delete", url.Values{"id": {created["id"].(string)}}).redirectsTo(t, base)
		status, again := post()
		e, _ := again["error"].(map[string]any)
		if status != http.StatusConflict || e["code"] != "conflict" || e["message"] != "the submission this key created has been deleted" {
			t.Fatalf("replay after the dashboard deleted it: %d %v", status, again)
		}
		if len(rowsOf(owner.get(base).expect(t, http.StatusOK).body)) != 0 {
			t.Fatal("the replay created the response again")
		}
	})
}
