package main

import (
	"context"
	"fmt"
	"runtime"
)

func runVersion(_ context.Context, e env, args []string) error {
	fs := newFlags("version", "", "Print the gpucost version and the Go it was built with.")
	if err := fs.parse(e, args, 0); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "gpucost %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
