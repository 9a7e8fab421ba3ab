package main

import (
	"io"
	"log/slog"
	"math"
	"strings"

	"github.com/gpucost/gpucost/config"
)

// newLogger returns the logger of every command, the one it hands to the packages it calls: on
// w (stderr), at the level and in the format of the log section, a duration written in seconds
// under its key + "_seconds" (duration=1.5s becomes duration_seconds=1.5), in both formats.
func newLogger(w io.Writer, c config.LogConfig) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.SlogLevel(), ReplaceAttr: durationInSeconds}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// durationInSeconds rewrites a duration attribute as seconds, to the millisecond: slog's JSON
// handler would write integer nanoseconds and its text handler Go's 1m2.5s, neither of which a
// log query sums.
func durationInSeconds(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	key := a.Key
	if !strings.HasSuffix(key, "_seconds") {
		key += "_seconds"
	}
	return slog.Float64(key, math.Round(a.Value.Duration().Seconds()*1000)/1000)
}
