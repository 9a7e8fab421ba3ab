package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/gpucost/gpucost/schema"
)

// ErrBusy means another run holds the lock of the spool folder.
var ErrBusy = errors.New("another scrape run is in progress")

// spool is a folder of batches waiting to be loaded, one JSON file per batch, named
// <run id>.<provider>.json so that a listing sorts oldest first. It also holds the run lock.
type spool struct {
	dir string
}

const lockFile = "scrape.lock"

func openSpool(dir string) (*spool, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("creating the spool folder %s: %w", dir, err)
	}
	return &spool{dir: dir}, nil
}

// lock takes the run lock, waiting up to wait for another run to finish. The lock is an flock
// on a file, so a crashed run never leaves it held. The holder writes its run id, pid and start
// time into the file, for the message the next run prints.
func (s *spool) lock(ctx context.Context, wait time.Duration, runID string, now func() time.Time) (unlock func(), err error) {
	path := filepath.Join(s.dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("opening the run lock %s: %w", path, err)
	}
	// The wait is real time, whatever clock the run uses for its timestamps.
	deadline := time.Now().Add(wait)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("taking the run lock %s: %w", path, err)
		}
		if err := ctx.Err(); err != nil {
			f.Close()
			return nil, fmt.Errorf("waiting for the run lock %s: %w", path, err)
		}
		if !time.Now().Before(deadline) {
			holder, _ := os.ReadFile(path)
			f.Close()
			return nil, fmt.Errorf("%w (%s; lock %s)", ErrBusy, strings.TrimSpace(string(holder)), path)
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "run %s, pid %d, started %s\n", runID, os.Getpid(), now().UTC().Format(time.RFC3339))
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// put writes a batch atomically (temporary file, fsync, rename).
func (s *spool) put(b schema.Batch) error {
	name := safe(b.Run.RunID) + "." + safe(b.Run.Provider) + ".json"
	tmp, err := os.CreateTemp(s.dir, ".tmp-"+name)
	if err != nil {
		return fmt.Errorf("spooling %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	if err := json.NewEncoder(tmp).Encode(b); err != nil {
		tmp.Close()
		return fmt.Errorf("spooling %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("spooling %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("spooling %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(s.dir, name)); err != nil {
		return fmt.Errorf("spooling %s: %w", name, err)
	}
	return nil
}

// list returns the spooled batch files, oldest run first.
func (s *spool) list() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

func (s *spool) get(name string) (schema.Batch, error) {
	var b schema.Batch
	data, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		return b, err
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return b, fmt.Errorf("reading spooled batch %s: %w", name, err)
	}
	if b.Run.RunID == "" || b.Run.Provider == "" {
		return b, fmt.Errorf("reading spooled batch %s: no run id or provider", name)
	}
	return b, nil
}

func (s *spool) remove(name string) error { return os.Remove(filepath.Join(s.dir, name)) }

// safe keeps a name usable as part of a file name.
func safe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}
