package crypto

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/formward/formward/adapters/system"
	"github.com/formward/formward/domain"
	"github.com/formward/formward/ports"
)

// memKeys is an in-memory ports.DataKeyRepository. Like the real one, Insert keeps the first key
// of a workspace and hands it back to later inserters.
type memKeys struct {
	mu    sync.Mutex
	byID  map[string]ports.WrappedKey
	order []string
	delay time.Duration // widens race windows in Current and Insert

	calls   atomic.Int64
	inserts atomic.Int64 // Insert calls that stored a new row
}

func newMemKeys() *memKeys { return &memKeys{byID: map[string]ports.WrappedKey{}} }

func (m *memKeys) Current(ctx context.Context, workspaceID string) (ports.WrappedKey, error) {
	m.calls.Add(1)
	time.Sleep(m.delay)
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.order) - 1; i >= 0; i-- {
		if k := m.byID[m.order[i]]; k.WorkspaceID == workspaceID {
			return clone(k), nil
		}
	}
	return ports.WrappedKey{}, domain.ErrNotFound
}

func (m *memKeys) Get(ctx context.Context, id string) (ports.WrappedKey, error) {
	m.calls.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.byID[id]
	if !ok {
		return ports.WrappedKey{}, domain.ErrNotFound
	}
	return clone(k), nil
}

func (m *memKeys) Insert(ctx context.Context, k ports.WrappedKey) (ports.WrappedKey, error) {
	m.calls.Add(1)
	time.Sleep(m.delay)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range m.order {
		if existing := m.byID[id]; existing.WorkspaceID == k.WorkspaceID {
			return clone(existing), nil // another process won the race
		}
	}
	m.byID[k.ID] = clone(k)
	m.order = append(m.order, k.ID)
	m.inserts.Add(1)
	return clone(k), nil
}

func (m *memKeys) All(ctx context.Context) ([]ports.WrappedKey, error) {
	m.calls.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ports.WrappedKey, 0, len(m.order))
	for _, id := range m.order {
		out = append(out, clone(m.byID[id]))
	}
	return out, nil
}

func (m *memKeys) Rewrap(ctx context.Context, id, masterKeyID string, wrapped []byte) error {
	m.calls.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.byID[id]
	if !ok {
		return domain.ErrNotFound
	}
	k.MasterKeyID = masterKeyID
	k.Wrapped = bytes.Clone(wrapped)
	m.byID[id] = k
	return nil
}

func (m *memKeys) update(id string, f func(*ports.WrappedKey)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := m.byID[id]
	f(&k)
	m.byID[id] = k
}

func clone(k ports.WrappedKey) ports.WrappedKey {
	k.Wrapped = bytes.Clone(k.Wrapped)
	return k
}

func newTestCipher(ring *Keyring, keys ports.DataKeyRepository) *Cipher {
	return NewCipher(ring, keys, system.NewIDs(), system.Clock{})
}

func dekIDOf(t *testing.T, ct []byte) string {
	t.Helper()
	if len(ct) < 2 || ct[0] != 0x01 || len(ct) < 2+int(ct[1]) {
		t.Fatalf("not a v1 ciphertext: %x", ct)
	}
	return string(ct[2 : 2+int(ct[1])])
}

var ctx = context.Background()

func TestSealOpenRoundTrip(t *testing.T) {
	c := newTestCipher(NewKeyring(GenerateMasterKey()), newMemKeys())
	for _, size := range []int{0, 1, 15, 16, 17, 1024, 1 << 20} {
		for _, aad := range [][]byte{nil, []byte("sub_123/data")} {
			pt := bytes.Repeat([]byte{byte(size)}, size)
			ct, err := c.Seal(ctx, "wsp_1", pt, aad)
			if err != nil {
				t.Fatal(err)
			}
			if want := 2 + int(ct[1]) + 12 + size + 16; len(ct) != want {
				t.Fatalf("len(ct) = %d, want %d", len(ct), want)
			}
			got, err := c.Open(ctx, "wsp_1", ct, aad)
			if err != nil {
				t.Fatalf("size %d: %v", size, err)
			}
			if !bytes.Equal(got, pt) {
				t.Fatalf("size %d: round trip changed the plaintext", size)
			}
		}
	}
}

