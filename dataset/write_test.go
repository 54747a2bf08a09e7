package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A generation stopped halfway (here by cancelling from the progress
// callback after the first rows are in) leaves no file, temporary or final.
func TestGenerationInterruptedLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "people.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	w := WriteOptions{Progress: func(done, total int64) {
		calls++
		if done >= 1000 {
			cancel()
		}
	}}
	err := GeneratePeople(ctx, path, PeopleOptions{Rows: 50_000, Seed: 1}, w)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if calls == 0 {
		t.Fatal("the progress callback was never called")
	}
	if got := dirEntries(t, dir); len(got) != 0 {
		t.Errorf("files left behind: %v", got)
	}
}

func TestGenerationRefusesOverwriteUnlessForced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "people.db")
	if err := os.WriteFile(path, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := GeneratePeople(context.Background(), path, PeopleOptions{Rows: 10, Seed: 1}, WriteOptions{})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("err = %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Errorf("the existing file was changed to %q", b)
	}
	if got := dirEntries(t, dir); !slices.Equal(got, []string{"people.db"}) {
		t.Errorf("directory holds %v, want only people.db", got)
	}

	if err := GeneratePeople(context.Background(), path, PeopleOptions{Rows: 10, Seed: 1}, WriteOptions{Force: true}); err != nil {
		t.Fatalf("with Force: %v", err)
	}
	if _, rows := dumpHash(t, path, PeopleTableName); rows != 10 {
		t.Errorf("after Force: %d rows, want 10", rows)
	}
	if got := dirEntries(t, dir); !slices.Equal(got, []string{"people.db"}) {
		t.Errorf("directory holds %v, want only people.db", got)
	}
}

// The last step links rather than renames, so a file that appears at the
// destination while the table is being built is not replaced either.
func TestPlaceFileWithoutForceNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	tmp, dest := filepath.Join(dir, "tmp"), filepath.Join(dir, "dest")
	for path, content := range map[string]string{tmp: "new", dest: "old"} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := placeFile(tmp, dest, false); !errors.Is(err, ErrExists) {
		t.Fatalf("err = %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(dest); string(b) != "old" {
		t.Errorf("destination changed to %q", b)
	}
	if err := placeFile(tmp, dest, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dest); string(b) != "new" {
		t.Errorf("with force, destination holds %q, want new", b)
	}
}

func TestGenerationBadDestinations(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"empty path":        "",
		"a directory":       dir,
		"missing directory": filepath.Join(dir, "no", "such", "dir", "p.db"),
	}
	for name, path := range cases {
		t.Run(name, func(t *testing.T) {
			err := GenerateSynthetic(context.Background(), path, SyntheticOptions{Rows: 10}, WriteOptions{Force: true})
			if err == nil {
				t.Fatal("no error")
			}
		})
	}
	if got := dirEntries(t, dir); len(got) != 0 {
		t.Errorf("files left behind: %v", got)
	}
}

// Characters that mean something in a file: URI land in the file name as
// they are.
func TestGenerationOddFileName(t *testing.T) {
	dir := t.TempDir()
	name := "my data?v=1#x %41.db"
	path := filepath.Join(dir, name)
	if err := GenerateSynthetic(context.Background(), path, SyntheticOptions{Rows: 100, Seed: 1}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := dirEntries(t, dir); !slices.Equal(got, []string{name}) {
		t.Fatalf("directory holds %q, want %q", got, name)
	}
	if _, rows := dumpHash(t, path, SyntheticTableName); rows != 100 {
		t.Errorf("%d rows, want 100", rows)
	}
}

func TestProgressCountsUpToTotal(t *testing.T) {
	var seen []int64
	w := WriteOptions{Progress: func(done, total int64) {
		if total != 1000 {
			t.Errorf("total = %d, want 1000", total)
		}
		seen = append(seen, done)
	}}
	path := filepath.Join(t.TempDir(), "s.db")
	if err := GenerateSynthetic(context.Background(), path, SyntheticOptions{Rows: 1000}, w); err != nil {
		t.Fatal(err)
	}
	// Batches of 256 rows: 256, 512, 768, 1000.
	if want := []int64{256, 512, 768, 1000}; !slices.Equal(seen, want) {
		t.Errorf("progress saw %v, want %v", seen, want)
	}
}

func TestGeneratedFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	if err := GenerateSynthetic(context.Background(), path, SyntheticOptions{Rows: 10}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != generatedFileMode {
		t.Errorf("mode %v, want %v", info.Mode().Perm(), generatedFileMode)
	}
}
