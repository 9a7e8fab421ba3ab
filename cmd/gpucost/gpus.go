package main

import (
	"context"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/gpus"
)

const gpusHelp = `List the GPU catalog: every model the optimizer plans with, by canonical name, with what
decides the work it does: architecture and compute capability (or AMD gfx target), VRAM and
memory bandwidth, dense tensor TFLOPS per precision (0 where the GPU has no hardware path for
it; GeForce FP16/BF16 with FP32 accumulate), the GPU-to-GPU fabric it supports and how many GPUs
one such domain joins, PCIe peer-to-peer, host CPU, TDP, and how well the figures are sourced.
docs/gpus.md explains the figures, their sources and the software rules built on them.

--output json and csv carry every field, the source included, what the software rules make of
it (the serving engines that run on the GPU and whether FlashAttention-2 does) and, where the
catalog has one, its purchase price: a range in USD per GPU, new or used, when and where it was
seen, how well it is sourced, and the residual share assumed after a write-off (gpucost tco
weighs it against renting). markdown is the two tables of docs/gpus.md: the catalog and the
purchase prices.`

func runGPUs(_ context.Context, e env, args []string) error {
	fs := newFlags("gpus", "[--output table|json|csv|markdown]", gpusHelp)
	output := fs.String("output", "table", "table, json, csv or markdown")
	if err := fs.parse(e, args, 0); err != nil {
		return err
	}
	switch *output {
	case "table", "json", "csv", "markdown":
		return export.GPUs(e.stdout, export.Format(*output), gpus.Models())
	}
	return badUsage("--output %q: want table, json, csv or markdown", *output)
}
