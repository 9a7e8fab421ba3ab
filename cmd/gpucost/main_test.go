package main

import "context"

// runCommand runs one subcommand as gpucost does: its error printed on e.stderr, its exit code
// returned.
func runCommand(name string, ctx context.Context, e env, args []string) int {
	return run(ctx, e, append([]string{name}, args...))
}
