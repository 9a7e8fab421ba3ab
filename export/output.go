package export

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Output is where an export goes: standard output, or a file that appears whole or not at all.
// Write to it, then Commit; Close (deferred) discards a file that was not committed.
type Output struct {
	w    *bufio.Writer
	file *os.File // the temporary file; nil for standard output
	path string
	done bool
}

// Create returns the Output path names: stdout, buffered, for "-" (the CLI's --out for
// standard output); else a temporary file beside path that Commit renames into place, so a
// failed export never leaves half a file, nor replaces a good one.
func Create(path string, stdout io.Writer) (*Output, error) {
	if path == "-" {
		return &Output{w: bufio.NewWriter(stdout)}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".gpucost-export-*")
	if err != nil {
		return nil, fmt.Errorf("creating the output file: %w", err)
	}
	return &Output{w: bufio.NewWriterSize(f, 1<<20), file: f, path: path}, nil
}

// Write writes p to the buffer of the output.
func (o *Output) Write(p []byte) (int, error) { return o.w.Write(p) }

// Commit writes what is buffered and, for a file, renames it into place.
func (o *Output) Commit() error {
	o.done = true
	err := o.w.Flush()
	if o.file == nil {
		return err
	}
	if cerr := o.file.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(o.file.Name(), o.path)
	}
	if err != nil {
		os.Remove(o.file.Name())
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	return nil
}

// Close ends an output that was not committed: standard output gets what is buffered, a file
// is removed. After Commit it does nothing.
func (o *Output) Close() error {
	if o.done {
		return nil
	}
	o.done = true
	if o.file == nil {
		return o.w.Flush()
	}
	o.file.Close()
	return os.Remove(o.file.Name())
}
