package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/schema"
)

// ErrBusy means another run holds the lock of the spool folder.
var ErrBusy = errors.New("another scrape run is in progress")

// The spool is a write-ahead log of batches: every batch is written to it, durably, before it is
// loaded, and removed once the sink has stored all of it, so a batch whose load was cut off at
// any point (the process killed, the machine down, the store failing) is still there, with its
// run id and timestamps, and the next run loads it again first. The sink completes what such a
// load left (it inserts only missing rows), so nothing is lost and nothing doubled.
//
// Layout of the folder:
//
//	<run id>.<provider>.json           a batch waiting to be loaded (the listing sorts oldest first;
//	                                   its layout is in batchfile.go)
//	<run id>.<provider>.json.failures  one line per failed load of it: time and error
//	quarantine/                        batches that will not load, with their .failures files
//	scrape.lock                        the run lock
//
// A batch that failed to load MaxLoadAttempts times, or that the sink refuses as such
// (schema.ErrRejected), or whose file cannot be read, is moved to quarantine/ so that it never
// stands in the way of the others; an operator reads its .failures and moves it back (to load it
// again) or keeps it for the record (docs/operations.md).
type spool struct {
	dir string
}

// quarantineDir is the spool's subfolder of batches that will not load.
const quarantineDir = "quarantine"

// failuresSuffix names a batch's file of failed loads.
const failuresSuffix = ".failures"

var (
	// errSpooledBefore: a batch of the same run and provider waits in the spool already.
	errSpooledBefore = errors.New("a batch of this run and provider waits in the spool already")
	// errQuarantinedBefore: a batch of the same run and provider is in quarantine.
	errQuarantinedBefore = errors.New("a batch of this run and provider is in quarantine")
	// errNotABatch: a spool file that is not a batch (cut short, edited by hand); reading it
	// again gives the same.
	errNotABatch = errors.New("not a batch")
)

const lockFile = "scrape.lock"

// tmpPrefix starts the name of a batch file being written.
const tmpPrefix = ".tmp-"

func openSpool(dir string) (*spool, error) {
	if err := os.MkdirAll(filepath.Join(dir, quarantineDir), 0o750); err != nil {
		return nil, fmt.Errorf("creating the spool folder %s: %w", dir, err)
	}
	return &spool{dir: dir}, nil
}

// Lock takes the run lock of the spool folder dir for work other than a scrape that no scrape
// may overlap (gpucost reparse), waiting up to wait for a run to finish: ErrBusy when none does.
// holder names the work in the lock file, for the message a scrape waiting on it prints.
func Lock(ctx context.Context, dir string, wait time.Duration, holder string) (unlock func(), err error) {
	sp, err := openSpool(dir)
	if err != nil {
		return nil, err
	}
	return sp.lock(ctx, wait, holder, time.Now)
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
			holder := lockHolder(path)
			f.Close()
			return nil, fmt.Errorf("%w (%s; lock %s)", ErrBusy, holder, path)
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
	// A run killed while it wrote a batch leaves the temporary file (batchWriter); with the lock held,
	// no one is writing one.
	if tmps, err := filepath.Glob(filepath.Join(s.dir, tmpPrefix+"*")); err == nil {
		for _, t := range tmps {
			_ = os.Remove(t)
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// lockHolder reads who holds the run lock. The holder writes its line just after it took the
// lock, so an empty file is read again for a moment.
func lockHolder(path string) string {
	for range 20 {
		if b, _ := os.ReadFile(path); len(bytes.TrimSpace(b)) > 0 {
			return string(bytes.TrimSpace(b))
		}
		time.Sleep(25 * time.Millisecond)
	}
	return "its holder has not said who it is"
}

// taken reports whether the spool or its quarantine holds a batch file of this name already
// (errSpooledBefore, errQuarantinedBefore): that batch, with its own timestamps, is the one the
// sink compares with what is stored, and loading a second copy of it with other timestamps (a
// recording replayed again) would double what the first stored.
func (s *spool) taken(name string) error {
	if _, err := os.Stat(filepath.Join(s.dir, name)); err == nil {
		return errSpooledBefore
	}
	if _, err := os.Stat(filepath.Join(s.dir, quarantineDir, name)); err == nil {
		return fmt.Errorf("%w (%s)", errQuarantinedBefore, filepath.Join(s.dir, quarantineDir, name))
	}
	return nil
}

// parts reads the offers and payloads of a spooled batch file, red scrubbing each part as it is
// read (fileParts).
func (s *spool) parts(name string, run schema.ScrapeRun, red *redact.Redactor) fileParts {
	return fileParts{path: filepath.Join(s.dir, name), skipOffers: run.Status == schema.RunFailed, red: red}
}

// syncDir makes the names in a folder durable (a rename survives a power cut).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// list returns the batch files of the spool (or of its quarantine), oldest run first.
func (s *spool) list() ([]string, error) { return batchFiles(s.dir) }

func (s *spool) quarantined() ([]string, error) {
	return batchFiles(filepath.Join(s.dir, quarantineDir))
}

func batchFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
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

// get reads a spooled batch: its run-log row, and the rest as Parts read from the file, scrubbed
// by red as they are read. The offers of a failed run are left out.
func (s *spool) get(name string, red *redact.Redactor) (schema.Batch, error) {
	path := filepath.Join(s.dir, name)
	b, parts, err := readBatch(path)
	if err != nil {
		return b, fmt.Errorf("reading spooled batch %s: %w", path, err)
	}
	if b.Run.RunID == "" || b.Run.Provider == "" {
		return b, fmt.Errorf("reading spooled batch %s: %w: no run id or provider", path, errNotABatch)
	}
	if b.Run.Status == schema.RunFailed {
		b.Offers = nil
	}
	if parts {
		b.Parts = s.parts(name, b.Run, red)
	}
	return b, nil
}

// remove deletes a loaded batch and its failures. Its removal need not be durable: a batch
// loaded again is found stored whole.
func (s *spool) remove(name string) error {
	_ = os.Remove(filepath.Join(s.dir, name+failuresSuffix))
	return os.Remove(filepath.Join(s.dir, name))
}

// fail records a failed load of a spooled batch and returns how many it has had.
func (s *spool) fail(name string, at time.Time, reason error) (int, error) {
	path := filepath.Join(s.dir, name+failuresSuffix)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return 0, fmt.Errorf("recording a failed load of %s: %w", name, err)
	}
	_, err = fmt.Fprintf(f, "%s %s\n", at.UTC().Format(time.RFC3339), strings.Join(strings.Fields(reason.Error()), " "))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("recording a failed load of %s: %w", name, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("recording a failed load of %s: %w", name, err)
	}
	return strings.Count(string(data), "\n"), nil
}

// quarantine moves a batch and its failures into the quarantine folder, and returns the batch's
// path there.
func (s *spool) quarantine(name string) (string, error) {
	dst := filepath.Join(s.dir, quarantineDir)
	if err := os.Rename(filepath.Join(s.dir, name+failuresSuffix), filepath.Join(dst, name+failuresSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("moving %s to quarantine: %w", name, err)
	}
	if err := os.Rename(filepath.Join(s.dir, name), filepath.Join(dst, name)); err != nil {
		return "", fmt.Errorf("moving %s to quarantine: %w", name, err)
	}
	if err := syncDir(dst); err != nil {
		return "", fmt.Errorf("moving %s to quarantine: %w", name, err)
	}
	return filepath.Join(dst, name), nil
}

// fileName is the name of the batch file of one run and provider.
func fileName(runID, provider string) string {
	return safe(runID) + "." + safe(provider) + ".json"
}

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
