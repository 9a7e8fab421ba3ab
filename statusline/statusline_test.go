package statusline_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpucost/gpucost/statusline"
)

// flushing is a writer that holds back a line without its end until flushed, as redact.Writer
// does.
type flushing struct {
	held, out bytes.Buffer
}

func (f *flushing) Write(p []byte) (int, error) {
	f.held.Write(p)
	if i := bytes.LastIndexByte(f.held.Bytes(), '\n'); i >= 0 {
		f.out.Write(f.held.Next(i + 1))
	}
	return len(p), nil
}

func (f *flushing) Flush() error {
	_, err := f.held.WriteTo(&f.out)
	return err
}

// screen replays what a terminal was sent: \r returns to the start of the line, ESC[K erases
// it, \n ends it.
func screen(sent string) []string {
	lines := [][]byte{nil}
	for i := 0; i < len(sent); i++ {
		last := len(lines) - 1
		switch {
		case strings.HasPrefix(sent[i:], "\x1b[K"):
			lines[last] = nil
			i += 2
		case sent[i] == '\r':
			// The erase that follows empties the line; a bare \r would let text overwrite it.
		case sent[i] == '\n':
			lines = append(lines, nil)
		default:
			lines[last] = append(lines[last], sent[i])
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(l)
	}
	return out
}

func TestLogLinesGoAboveTheStatus(t *testing.T) {
	var term flushing
	l := statusline.New(&term, 30)
	l.Set("fetching: 1 of 3 done")
	if got := term.out.String(); !strings.HasSuffix(got, "fetching: 1 of 3 done") {
		t.Fatalf("the status is held back by a line-buffering writer: %q", got)
	}
	if _, err := l.Write([]byte("level=WARN msg=slow\n")); err != nil {
		t.Fatal(err)
	}
	l.Set("fetching: 2 of 3 done, and a status longer than the line")
	got := screen(term.out.String())
	want := []string{"level=WARN msg=slow", "fetching: 2 of 3 done, and a…"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the terminal shows %q, want %q", got, want)
	}
	l.Clear()
	if _, err := l.Write([]byte("summary\n")); err != nil {
		t.Fatal(err)
	}
	got = screen(term.out.String())
	want = []string{"level=WARN msg=slow", "summary", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("after Clear the terminal shows %q, want %q", got, want)
	}
}

func TestStatusTextIsCleaned(t *testing.T) {
	var term flushing
	statusline.New(&term, 79).Set("vast\x1b]0;pwned\x07ai\nnext")
	if got := term.out.String(); strings.Count(got, "\x1b") != 1 || strings.Contains(got, "\n") || strings.Contains(got, "\x07") {
		t.Errorf("a status with control characters reached the terminal as %q", got)
	}
}
