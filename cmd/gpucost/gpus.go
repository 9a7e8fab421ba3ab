package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
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
purchase prices. json is the envelope /api/v1/gpus answers (gpucost.gpus/v1).

--value reads the store instead, the latest offers as gpucost offers does (seen within
--max-age, or imported with a valid_until still ahead), and ranks the catalog's GPU models by
what a dollar buys at today's cheapest price of --price-type: $ per dense TFLOP-hour at
--precision, the cheapest offer's $/GPU-hour divided by the catalog's dense rate (TOPS for
int8; datasheets headline 2:4-sparse figures, twice these). A GPU without a hardware path for
the precision is ranked at the rate such work runs at on it (bf16 or fp8 work at fp16 on a
V100, tf32 at fp32), and the table says so. $/TB/S-H is the same price per TB/s of memory
bandwidth per hour: decode-bound inference reads every weight once per generated token, so it
pays for bandwidth more than for TFLOPS. --price-type commitment takes each model's cheapest
reserved or term price, whatever its term (the PRICE TYPE column names it). JSON and CSV carry
every figure (each precision, empty where the GPU has no path for it) exact to 8 decimals, and
the offer each comes from; docs/analysts.md describes them. json is the envelope /api/v1/value
answers (gpucost.value/v2), its query the price type, precision and --max-age as understood. Provider names and regions are
untrusted: the table and CSV clean them as gpucost offers does.`

// valueFlags are the flags only --value reads.
var valueFlags = []string{"price-type", "precision", "max-age"}

func gpusCommand(e env) *cobra.Command {
	var (
		cf     configFlag
		output string
		value  bool
		req    selection.Request
	)
	cmd := &cobra.Command{
		Use:   "gpus [--output table|json|csv|markdown] | --value [--price-type TYPE] [--precision P] [--output table|json|csv]",
		Short: "list the GPU catalog: throughput, memory, fabric, engines; --value: $ per TFLOP-hour now",
		Long:  gpusHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if value {
				return runValue(cmd.Context(), e, &cf, req, output)
			}
			for _, name := range valueFlags {
				if cmd.Flags().Changed(name) {
					return badUsage("--%s is a flag of --value", name)
				}
			}
			if err := checkOutput(output, "table", "json", "csv", "markdown"); err != nil {
				return err
			}
			if output == "json" {
				return export.WriteJSON(e.stdout, export.Envelope[export.GPUListing]{Schema: export.GPUsSchema, Query: struct{}{}, Items: export.Listings(gpus.Models())})
			}
			return export.GPUs(e.stdout, export.Format(output), gpus.Models())
		},
	}
	cf.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&output, "output", "table", "table, json, csv or markdown (markdown: the catalog only)")
	completeFlag(cmd, "output", "table", "json", "csv", "markdown")
	fl.BoolVar(&value, "value", false, "rank the GPU models of the latest market by $ per dense TFLOP-hour (reads the store)")
	fl.StringVar(&req.PriceType, "price-type", string(schema.OnDemand), "with --value, the price: "+schema.List(market.Bases)+" (commitment: the cheapest reserved or term price)")
	completeFlag(cmd, "price-type", names(market.Bases)...)
	fl.StringVar(&req.Precision, "precision", string(gpus.BF16), "with --value, rank at this precision: "+schema.List(market.RatedPrecisions))
	completeFlag(cmd, "precision", names(market.RatedPrecisions)...)
	fl.StringVar(&req.MaxAge, "max-age", "6h", "with --value, drop offers not seen for this long, unless their valid_until is ahead (0 keeps all)")
	return cmd
}

// runValue is gpus --value: the value figures of the latest market.
func runValue(ctx context.Context, e env, cf *configFlag, req selection.Request, output string) error {
	if err := checkOutput(output, "table", "json", "csv"); err != nil {
		return err
	}
	f, q, err := req.Value(selection.Bounds{})
	if err != nil {
		return err
	}
	s, err := cf.openStore(ctx, e)
	if err != nil {
		return err
	}
	defer s.Close()
	models, err := s.LatestPerGPU(ctx, f)
	if err != nil {
		return err
	}
	values := market.Values(models, q)
	if len(values) == 0 {
		fmt.Fprintf(e.stderr, "gpucost gpus: no offer of a catalog GPU at %s in the market (--max-age %s)\n", q.Basis, req.MaxAge)
	}
	if output == "json" {
		return export.WriteJSON(e.stdout, export.Envelope[market.Value]{Schema: export.ValueSchema, Query: export.NewValueQuery(f, q), Items: values})
	}
	return export.Values(e.stdout, export.Format(output), q.Precision, values)
}