func TestCiphertextFormat(t *testing.T) {
	keys := newMemKeys()
	c := newTestCipher(NewKeyring(GenerateMasterKey()), keys)
	pt := []byte("hello")
	a, _ := c.Seal(ctx, "wsp_1", pt, nil)
	b, _ := c.Seal(ctx, "wsp_1", pt, nil)
	if a[0] != 0x01 {
		t.Fatalf("version byte = %#x", a[0])
	}
	id := dekIDOf(t, a)
	if !system.Valid("dek", id) {
		t.Fatalf("data key ID %q is not a dek_ ID", id)
	}
	if _, err := keys.Get(ctx, id); err != nil {
		t.Fatalf("ciphertext names data key %q, which is not stored: %v", id, err)
	}
	if bytes.Equal(a, b) {
		t.Fatal("two seals of one plaintext are equal: nonce reuse")
	}
	if bytes.Contains(a, pt) {
		t.Fatal("ciphertext contains the plaintext")
	}
}

func TestTamperingIsDetected(t *testing.T) {
	c := newTestCipher(NewKeyring(GenerateMasterKey()), newMemKeys())
	secret := "very secret answer"
	aad := []byte("sub_1")
	ct, err := c.Seal(ctx, "wsp_1", []byte(secret), aad)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ct {
		for _, flip := range []byte{0x01, 0x80} {
			bad := bytes.Clone(ct)
			bad[i] ^= flip
			got, err := c.Open(ctx, "wsp_1", bad, aad)
			if err == nil {
				t.Fatalf("flipping bit %#x of byte %d went unnoticed", flip, i)
			}
			if got != nil || strings.Contains(err.Error(), secret) {
				t.Fatalf("byte %d: leaked plaintext: %v", i, err)
			}
		}
	}
	for n := range len(ct) {
		if _, err := c.Open(ctx, "wsp_1", ct[:n], aad); err == nil {
			t.Fatalf("truncated to %d bytes, still opens", n)
		}
	}
	if _, err := c.Open(ctx, "wsp_1", append(bytes.Clone(ct), 0), aad); !errors.Is(err, ErrAuthentication) {
		t.Fatalf("extended ciphertext: err = %v, want ErrAuthentication", err)
	}
	bad := bytes.Clone(ct)
	bad[len(bad)-1] ^= 1
	if _, err := c.Open(ctx, "wsp_1", bad, aad); !errors.Is(err, ErrAuthentication) {
		t.Fatalf("flipped tag: err = %v, want ErrAuthentication", err)
	}
	bad = bytes.Clone(ct)
	bad[0] = 0x02
	if _, err := c.Open(ctx, "wsp_1", bad, aad); !errors.Is(err, ErrMalformed) {
		t.Fatalf("unknown version: err = %v, want ErrMalformed", err)
	}
}

func TestAADMismatch(t *testing.T) {
	c := newTestCipher(NewKeyring(GenerateMasterKey()), newMemKeys())
	ct, _ := c.Seal(ctx, "wsp_1", []byte("x"), []byte("sub_1"))
	for _, aad := range [][]byte{nil, []byte("sub_2"), []byte("sub_1 "), []byte("sub_")} {
		if _, err := c.Open(ctx, "wsp_1", ct, aad); !errors.Is(err, ErrAuthentication) {
			t.Fatalf("aad %q: err = %v, want ErrAuthentication", aad, err)
		}
	}
}

