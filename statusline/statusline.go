// Package statusline keeps one line of status at the bottom of a terminal, such as the progress
// of a long fetch, while other output (log lines) goes on above it: a Line is an io.Writer that
// takes the status away, writes, and draws the status again. It draws with a carriage return
// and the erase-line sequence, so it is for terminals only; what decides that a writer is one
// (golang.org/x/term) is the caller's.
package statusline

import (
	"io"
	"sync"

	"github.com/gpucost/gpucost/textcell"
)

// erase returns the cursor to the start of the line and erases the line.
const erase = "\r\x1b[K"

// flusher is a writer that holds back a line without its end (a redact.Writer) until flushed.
type flusher interface{ Flush() error }

// Line is a status line on a terminal. Its methods may be called from several goroutines.
type Line struct {
	mu     sync.Mutex
	w      io.Writer
	width  int
	status string
}

// New returns a Line drawn on w, each status cut to width characters, its ellipsis included
// (one terminal line: a longer one would wrap, and the erase would only take its last line
// away).
func New(w io.Writer, width int) *Line {
	return &Line{w: w, width: width}
}

// Set shows status in place of the one shown; control characters become spaces.
func (l *Line) Set(status string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.status = textcell.Clean(status, max(l.width-1, 1))
	l.draw(erase + l.status)
}

// Clear takes the status line away; the next output starts at the start of its line.
func (l *Line) Clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.status != "" {
		l.draw(erase)
	}
	l.status = ""
}

// Write writes p above the status line: p should end its lines (a log record does).
func (l *Line) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.status == "" {
		return l.w.Write(p)
	}
	if _, err := io.WriteString(l.w, erase); err != nil {
		return 0, err
	}
	n, err := l.w.Write(p)
	if err != nil {
		return n, err
	}
	l.draw(l.status)
	return n, nil
}

// draw writes s, a status line without its end, and pushes it through a writer that would
// hold it back. A terminal that fails to take it loses the status, nothing else: Write reports
// its own errors.
func (l *Line) draw(s string) {
	if _, err := io.WriteString(l.w, s); err != nil {
		return
	}
	if f, ok := l.w.(flusher); ok {
		_ = f.Flush()
	}
}
