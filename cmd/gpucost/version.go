package main

import (
	"context"
	"fmt"
	"runtime"
)

func runVersion(_ context.Context, e env, args []string) int {
	fs := newFlags("version", "", "Print the gpucost version and the Go it was built with.")
	if code := fs.parse(e, args); code >= 0 {
		return code
	}
	fmt.Fprintf(e.stdout, "gpucost %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