func TestWorkspaceMismatch(t *testing.T) {
	keys := newMemKeys()
	c := newTestCipher(NewKeyring(GenerateMasterKey()), keys)
	ct, _ := c.Seal(ctx, "wsp_1", []byte("x"), nil)
	if _, err := c.Seal(ctx, "wsp_2", []byte("y"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Open(ctx, "wsp_2", ct, nil); !errors.Is(err, ErrWrongWorkspace) {
		t.Fatalf("err = %v, want ErrWrongWorkspace", err)
	}
	// A fresh process, with nothing cached, refuses as well.
	if _, err := newTestCipher(c.ring, keys).Open(ctx, "wsp_2", ct, nil); !errors.Is(err, ErrWrongWorkspace) {
		t.Fatalf("uncached: err = %v, want ErrWrongWorkspace", err)
	}
	if _, err := c.Seal(ctx, "", []byte("x"), nil); err == nil {
		t.Fatal("sealed for an empty workspace ID")
	}
}

func TestWrappedKeyMovedToAnotherWorkspace(t *testing.T) {
	keys := newMemKeys()
	ring := NewKeyring(GenerateMasterKey())
	ct, _ := newTestCipher(ring, keys).Seal(ctx, "wsp_1", []byte("x"), nil)
	keys.update(dekIDOf(t, ct), func(k *ports.WrappedKey) { k.WorkspaceID = "wsp_evil" })
	if _, err := newTestCipher(ring, keys).Open(ctx, "wsp_evil", ct, nil); err == nil {
		t.Fatal("a data key re-assigned to another workspace still unwraps")
	}
}

func TestWorkspacesGetTheirOwnDataKeys(t *testing.T) {
	keys := newMemKeys()
	ring := NewKeyring(GenerateMasterKey())
	c := newTestCipher(ring, keys)
	a, _ := c.Seal(ctx, "wsp_1", []byte("x"), nil)
	b, _ := c.Seal(ctx, "wsp_2", []byte("x"), nil)
	a2, _ := c.Seal(ctx, "wsp_1", []byte("x"), nil)
	if dekIDOf(t, a) == dekIDOf(t, b) {
		t.Fatal("two workspaces share a data key")
	}
	if dekIDOf(t, a) != dekIDOf(t, a2) {
		t.Fatal("one workspace got two data keys")
	}
	all, _ := keys.All(ctx)
	if len(all) != 2 {
		t.Fatalf("%d data keys stored, want 2", len(all))
	}
	raw := map[string]bool{}
	for _, wk := range all {
		if wk.MasterKeyID != ring.Primary().ID() || !wk.CreatedAt.Equal(wk.CreatedAt.Truncate(time.Millisecond)) || wk.CreatedAt.IsZero() {
			t.Fatalf("stored key %+v", wk)
		}
		k, err := unwrapKey(ring.Primary(), wk)
		if err != nil {
			t.Fatal(err)
		}
		raw[string(k)] = true
	}
	if len(raw) != 2 {
		t.Fatal("two workspaces have equal raw data keys")
	}
}

func TestConcurrentFirstSealMakesOneDataKey(t *testing.T) {
	keys := newMemKeys()
	keys.delay = 20 * time.Millisecond
	ring := NewKeyring(GenerateMasterKey())
	c := newTestCipher(ring, keys)

	const n = 64
	cts := make([][]byte, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			ct, err := c.Seal(ctx, "wsp_1", fmt.Appendf(nil, "p%d", i), nil)
			if err != nil {
				t.Error(err)
			}
			cts[i] = ct
		})
	}
	close(start)
	wg.Wait()
	if got := keys.inserts.Load(); got != 1 {
		t.Fatalf("%d data keys stored, want 1", got)
	}
	if got := keys.calls.Load(); got != 2 { // one Current, one Insert
		t.Fatalf("%d repository calls, want 2", got)
	}
	for i, ct := range cts {
		if dekIDOf(t, ct) != dekIDOf(t, cts[0]) {
			t.Fatal("concurrent seals used different data keys")
		}
		if pt, err := c.Open(ctx, "wsp_1", ct, nil); err != nil || string(pt) != fmt.Sprintf("p%d", i) {
			t.Fatalf("open %d: %q, %v", i, pt, err)
		}
	}
}

