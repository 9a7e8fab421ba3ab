package export

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/textcell"
)

// The GPU catalog's writers live here, not in package gpus: gpus is the catalog and its rules,
// which every package reads (scrapers, optimizer, pipeline) and which imports at most schema;
// putting its table, CSV and Markdown in it would make the catalog depend on textcell and on
// how one command prints it. This package renders data in every format, so one place decides
// how a table is cut, a CSV cell escaped and a JSON document indented, for the catalog as for
// prices. docs/gpus.md's catalog table is what GPUs writes as Markdown (gpus_test.go).

// GPUs writes the catalog's models as a terminal table, CSV or Markdown (the tables of
// docs/gpus.md: the catalog, then the purchase prices). CSV carries every field, the source
// included, what the software rules make of the model (the serving engines that run on it and
// whether FlashAttention-2 does) and its purchase price where the catalog has one; in JSON the
// models are the Listings in an Envelope of GPUsSchema.
func GPUs(w io.Writer, f Format, models []gpus.Model) error {
	switch f {
	case Table:
		return gpuTable(w, models)
	case CSV:
		return gpuCSV(w, models)
	case Markdown:
		return gpuMarkdown(w, models)
	}
	return unsupported("the GPU catalog", f)
}

// tflops formats a dense rate: "-" where the GPU has no path for the precision.
func tflops(x float64) string {
	if x == 0 {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// fabric names a model's GPU-to-GPU fabric and its domain, briefly: "nvswitch×8", "bridge×2",
// "cube_mesh×8", "inf_fabric×8", "none".
func fabric(m gpus.Model) string {
	name := map[gpus.Topology]string{gpus.TopologyHybridCubeMesh: "cube_mesh", gpus.TopologyInfinityFabric: "inf_fabric"}[m.Topology]
	if name == "" {
		name = string(m.Topology)
	}
	if !m.Linkable() {
		return name
	}
	return fmt.Sprintf("%s×%d", name, m.NVLinkDomain)
}

func gpuTable(w io.Writer, models []gpus.Model) error {
	tb := textcell.NewTable(w, textcell.NameWidth)
	tb.Row("MODEL", "CC", "VRAM", "GB/S", "FP16", "BF16", "FP8", "INT8", "FP4", "FABRIC", "TDP")
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	// Rates of 100 TFLOPS or more are whole here (1307.4 is 1307), so that the table stays within
	// a 100-column terminal; JSON, CSV and Markdown carry every figure as the catalog has it.
	rate := func(x float64) string {
		if x >= 100 {
			x = math.Round(x)
		}
		return tflops(x)
	}
	for _, m := range models {
		t := m.TFLOPS
		tb.Row(m.Name, m.CapabilityString(), g(m.VRAMGB), g(m.MemBandwidthGBps),
			rate(t.FP16), rate(t.BF16), rate(t.FP8), rate(t.INT8), rate(t.FP4), fabric(m), strconv.Itoa(m.TDPWatts))
	}
	if err := tb.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nCC: compute capability or AMD target. VRAM GB per GPU. Dense tensor TFLOPS (INT8: TOPS);\n"+
		"-: no hardware path. FABRIC: GPU link × GPUs one domain joins. TDP in W. Sources: --output json.\n"+
		"Purchase prices (USD per GPU, new or used, sourced and dated): --output json or csv.")
	return err
}

// GPUListing is a catalog model with what the software rules make of it and its purchase
// price (nil where the catalog has none): an item of the catalog in JSON.
type GPUListing struct {
	gpus.Model
	Engines         []gpus.Engine  `json:"engines"` // the serving engines that support the GPU
	FlashAttention2 bool           `json:"flash_attention_2"`
	Purchase        *gpus.Purchase `json:"purchase"`
}

// Listings returns the models as catalog items, in their order.
func Listings(models []gpus.Model) []GPUListing {
	out := make([]GPUListing, len(models))
	for i, m := range models {
		out[i] = GPUListing{Model: m, Engines: []gpus.Engine{}, FlashAttention2: m.FlashAttention2()}
		if p, ok := gpus.PurchaseOf(m.Name); ok {
			out[i].Purchase = &p
		}
		for _, e := range gpus.Engines {
			if m.Runs(e) == nil {
				out[i].Engines = append(out[i].Engines, e)
			}
		}
	}
	return out
}

// gpuColumns are the catalog's CSV columns: the JSON's fields flattened (dense_tflops.fp16 is
// fp16_tflops, purchase.low_usd purchase_low_usd; capability is the compute capability or the
// AMD gfx target). The purchase columns are empty where the catalog has no price; grade and
// source, last, are the catalog row's.
var gpuColumns = []string{"name", "family", "vendor", "arch", "capability", "form_factor", "vram_gb", "mem_bandwidth_gbps",
	"fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops", "fp8_tflops", "int8_tops", "fp4_tflops",
	"topology", "nvlink_domain", "board_fabric", "pcie_peer_to_peer", "host_cpu", "tdp_watts", "engines", "flash_attention_2",
	"purchase_low_usd", "purchase_high_usd", "purchase_condition", "purchase_seen", "purchase_grade", "purchase_source",
	"purchase_residual", "purchase_residual_grade", "grade", "source"}

func gpuRow(l GPUListing) []string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	m, t := l.Model, l.TFLOPS
	engines := make([]string, len(l.Engines))
	for i, e := range l.Engines {
		engines[i] = string(e)
	}
	purchase := make([]string, 8)
	if p := l.Purchase; p != nil {
		purchase = []string{p.LowUSD.String(), p.HighUSD.String(), string(p.Condition), p.Seen, string(p.Grade), p.Source,
			f(p.Residual), string(p.ResidualGrade)}
	}
	row := []string{m.Name, m.Family, string(m.Vendor), m.Arch, m.CapabilityString(), string(m.FormFactor), f(m.VRAMGB), f(m.MemBandwidthGBps),
		f(t.FP32), f(t.TF32), f(t.FP16), f(t.BF16), f(t.FP8), f(t.INT8), f(t.FP4),
		string(m.Topology), strconv.Itoa(m.NVLinkDomain), strconv.FormatBool(m.BoardFabric), strconv.FormatBool(m.PeerToPeer),
		string(m.HostCPU), strconv.Itoa(m.TDPWatts), strings.Join(engines, ";"), strconv.FormatBool(l.FlashAttention2)}
	return append(append(row, purchase...), string(m.Grade), m.Source)
}

