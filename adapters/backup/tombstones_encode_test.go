package backup

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/formward/formward/ports"
)

// The log's lines are written by hand (encodeTombstones) but must be exactly what
// json.Encoder writes for a tombstoneLine, whatever the strings hold, and read back the same.
func TestEncodeTombstonesWritesWhatEncodingJSONWrites(t *testing.T) {
	at := time.Date(2026, 11, 23, 19, 40, 5, 123456789, time.FixedZone("CET", 3600))
	ts := []ports.Tombstone{
		{Kind: ports.TombstoneSubmission, ID: "sub_06H0KBPF7CE8QRT6RJ7BS7MA50CV2", WorkspaceID: "wsp_06H0KBPF7CE8QRT6RJ7BS7MA50CV2", DeletedAt: at},
		{Kind: ports.TombstoneForm, ID: "frm_a", WorkspaceID: "wsp_b", DeletedAt: at.Truncate(time.Second)},
		{Kind: ports.TombstoneWorkspace, ID: "odd \"quoted\" \\ <tag> & é \u2028 \x01", WorkspaceID: "", DeletedAt: time.Time{}},
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	for _, x := range ts {
		if err := enc.Encode(tombstoneLine{Kind: string(x.Kind), ID: x.ID, WorkspaceID: x.WorkspaceID, DeletedAt: x.DeletedAt.UTC()}); err != nil {
			t.Fatal(err)
		}
	}
	got := encodeTombstones(ts)
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("encodeTombstones wrote\n%s\nencoding/json writes\n%s", got, want.Bytes())
	}
	back, err := decodeTombstones(bytes.NewReader(got), time.Time{}, nil)
	if err != nil || len(back) != len(ts) {
		t.Fatalf("read back %d (%v), want %d", len(back), err, len(ts))
	}
	for i := range ts {
		if back[i].Kind != ts[i].Kind || back[i].ID != ts[i].ID || back[i].WorkspaceID != ts[i].WorkspaceID || !back[i].DeletedAt.Equal(ts[i].DeletedAt) {
			t.Errorf("line %d read back as %+v, want %+v", i, back[i], ts[i])
		}
	}
}
