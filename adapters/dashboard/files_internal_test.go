package dashboard

import "testing"

func TestFileSize(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1: "1 byte", 830: "830 bytes", 1023: "1023 bytes", 1024: "1 KB", 123_006: "120 KB",
		1_048_000: "1023 KB", 1_048_575: "1 MB", 4_404_019: "4.2 MB", 25 << 20: "25 MB", 3 << 30: "3 GB",
	} {
		if got := fileSize(n); got != want {
			t.Errorf("fileSize(%d) = %q, want %q", n, got, want)
		}
	}
}