// Two processes (two Ciphers on one store) race for a workspace's first key: the store keeps one,
// and both end up sealing with it.
func TestConcurrentProcessesAgreeOnOneDataKey(t *testing.T) {
	keys := newMemKeys()
	keys.delay = 20 * time.Millisecond
	ring := NewKeyring(GenerateMasterKey())
	procs := []*Cipher{newTestCipher(ring, keys), newTestCipher(ring, keys), newTestCipher(ring, keys)}
	cts := make([][]byte, len(procs))
	var wg sync.WaitGroup
	for i, c := range procs {
		wg.Go(func() {
			ct, err := c.Seal(ctx, "wsp_1", []byte("x"), nil)
			if err != nil {
				t.Error(err)
			}
			cts[i] = ct
		})
	}
	wg.Wait()
	if got := keys.inserts.Load(); got != 1 {
		t.Fatalf("%d data keys stored, want 1", got)
	}
	for i, ct := range cts {
		if dekIDOf(t, ct) != dekIDOf(t, cts[0]) {
			t.Fatalf("process %d seals with a key the store does not keep", i)
		}
		for _, c := range procs {
			if _, err := c.Open(ctx, "wsp_1", ct, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestNoRepositoryCallsAfterFirstUse(t *testing.T) {
	keys := newMemKeys()
	ring := NewKeyring(GenerateMasterKey())
	c := newTestCipher(ring, keys)
	ct, _ := c.Seal(ctx, "wsp_1", []byte("x"), nil)
	before := keys.calls.Load()
	for range 100 {
		ct2, err := c.Seal(ctx, "wsp_1", []byte("x"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Open(ctx, "wsp_1", ct2, nil); err != nil {
			t.Fatal(err)
		}
	}
	if keys.calls.Load() != before {
		t.Fatalf("%d repository calls on the hot path", keys.calls.Load()-before)
	}

	// A restarted process opens with one Get, then seals with the stored key, not a new one.
	restarted := newTestCipher(ring, keys)
	before = keys.calls.Load()
	for range 10 {
		if _, err := restarted.Open(ctx, "wsp_1", ct, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := keys.calls.Load() - before; got != 1 {
		t.Fatalf("%d repository calls for 10 opens, want 1", got)
	}
	ct3, _ := restarted.Seal(ctx, "wsp_1", []byte("x"), nil)
	if dekIDOf(t, ct3) != dekIDOf(t, ct) || keys.inserts.Load() != 1 {
		t.Fatal("a restarted process made a new data key instead of using the stored one")
	}
}

// EnsureKey creates the data key once and leaves nothing for Seal to fetch; a restarted process
// finds the stored key instead of making a new one.
func TestEnsureKeyCreatesTheDataKeyOnce(t *testing.T) {
	keys := newMemKeys()
	ring := NewKeyring(GenerateMasterKey())
	c := newTestCipher(ring, keys)
	for range 3 {
		if err := c.EnsureKey(ctx, "wsp_1"); err != nil {
			t.Fatal(err)
		}
	}
	if keys.inserts.Load() != 1 {
		t.Fatalf("%d data keys made, want 1", keys.inserts.Load())
	}
	before := keys.calls.Load()
	ct, err := c.Seal(ctx, "wsp_1", []byte("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if keys.calls.Load() != before {
		t.Fatal("Seal reached the repository after EnsureKey")
	}
	restarted := newTestCipher(ring, keys)
	if err := restarted.EnsureKey(ctx, "wsp_1"); err != nil {
		t.Fatal(err)
	}
	ct2, _ := restarted.Seal(ctx, "wsp_1", []byte("x"), nil)
	if dekIDOf(t, ct2) != dekIDOf(t, ct) || keys.inserts.Load() != 1 {
		t.Fatal("a restarted process made a new data key instead of using the stored one")
	}
	if err := c.EnsureKey(ctx, ""); err == nil {
		t.Fatal("EnsureKey took an empty workspace ID")
	}
	failing := newTestCipher(ring, &failingKeys{newMemKeys()})
	if err := failing.EnsureKey(ctx, "wsp_1"); !errors.Is(err, errStore) {
		t.Fatalf("err = %v, want the store's error", err)
	}
}

func TestOpenUnknownDataKey(t *testing.T) {
	ring := NewKeyring(GenerateMasterKey())
	ct, _ := newTestCipher(ring, newMemKeys()).Seal(ctx, "wsp_1", []byte("x"), nil)
	_, err := newTestCipher(ring, newMemKeys()).Open(ctx, "wsp_1", ct, nil)
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
}

type failingKeys struct{ *memKeys }

var errStore = errors.New("store down")

func (*failingKeys) Current(context.Context, string) (ports.WrappedKey, error) {
	return ports.WrappedKey{}, errStore
}

func TestRepositoryErrorsAreNotCached(t *testing.T) {
	keys := &failingKeys{newMemKeys()}
	c := newTestCipher(NewKeyring(GenerateMasterKey()), keys)
	for range 2 {
		if _, err := c.Seal(ctx, "wsp_1", []byte("x"), nil); !errors.Is(err, errStore) {
			t.Fatalf("err = %v, want the store's error", err)
		}
	}
}

func TestMasterKeyRotation(t *testing.T) {
	keys := newMemKeys()
	a, b := GenerateMasterKey(), GenerateMasterKey()
	old := newTestCipher(NewKeyring(a), keys)
	ct1, _ := old.Seal(ctx, "wsp_1", []byte("one"), nil)
	ct2, _ := old.Seal(ctx, "wsp_2", []byte("two"), nil)

	// Before rotation, a server with only B cannot open, and says which key it lacks.
	_, err := newTestCipher(NewKeyring(b), keys).Open(ctx, "wsp_1", ct1, nil)
	var missing *MissingMasterKeyError
	if !errors.As(err, &missing) || missing.MasterKeyID != a.ID() || !strings.Contains(err.Error(), a.ID()) {
		t.Fatalf("err = %v, want a MissingMasterKeyError naming %s", err, a.ID())
	}

	// Step 1: servers run with B primary and A previous; old data opens, new keys are wrapped by B.
	both := NewKeyring(b, a)
	mid := newTestCipher(both, keys)
	for _, ct := range [][]byte{ct1, ct2} {
		ws := map[bool]string{true: "wsp_1", false: "wsp_2"}[bytes.Equal(ct, ct1)]
		if _, err := mid.Open(ctx, ws, ct, nil); err != nil {
			t.Fatal(err)
		}
	}
	ct3, _ := mid.Seal(ctx, "wsp_3", []byte("three"), nil)
	if wk, _ := keys.Get(ctx, dekIDOf(t, ct3)); wk.MasterKeyID != b.ID() {
		t.Fatalf("new data key wrapped by %s, want %s", wk.MasterKeyID, b.ID())
	}

	// Step 2: rotate; idempotent.
	n, err := RotateMaster(ctx, both, keys)
	if err != nil || n != 2 {
		t.Fatalf("RotateMaster = %d, %v; want 2, nil", n, err)
	}
	if n, err := RotateMaster(ctx, both, keys); err != nil || n != 0 {
		t.Fatalf("second RotateMaster = %d, %v; want 0, nil", n, err)
	}

	// Step 3: B alone opens everything, and old data keys are reused, not replaced.
	onlyB := newTestCipher(NewKeyring(b), keys)
	for ws, ct := range map[string][]byte{"wsp_1": ct1, "wsp_2": ct2, "wsp_3": ct3} {
		if _, err := onlyB.Open(ctx, ws, ct, nil); err != nil {
			t.Fatalf("%s: %v", ws, err)
		}
	}
	ct4, _ := onlyB.Seal(ctx, "wsp_1", []byte("four"), nil)
	if dekIDOf(t, ct4) != dekIDOf(t, ct1) {
		t.Fatal("rotation replaced a data key")
	}
	// And A alone no longer opens anything.
	if _, err := newTestCipher(NewKeyring(a), keys).Open(ctx, "wsp_1", ct1, nil); !errors.As(err, &missing) {
		t.Fatalf("err = %v, want MissingMasterKeyError", err)
	}
}

func TestRotateMasterReportsMissingKeys(t *testing.T) {
	keys := newMemKeys()
	a, b, c := GenerateMasterKey(), GenerateMasterKey(), GenerateMasterKey()
	newTestCipher(NewKeyring(a), keys).Seal(ctx, "wsp_1", []byte("x"), nil)
	newTestCipher(NewKeyring(b), keys).Seal(ctx, "wsp_2", []byte("x"), nil)
	// c primary, b previous, a forgotten: wsp_2's key is re-wrapped, wsp_1's is reported.
	n, err := RotateMaster(ctx, NewKeyring(c, b), keys)
	var missing *MissingMasterKeyError
	if n != 1 || !errors.As(err, &missing) || missing.MasterKeyID != a.ID() {
		t.Fatalf("RotateMaster = %d, %v", n, err)
	}
}

func TestErrorsDoNotLeakKeys(t *testing.T) {
	keys := newMemKeys()
	a := GenerateMasterKey()
	ct, _ := newTestCipher(NewKeyring(a), keys).Seal(ctx, "wsp_1", []byte("x"), nil)
	wk, _ := keys.Get(ctx, dekIDOf(t, ct))
	raw, _ := unwrapKey(a, wk)
	keys.update(wk.ID, func(k *ports.WrappedKey) { k.Wrapped[5] ^= 1 })
	_, err := newTestCipher(NewKeyring(a), keys).Open(ctx, "wsp_1", ct, nil)
	if err == nil {
		t.Fatal("corrupt wrapping unwrapped")
	}
	msg := err.Error()
	for _, secret := range []string{a.Base64(), string(raw), fmt.Sprintf("%x", raw), fmt.Sprintf("%x", a.key)} {
		if strings.Contains(msg, secret) {
			t.Fatalf("error %q leaks key material", msg)
		}
	}
}

// benchSealed is a cipher and 1 KiB of plaintext, sealed once with aad for workspace wsp_1 (so
// its data key exists), with b counting the plaintext's bytes and the allocations.
func benchSealed(b *testing.B, aad []byte) (c *Cipher, pt, sealed []byte) {
	b.Helper()
	c = newTestCipher(NewKeyring(GenerateMasterKey()), newMemKeys())
	pt = bytes.Repeat([]byte("a"), 1024)
	sealed, err := c.Seal(ctx, "wsp_1", pt, aad)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(pt)))
	b.ReportAllocs()
	return c, pt, sealed
}

func BenchmarkSeal1KiB(b *testing.B) {
	aad := []byte("sub_01JD0000000000000000000000/data")
	c, pt, _ := benchSealed(b, aad)
	for b.Loop() {
		if _, err := c.Seal(ctx, "wsp_1", pt, aad); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSeal1KiBParallel(b *testing.B) {
	c, pt, _ := benchSealed(b, nil)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Seal(ctx, "wsp_1", pt, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkOpen1KiB(b *testing.B) {
	c, _, ct := benchSealed(b, nil)
	for b.Loop() {
		if _, err := c.Open(ctx, "wsp_1", ct, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// The start check: stored data keys must each unwrap with a configured key; a fresh database
// passes; a rotation's previous key counts; the failure names the IDs found and configured.
func TestCheckMasterKeys(t *testing.T) {
	oldKey, newKey, other := GenerateMasterKey(), GenerateMasterKey(), GenerateMasterKey()
	keys := newMemKeys()
	if _, err := newTestCipher(NewKeyring(oldKey), keys).Seal(ctx, "wsp_old", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := newTestCipher(NewKeyring(newKey), keys).Seal(ctx, "wsp_new", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	stored, _ := keys.All(ctx)

	if err := CheckMasterKeys(NewKeyring(other), nil); err != nil {
		t.Fatalf("no data keys yet: %v", err)
	}
	if err := CheckMasterKeys(NewKeyring(newKey, oldKey), stored); err != nil {
		t.Fatalf("both keys configured: %v", err)
	}

	err := CheckMasterKeys(NewKeyring(newKey), stored)
	var mismatch *MasterKeyMismatchError
	if !errors.As(err, &mismatch) {
		t.Fatalf("previous key left out: %v, want a MasterKeyMismatchError", err)
	}
	if fmt.Sprint(mismatch.Missing) != fmt.Sprint([]string{oldKey.ID()}) || len(mismatch.Stored) != 2 ||
		fmt.Sprint(mismatch.Configured) != fmt.Sprint([]string{newKey.ID()}) {
		t.Fatalf("mismatch = %+v", mismatch)
	}
	msg := err.Error()
	for _, id := range []string{oldKey.ID(), newKey.ID()} {
		if !strings.Contains(msg, id) {
			t.Fatalf("message does not name %s: %s", id, msg)
		}
	}

	err = CheckMasterKeys(NewKeyring(other), stored)
	if !errors.As(err, &mismatch) || len(mismatch.Missing) != 2 || !strings.Contains(err.Error(), other.ID()) {
		t.Fatalf("wrong key: %v", err)
	}

	// A data key whose wrapping does not open under the key of its ID fails too.
	bad := clone(stored[0])
	bad.Wrapped[len(bad.Wrapped)-1] ^= 1
	if err := CheckMasterKeys(NewKeyring(newKey, oldKey), []ports.WrappedKey{bad}); !errors.As(err, &mismatch) {
		t.Fatalf("altered wrapping: %v", err)
	}
}
