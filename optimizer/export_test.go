package optimizer

// IndexMarket builds the market index a plan of in would search, and nothing else, so
// benchmarks can time it apart from the search. It returns the number of classes.
func IndexMarket(in Input, opts Options) int {
	m := buildMarket(in.Offers, in.Now.UTC(), &opts, currentKeysNeeded(in.Workloads), opts.AllowCommitments || in.Workloads.commits())
	return len(m.classes)
}