func gpuCSV(w io.Writer, models []gpus.Model) error {
	cw := textcell.NewCSVWriter(w)
	if err := cw.Write(gpuColumns); err != nil {
		return err
	}
	for _, l := range Listings(models) {
		if err := cw.Write(gpuRow(l)); err != nil {
			return err
		}
	}
	return cw.Flush()
}

// gpuMarkdown writes the catalog table of docs/gpus.md §3.2, then, after a blank line, the
// purchase price table of §3.3.
func gpuMarkdown(w io.Writer, models []gpus.Model) error {
	if err := catalogMarkdown(w, models); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return purchaseMarkdown(w, models)
}

// markdownTable writes a Markdown table of head and rows.
func markdownTable(w io.Writer, head []string, rows [][]string) error {
	var b strings.Builder
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for range head {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, cells := range rows {
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// purchaseMarkdown writes the purchase prices of the models the catalog has one for: the
// range per GPU in dollars, new or used, when and where it was seen and how well it is
// sourced, and the residual share assumed after the write-off.
func purchaseMarkdown(w io.Writer, models []gpus.Model) error {
	head := []string{"model", "condition", "low USD", "high USD", "seen", "grade", "residual", "residual grade", "source"}
	var rows [][]string
	for _, m := range models {
		p, ok := gpus.PurchaseOf(m.Name)
		if !ok {
			continue
		}
		rows = append(rows, []string{m.Name, string(p.Condition), money.Thousands(p.LowUSD.String()), money.Thousands(p.HighUSD.String()),
			p.Seen, string(p.Grade), strconv.FormatFloat(math.Round(p.Residual*100), 'f', -1, 64) + "%", string(p.ResidualGrade), p.Source})
	}
	return markdownTable(w, head, rows)
}

// catalogMarkdown writes the catalog table of docs/gpus.md §3.2.
func catalogMarkdown(w io.Writer, models []gpus.Model) error {
	head := []string{"model", "arch", "cc", "VRAM GB", "GB/s", "FP32", "TF32", "FP16", "BF16", "FP8", "INT8", "FP4", "fabric", "P2P", "host", "TDP W", "grade", "source"}
	var rows [][]string
	for _, m := range models {
		t := m.TFLOPS
		host := string(m.HostCPU)
		if m.HostCPU == gpus.AnyHost {
			host = "any"
		}
		p2p := "yes"
		if !m.PeerToPeer {
			p2p = "no"
		}
		cells := []string{m.Name, m.Arch, m.CapabilityString(), strconv.FormatFloat(m.VRAMGB, 'f', -1, 64), strconv.FormatFloat(m.MemBandwidthGBps, 'f', -1, 64),
			tflops(t.FP32), tflops(t.TF32), tflops(t.FP16), tflops(t.BF16), tflops(t.FP8), tflops(t.INT8), tflops(t.FP4),
			fabric(m), p2p, host, strconv.Itoa(m.TDPWatts), string(m.Grade), m.Source}
		rows = append(rows, cells)
	}
	return markdownTable(w, head, rows)
}
