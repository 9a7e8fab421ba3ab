package scrapers_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

func TestParseLambdaGolden(t *testing.T) {
	for _, name := range []string{"lambda_instance_types", "lambda_instance_types_traps"} {
		t.Run(name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseLambda(readTestdata(t, name+".json"), runAug22, scrapers.DefaultLambdaAPIURL)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name, offers, problems)
		})
	}
}

func TestParseLambdaPageGolden(t *testing.T) {
	offers, problems, err := scrapers.ParseLambdaPage(readTestdata(t, "lambda_pricing.html"), runAug22, scrapers.DefaultLambdaPageURL)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "lambda_pricing", offers, problems)
}

// lambdaWant is the part of an offer the trap tests pin by hand, next to the golden files.
type lambdaWant struct {
	model    string
	count    uint16
	vram     float64
	perHour  string
	perGPU   string
	intra    schema.IntraNode
	stock    schema.Stock
	flags    []schema.DQFlag
	rawName  string
	ramGB    float64
	priceTyp schema.PriceType
}

func lambdaGot(o schema.Offer) lambdaWant {
	w := lambdaWant{
		model: o.GPUModel, count: o.GPUCount, vram: o.VRAMGB,
		perHour: o.PriceUSDPerHour.String(), perGPU: o.PriceUSDPerGPUHour.String(),
		intra: o.IntraNode, stock: o.Stock, flags: o.DQFlags, rawName: o.GPUNameRaw, priceTyp: o.PriceType,
	}
	if o.RAMGB != nil {
		w.ramGB = *o.RAMGB
	}
	return w
}

func TestParseLambdaTraps(t *testing.T) {
	byID := func(t *testing.T, file string) map[string]schema.Offer {
		t.Helper()
		offers, _, err := scrapers.ParseLambda(readTestdata(t, file), runAug22, "https://example.test/api/v1/instance-types")
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]schema.Offer{}
		for _, o := range offers {
			m[o.OfferID] = o
		}
		return m
	}
	main := byID(t, "lambda_instance_types.json")
	traps := byID(t, "lambda_instance_types_traps.json")
	tests := []struct {
		name  string
		offer schema.Offer
		want  lambdaWant
	}{
		{"cents per instance to dollars per GPU (2392/100/8)", main["gpu_8x_h100_sxm5/us-east-1"], lambdaWant{
			model: "H100-SXM-80GB", count: 8, vram: 80, perHour: "23.92", perGPU: "2.99",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, rawName: "H100 (80 GB SXM5)", ramGB: 1932.74, priceTyp: schema.OnDemand}},
		{"H100 PCIe is not SXM; no capacity keeps the offer with stock none", main["gpu_1x_h100_pcie"], lambdaWant{
			model: "H100-PCIE-80GB", count: 1, vram: 80, perHour: "2.49", perGPU: "2.49",
			intra: schema.IntraPCIe, stock: schema.StockNone, rawName: "H100 (80 GB PCIe)", ramGB: 214.75, priceTyp: schema.OnDemand}},
		{"A100 80GB SXM4 vs 40GB", main["gpu_8x_a100_80gb_sxm4"], lambdaWant{
			model: "A100-SXM-80GB", count: 8, vram: 80, perHour: "14.32", perGPU: "1.79",
			intra: schema.IntraNVSwitch, stock: schema.StockNone, rawName: "A100 (80 GB SXM4)", ramGB: 1932.74, priceTyp: schema.OnDemand}},
		{"B200 SXM6", main["gpu_8x_b200_sxm6/us-east-1"], lambdaWant{
			model: "B200-SXM-180GB", count: 8, vram: 180, perHour: "39.92", perGPU: "4.99",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, rawName: "B200 (180 GB SXM6)", ramGB: 3113.85, priceTyp: schema.OnDemand}},
		{"Tesla V100 without a form factor stays unknown, kept and flagged", main["gpu_8x_v100"], lambdaWant{
			model: "", count: 8, vram: 16, perHour: "4.4", perGPU: "0.55",
			intra: schema.IntraUnknown, stock: schema.StockNone, flags: []schema.DQFlag{schema.FlagUnknownGPU},
			rawName: "Tesla V100 (16 GB)", ramGB: 481.04, priceTyp: schema.OnDemand}},
		{"1.5.3 record: price as a string, count from the description", traps["gpu_1x_a6000/us-tx-1"], lambdaWant{
			model: "RTX-A6000-48GB", count: 1, vram: 48, perHour: "0.8", perGPU: "0.8",
			intra: schema.IntraPCIe, stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagCountParsed},
			rawName: "A6000 (48 GB)", ramGB: 107.37, priceTyp: schema.OnDemand}},
		{"unknown GPU name kept verbatim with the flag", traps["gpu_8x_example/us-west-1"], lambdaWant{
			model: "", count: 8, vram: 40, perHour: "15.92", perGPU: "1.99",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagUnknownGPU},
			rawName: "Example GPU (40 GB SXM4)", ramGB: 1932.74, priceTyp: schema.OnDemand}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, lambdaGot(tt.offer), cmp.AllowUnexported(lambdaWant{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("offer %q mismatch (-want +got):\n%s", tt.offer.OfferID, diff)
			}
		})
	}
	for id := range traps {
		if strings.HasPrefix(id, "cpu_4x_general") || strings.HasPrefix(id, "gpu_1x_a100_sxm4") {
			t.Errorf("traps: %s should not be an offer", id)
		}
	}
	for id := range main {
		if strings.HasPrefix(id, "cpu_4x_general") {
			t.Errorf("%s should not be an offer", id)
		}
	}
	if len(main) != 18 {
		t.Errorf("main fixture: %d offers, want 18 (14 GPU types: 9 in 13 regions with capacity, 5 without)", len(main))
	}
}

// TestParseLambdaRegions: an instance type is an offer per region with capacity, keyed
// "<type>/<region>" so that the offers do not share a schema.Key, or one offer without a region
// and with stock none when no region has capacity; regions map to continents, never countries.
func TestParseLambdaRegions(t *testing.T) {
	type place struct {
		id        string
		region    string
		stock     schema.Stock
		continent string
	}
	parse := func(t *testing.T, file string) (map[string][]place, []string) {
		t.Helper()
		offers, problems, err := scrapers.ParseLambda(readTestdata(t, file), runAug22, scrapers.DefaultLambdaAPIURL)
		if err != nil {
			t.Fatal(err)
		}
		byType := map[string][]place{}
		keys := map[schema.Key]bool{}
		for _, o := range offers {
			if keys[o.Key()] {
				t.Errorf("two offers with the key %v", o.Key())
			}
			keys[o.Key()] = true
			if o.Country != "" {
				t.Errorf("offer %q: country %q, want none (the API names no country code)", o.OfferID, o.Country)
			}
			typ, _, _ := strings.Cut(o.OfferID, "/")
			byType[typ] = append(byType[typ], place{o.OfferID, o.Region, o.Stock, o.Continent()})
		}
		var ps []string
		for _, p := range problems {
			ps = append(ps, p.Error())
		}
		return byType, ps
	}
	main, mainProblems := parse(t, "lambda_instance_types.json")
	traps, trapProblems := parse(t, "lambda_instance_types_traps.json")
	tests := []struct {
		name   string
		places []place
		want   []place
	}{
		{"three regions, three offers in name order", main["gpu_1x_a100_sxm4"], []place{
			{"gpu_1x_a100_sxm4/asia-northeast-1", "asia-northeast-1", schema.StockUnknown, "asia"},
			{"gpu_1x_a100_sxm4/us-east-1", "us-east-1", schema.StockUnknown, "north-america"},
			{"gpu_1x_a100_sxm4/us-west-1", "us-west-1", schema.StockUnknown, "north-america"},
		}},
		{"one region", main["gpu_1x_rtx6000"], []place{
			{"gpu_1x_rtx6000/europe-central-1", "europe-central-1", schema.StockUnknown, "europe"},
		}},
		{"no capacity: still priced, no region, stock none", main["gpu_8x_a100"], []place{
			{"gpu_8x_a100", "", schema.StockNone, ""},
		}},
		{"1.5.3 example region", traps["gpu_1x_a6000"], []place{
			{"gpu_1x_a6000/us-tx-1", "us-tx-1", schema.StockUnknown, "north-america"},
		}},
		{"a region twice counts once; blank and markup names are left out", traps["gpu_1x_h100_pcie"], []place{
			{"gpu_1x_h100_pcie/us-west-1", "us-west-1", schema.StockUnknown, "north-america"},
		}},
		{"capacity only in a nameless region: no region, stock unknown", traps["gpu_2x_h100_sxm5"], []place{
			{"gpu_2x_h100_sxm5", "", schema.StockUnknown, ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.places, cmp.AllowUnexported(place{})); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if len(mainProblems) != 0 {
		t.Errorf("main fixture problems: %q", mainProblems)
	}
	wantProblems := []string{
		`lambda: instance type "gpu_1x_a100_sxm4": price_cents_per_hour -129 is not positive`,
		`lambda: instance type "gpu_1x_h100_pcie": a region with capacity has no name`,
		`lambda: instance type "gpu_1x_h100_pcie": region "us-west-1\"><script>" is not a region name`,
		`lambda: instance type "gpu_2x_h100_sxm5": a region with capacity has no name`,
	}
	if diff := cmp.Diff(wantProblems, trapProblems); diff != "" {
		t.Errorf("traps problems (-want +got):\n%s", diff)
	}
}

// TestParseLambdaDuplicateOfferID: two instance types under different keys but one name, or a
// name that spells another type's regional offer, would share an offer id: the second is a
// problem, not a second offer under the same key.
func TestParseLambdaDuplicateOfferID(t *testing.T) {
	rec := func(name, region string) string {
		regions := "[]"
		if region != "" {
			regions = `[{"name":"` + region + `","description":""}]`
		}
		return `{"instance_type":{"name":"` + name + `","description":"1x A10 (24 GB PCIe)","gpu_description":"A10 (24 GB PCIe)","price_cents_per_hour":75,"specs":{"gpus":1}},"regions_with_capacity_available":` + regions + `}`
	}
	body := `{"data":{"a":` + rec("gpu_1x_a10", "us-west-1") + `,"b":` + rec("gpu_1x_a10/us-west-1", "") + `}}`
	offers, problems, err := scrapers.ParseLambda([]byte(body), runAug22, scrapers.DefaultLambdaAPIURL)
	if err != nil {
		t.Fatal(err)
	}
	if len(offers) != 1 || offers[0].Region != "us-west-1" {
		t.Errorf("offers %+v, want the one of key a in us-west-1", offers)
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), `offer id "gpu_1x_a10/us-west-1": listed twice`) {
		t.Errorf("problems %v, want the second gpu_1x_a10/us-west-1", problems)
	}
}

func TestParseLambdaPageTraps(t *testing.T) {
	offers, problems, err := scrapers.ParseLambdaPage(readTestdata(t, "lambda_pricing.html"), runAug22, scrapers.DefaultLambdaPageURL)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	byID := map[string]schema.Offer{}
	for _, o := range offers {
		byID[o.OfferID] = o
	}
	// 5 + 3 + 2 + 8 instance rows, one of them unpriced ("—"), and 4 cluster rows; the
	// __islands copies add nothing.
	if len(offers) != 21 {
		t.Errorf("%d offers, want 21", len(offers))
	}
	tests := []struct {
		id   string
		want lambdaWant
	}{
		{"8x NVIDIA B200 SXM6 (180 GB)", lambdaWant{model: "B200-SXM-180GB", count: 8, vram: 180, perHour: "53.52", perGPU: "6.69",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, rawName: "NVIDIA B200 SXM6", ramGB: 3113.85, priceTyp: schema.OnDemand}},
		{"1x NVIDIA B200 SXM6 (180 GB)", lambdaWant{model: "B200-SXM-180GB", count: 1, vram: 180, perHour: "6.99", perGPU: "6.99",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, rawName: "NVIDIA B200 SXM6", ramGB: 388.69, priceTyp: schema.OnDemand}},
		{"8x NVIDIA A100 SXM4 (40 GB)", lambdaWant{model: "A100-SXM-40GB", count: 8, vram: 40, perHour: "10.32", perGPU: "1.29",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, rawName: "NVIDIA A100 SXM4", ramGB: 1932.74, priceTyp: schema.OnDemand}},
		{"1x NVIDIA H100 PCIe (80 GB)", lambdaWant{model: "H100-PCIE-80GB", count: 1, vram: 80, perHour: "2.49", perGPU: "2.49",
			intra: schema.IntraPCIe, stock: schema.StockUnknown, rawName: "NVIDIA H100 PCIe", ramGB: 214.75, priceTyp: schema.OnDemand}},
		{"8x NVIDIA Tesla V100 (16 GB)", lambdaWant{model: "", count: 8, vram: 16, perHour: "4.4", perGPU: "0.55",
			intra: schema.IntraUnknown, stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagUnknownGPU},
			rawName: "NVIDIA Tesla V100", ramGB: 481.04, priceTyp: schema.OnDemand}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			o, ok := byID[tt.id]
			if !ok {
				t.Fatalf("no offer %q", tt.id)
			}
			if diff := cmp.Diff(tt.want, lambdaGot(o), cmp.AllowUnexported(lambdaWant{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if _, ok := byID["4x NVIDIA RTX A6000 (48 GB)"]; ok {
		t.Error("the unpriced 4x A6000 row (—) became an offer")
	}
}

// TestParseLambdaPageClusters pins the 1-Click Cluster offers of the fixture: per GPU-hour
// prices times the smallest cluster (16 GPUs), committed (reserved: neither term is a fixed
// year), NVSwitch inside the HGX nodes and InfiniBand between them, VRAM from the catalog.
func TestParseLambdaPageClusters(t *testing.T) {
	offers, _, err := scrapers.ParseLambdaPage(readTestdata(t, "lambda_pricing.html"), runAug22, scrapers.DefaultLambdaPageURL)
	if err != nil {
		t.Fatal(err)
	}
	type cluster struct {
		id              string
		model           string
		count           uint16
		vram            float64
		perHour, perGPU string
		priceType       schema.PriceType
		intra           schema.IntraNode
		inter           schema.InterNode
		flags           []schema.DQFlag
	}
	var got []cluster
	for _, o := range offers {
		if o.PriceType == schema.OnDemand {
			continue
		}
		if o.VCPUs != nil || o.RAMGB != nil || o.DiskGB != nil || o.Region != "" || o.Stock != schema.StockUnknown || o.ValidUntil != nil {
			t.Errorf("offer %q: host figures, region, stock or valid_until the page does not give: %+v", o.OfferID, o)
		}
		got = append(got, cluster{o.OfferID, o.GPUModel, o.GPUCount, o.VRAMGB, o.PriceUSDPerHour.String(), o.PriceUSDPerGPUHour.String(),
			o.PriceType, o.IntraNode, o.InterNode, o.DQFlags})
	}
	missing := []schema.DQFlag{schema.FlagVRAMMissing}
	want := []cluster{
		{"1-Click Cluster 16x NVIDIA B200 SXM6 (1 week – 3 months)", "B200-SXM-180GB", 16, 180, "79.84", "4.99", schema.Reserved, schema.IntraNVSwitch, schema.InterInfiniBand, missing},
		{"1-Click Cluster 16x NVIDIA B200 SXM6 (3 – 12 months)", "B200-SXM-180GB", 16, 180, "71.84", "4.49", schema.Reserved, schema.IntraNVSwitch, schema.InterInfiniBand, missing},
		{"1-Click Cluster 16x NVIDIA H100 SXM5 (1 week – 3 months)", "H100-SXM-80GB", 16, 80, "43.04", "2.69", schema.Reserved, schema.IntraNVSwitch, schema.InterInfiniBand, missing},
		{"1-Click Cluster 16x NVIDIA H100 SXM5 (3 – 12 months)", "H100-SXM-80GB", 16, 80, "36.64", "2.29", schema.Reserved, schema.IntraNVSwitch, schema.InterInfiniBand, missing},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(cluster{})); diff != "" {
		t.Errorf("cluster offers (-want +got):\n%s", diff)
	}
}

// TestParseLambdaPageClusterRows edits the fixture's cluster rows: the duration decides the
// price type (a fixed year or three is a term, anything else reserved, nothing on-demand), the
// count's lower bound the size, and a row that cannot be read is a problem that leaves the
// instance offers alone.
func TestParseLambdaPageClusterRows(t *testing.T) {
	page := string(readTestdata(t, "lambda_pricing.html"))
	const (
		b200Week = "1-Click Cluster 16x NVIDIA B200 SXM6 (1 week – 3 months)"
		b200Long = "1-Click Cluster 16x NVIDIA B200 SXM6 (3 – 12 months)"
	)
	// The B200 table's second row, as the fixture has it, with its duration, count and price.
	b200Row := func(duration, count, price string) string {
		return mustReplace(page,
			`<td data-label="DURATION">3 – 12 months</td><td data-label="GPU COUNT">16 – 2048</td><td data-label="PRICE/GPU/HR*">$4.49</td>`,
			`<td data-label="DURATION">`+duration+`</td><td data-label="GPU COUNT">`+count+`</td><td data-label="PRICE/GPU/HR*">`+price+`</td>`)
	}
	tests := []struct {
		name    string
		body    string
		want    map[string]schema.PriceType // offers that must be there, with their price types
		absent  []string
		offers  int    // all offers
		problem string // in the one problem; "" for none
	}{
		{"one year is term_1y", b200Row("1 year", "16 – 2048", "$3.99"),
			map[string]schema.PriceType{"1-Click Cluster 16x NVIDIA B200 SXM6 (1 year)": schema.Term1Y, b200Week: schema.Reserved}, []string{b200Long}, 21, ""},
		{"12 months is term_1y", b200Row("12 months", "16 – 2048", "$3.99"),
			map[string]schema.PriceType{"1-Click Cluster 16x NVIDIA B200 SXM6 (12 months)": schema.Term1Y}, nil, 21, ""},
		{"three years is term_3y", b200Row("3 Years", "16 – 2048", "$3.49"),
			map[string]schema.PriceType{"1-Click Cluster 16x NVIDIA B200 SXM6 (3 years)": schema.Term3Y}, nil, 21, ""},
		{"an open-ended commitment is reserved", b200Row("12+ months", "16 – 2048", "$4.29"),
			map[string]schema.PriceType{"1-Click Cluster 16x NVIDIA B200 SXM6 (12+ months)": schema.Reserved}, nil, 21, ""},
		{"spellings of a range name one offer", b200Row("3-12 Months", "16 to 2,048 GPUs", "$4.49"),
			map[string]schema.PriceType{b200Long: schema.Reserved}, nil, 21, ""},
		{"a single count and larger clusters", b200Row("3 – 12 months", "32", "$4.49"),
			map[string]schema.PriceType{"1-Click Cluster 32x NVIDIA B200 SXM6 (3 – 12 months)": schema.Reserved}, []string{b200Long}, 21, ""},
		{"unpriced", b200Row("3 – 12 months", "16 – 2048", "—"), map[string]schema.PriceType{b200Week: schema.Reserved}, []string{b200Long}, 20, ""},
		{"contact sales", b200Row("3 – 12 months", "16 – 2048", "Contact sales"), nil, []string{b200Long}, 20, ""},
		{"a duration that names no commitment", b200Row("On-demand", "16 – 2048", "$4.49"), nil, []string{b200Long}, 20, `DURATION: "On-demand" is not a duration`},
		{"a range that ends before it starts", b200Row("12 – 3 months", "16 – 2048", "$4.49"), nil, []string{b200Long}, 20, "does not end after its start"},
		{"a count range upside down", b200Row("3 – 12 months", "2048 – 16", "$4.49"), nil, []string{b200Long}, 20, "GPU COUNT"},
		{"no count", b200Row("3 – 12 months", "", "$4.49"), nil, []string{b200Long}, 20, "GPU COUNT"},
		{"heading renamed: the rows are not read", mustReplace(page, ">1-Click Clusters pricing</h2>", ">Reserved capacity</h2>"),
			nil, []string{b200Week, b200Long}, 17, `rows with a DURATION cell but no "1-Click Clusters" heading`},
		{"heading without rows", mustReplace(page, `data-label="DURATION"`, `data-label="TERM"`),
			nil, []string{b200Week, b200Long}, 17, `a "1-Click Clusters" heading but no`},
		{"a duration cell in an instance tab is not on-demand", mustReplace(page,
			`<td data-label="VRAM/GPU">96 GB</td>`, `<td data-label="VRAM/GPU">96 GB</td><td data-label="DURATION">1 year</td>`),
			map[string]schema.PriceType{b200Week: schema.Reserved}, []string{"1x NVIDIA GH200 (96 GB)"}, 20, "a row with a DURATION cell in an instance tab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseLambdaPage([]byte(tt.body), runAug22, scrapers.DefaultLambdaPageURL)
			checkParsed(t, scrapers.LambdaName, runAug22, offers, problems, err)
			if err != nil {
				t.Fatal(err)
			}
			byID := map[string]schema.Offer{}
			for _, o := range offers {
				byID[o.OfferID] = o
			}
			for id, pt := range tt.want {
				if o, ok := byID[id]; !ok || o.PriceType != pt {
					t.Errorf("offer %q: %v (there: %v), want price type %s", id, o.PriceType, ok, pt)
				}
			}
			for _, id := range tt.absent {
				if _, ok := byID[id]; ok {
					t.Errorf("offer %q should not be there", id)
				}
			}
			if len(offers) != tt.offers {
				t.Errorf("%d offers, want %d", len(offers), tt.offers)
			}
			switch {
			case tt.problem == "" && len(problems) != 0:
				t.Errorf("problems %v, want none", problems)
			case tt.problem != "" && (len(problems) != 1 || !strings.Contains(problems[0].Error(), tt.problem)):
				t.Errorf("problems %v, want one with %q", problems, tt.problem)
			}
		})
	}
}

func TestParseLambdaErrors(t *testing.T) {
	full := readTestdata(t, "lambda_instance_types.json")
	tests := []struct {
		name string
		body string
		want error // nil: any error
	}{
		{"truncated JSON", string(full[:len(full)/2]), scrapers.ErrIncomplete},
		{"empty body", "", scrapers.ErrIncomplete},
		{"trailing data", string(full) + `{"data":{}}`, scrapers.ErrLayoutChanged},
		{"a member of the wrong type", `{"data":{"gpu_1x_a10":"cheap"}}`, scrapers.ErrLayoutChanged},
		{"HTML instead of JSON", "<html><body>Bad gateway</body></html>", scrapers.ErrLayoutChanged},
		{"api error object", `{"error":{"code":"global/invalid-api-key","message":"API key was invalid"}}`, nil},
		{"no data", `{"instance_types":[]}`, scrapers.ErrLayoutChanged},
		{"data null", `{"data":null}`, scrapers.ErrLayoutChanged},
		{"data empty", `{"data":{}}`, scrapers.ErrNoOffers},
		{"only CPU types", `{"data":{"cpu_4x_general":{"instance_type":{"name":"cpu_4x_general","description":"4x CPU cores","gpu_description":"","price_cents_per_hour":20,"specs":{"vcpus":4,"memory_gib":16,"storage_gib":100,"gpus":0}},"regions_with_capacity_available":[]}}}`, scrapers.ErrNoOffers},
		{"data is a list", `{"data":[]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, _, err := scrapers.ParseLambda([]byte(tt.body), runAug22, scrapers.DefaultLambdaAPIURL)
			if err == nil {
				t.Fatalf("no error, %d offers", len(offers))
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			var se *scrapers.Error
			if !errors.As(err, &se) || se.Source != scrapers.LambdaName {
				t.Errorf("error %v is not a lambda *scrapers.Error", err)
			}
		})
	}
}

func TestParseLambdaPageLayoutChanged(t *testing.T) {
	page := string(readTestdata(t, "lambda_pricing.html"))
	tests := []struct {
		name string
		body string
	}{
		{"redesigned as cards", string(readTestdata(t, "lambda_pricing_changed.html"))},
		{"heading renamed", mustReplace(page, ">Instances pricing</h2>", ">On-demand pricing</h2>")},
		{"no tabs", mustReplace(page, `role="tab"`, `role="button"`)},
		{"rows lost data-plan", mustReplace(page, "data-plan=", "data-sku=")},
		{"price column renamed", mustReplace(page, `data-label="PRICE/GPU/HR*"`, `data-label="HOURLY"`)},
		{"not HTML", "Service Unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseLambdaPage([]byte(tt.body), runAug22, scrapers.DefaultLambdaPageURL)
			if err == nil {
				t.Fatalf("no error, %d offers", len(offers))
			}
			if !errors.Is(err, scrapers.ErrLayoutChanged) && !errors.Is(err, scrapers.ErrNoOffers) {
				t.Errorf("error %v wraps neither ErrLayoutChanged nor ErrNoOffers (problems %v)", err, problems)
			}
		})
	}
}

const lambdaTestKey = "secret_lambda-key_3f9a1c" // a fake key; it must never leave Fetch

func TestLambdaAPIFetchMisbehaving(t *testing.T) {
	good := readTestdata(t, "lambda_instance_types.json")
	renamed := []byte(mustReplace(string(good), `"data"`, `"instance_types"`))
	cases := append(misbehaviours("application/json", renamed),
		misbehaviour{"HTML with status 200", func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
			writeBody(w, "text/html", []byte("<html><body>Please sign in</body></html>"))
		}, 1, scrapers.ErrLayoutChanged},
		misbehaviour{"redirect to a foreign domain", func(w http.ResponseWriter, r *http.Request, _ int, _ []byte) {
			http.Redirect(w, r, "http://localhost:1/api/v1/instance-types", http.StatusFound)
		}, 1, scrapers.ErrStatus},
	)
	for _, mb := range cases {
		t.Run(mb.name, func(t *testing.T) {
			var hits atomic.Int32
			var auth atomic.Value
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				auth.Store(r.Header.Get("Authorization"))
				mb.serve(w, r, int(hits.Add(1)), good)
			}))
			defer srv.Close()
			l := scrapers.NewLambda(newTestClient(t, scrapers.ClientConfig{}), scrapers.LambdaConfig{APIKey: lambdaTestKey, APIURL: srv.URL + "/api/v1/instance-types"}, nil)
			res, err := l.Fetch(context.Background(), runAug22)
			checkFetch(t, scrapers.LambdaName, res, err, mb.wantErr, mb.wantAttempts)
			if got, _ := auth.Load().(string); got != "Bearer "+lambdaTestKey {
				t.Errorf("Authorization %q, want the Bearer key", got)
			}
			if mb.wantErr == nil && len(res.Offers) != 18 {
				t.Errorf("%d offers, want 18", len(res.Offers))
			}
		})
	}
}

func TestLambdaPageFetchMisbehaving(t *testing.T) {
	good := readTestdata(t, "lambda_pricing.html")
	for _, mb := range misbehaviours("text/html; charset=utf-8", readTestdata(t, "lambda_pricing_changed.html")) {
		t.Run(mb.name, func(t *testing.T) {
			var hits, apiHits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/api/") {
					apiHits.Add(1)
					http.Error(w, `{"error":{"code":"global/invalid-api-key","message":"API key was invalid"}}`, http.StatusUnauthorized)
					return
				}
				if !strings.HasPrefix(r.UserAgent(), "Mozilla/5.0") {
					http.Error(w, "Forbidden", http.StatusForbidden)
					return
				}
				mb.serve(w, r, int(hits.Add(1)), good)
			}))
			defer srv.Close()
			l := scrapers.NewLambda(newTestClient(t, scrapers.ClientConfig{}), scrapers.LambdaConfig{
				APIURL: srv.URL + "/api/v1/instance-types", PageURL: srv.URL + "/pricing", Delay: -1,
			}, nil)
			res, err := l.Fetch(context.Background(), runAug22)
			checkFetch(t, scrapers.LambdaName, res, err, mb.wantErr, mb.wantAttempts)
			if mb.wantErr == nil && len(res.Offers) != 21 {
				t.Errorf("%d offers, want 21", len(res.Offers))
			}
			if n := apiHits.Load(); n != 0 {
				t.Errorf("the API was called %d times without a key", n)
			}
		})
	}
}

// TestLambdaKeyNeverLeaks: a server that rejects the key and echoes it back (as some proxies
// do) must not get the key into the error, the logs, the payload or a recording.
func TestLambdaKeyNeverLeaks(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"code":"global/invalid-api-key","message":"API key was invalid: %s"}}`, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := t.TempDir()
	client := newTestClient(t, scrapers.ClientConfig{Logger: logger, RecordDir: dir})
	l := scrapers.NewLambda(client, scrapers.LambdaConfig{APIKey: lambdaTestKey, APIURL: srv.URL + "/api/v1/instance-types"}, logger)
	res, err := l.Fetch(context.Background(), runAug22)
	if !errors.Is(err, scrapers.ErrStatus) {
		t.Fatalf("Fetch error %v, want ErrStatus", err)
	}
	t.Logf("Fetch error: %v", err)
	if strings.Contains(err.Error(), lambdaTestKey) {
		t.Errorf("the key is in the error: %v", err)
	}
	if strings.Contains(logs.String(), lambdaTestKey) {
		t.Errorf("the key is in the logs:\n%s", logs.String())
	}
	for _, p := range res.Payloads {
		if bytes.Contains(p.Body, []byte(lambdaTestKey)) || strings.Contains(p.URL, lambdaTestKey) {
			t.Errorf("the key is in a payload: %s %s", p.URL, p.Body)
		}
	}
	// Recorded bodies are kept byte for byte (record.go), so an echoing server's body is not
	// scrubbed there; the request side (URL, headers, request body) must be.
	index, err := os.ReadFile(filepath.Join(dir, scrapers.LambdaName, scrapers.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(index, []byte(lambdaTestKey)) || bytes.Contains(index, []byte("Bearer")) {
		t.Errorf("the key reached the recording's index:\n%s", index)
	}
}

func TestLambdaRecordReplay(t *testing.T) {
	good := readTestdata(t, "lambda_instance_types.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeBody(w, "application/json", good) }))
	defer srv.Close()
	dir := t.TempDir()
	cfg := scrapers.LambdaConfig{APIKey: lambdaTestKey, APIURL: srv.URL + "/api/v1/instance-types"}
	live, err := scrapers.NewLambda(newTestClient(t, scrapers.ClientConfig{RecordDir: dir}), cfg, nil).Fetch(context.Background(), runAug22)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	replayed, err := scrapers.NewLambda(newTestClient(t, scrapers.ClientConfig{ReplayDir: dir}), cfg, nil).Fetch(context.Background(), runAug22)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live.Offers, replayed.Offers); diff != "" {
		t.Errorf("replayed offers differ (-live +replayed):\n%s", diff)
	}
	if !bytes.Equal(replayed.Payloads[0].Body, good) {
		t.Error("replayed payload is not the recorded body byte for byte")
	}
}

func TestLambdaInvalidConfig(t *testing.T) {
	for _, cfg := range []scrapers.LambdaConfig{
		{APIKey: lambdaTestKey, APIURL: "cloud.lambda.ai/api/v1/instance-types"},
		{PageURL: "ftp://lambda.ai/pricing"},
	} {
		_, err := scrapers.NewLambda(newTestClient(t, scrapers.ClientConfig{}), cfg, nil).Fetch(context.Background(), runAug22)
		if err == nil || strings.Contains(err.Error(), lambdaTestKey) {
			t.Errorf("%+v: error %v", cfg, err)
		}
	}
}

func FuzzParseLambda(f *testing.F) {
	for _, name := range []string{"lambda_instance_types.json", "lambda_instance_types_traps.json"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(`{"data":{"gpu_1x_x":{"instance_type":{"name":"gpu_1x_x","description":"1x X (8 GB PCIe)","gpu_description":"X (8 GB PCIe)","price_cents_per_hour":"1e3","specs":{"gpus":1}},"regions_with_capacity_available":null}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseLambda(body, runAug22, scrapers.DefaultLambdaAPIURL)
		checkParsed(t, scrapers.LambdaName, runAug22, offers, problems, err)
		checkPerGPU(t, offers)
	})
}

func FuzzParseLambdaPage(f *testing.F) {
	for _, name := range []string{"lambda_pricing.html", "lambda_pricing_changed.html"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(`<h2>Instances pricing</h2><button role="tab" aria-controls="p">2x</button><div role="tabpanel" id="p"><table><tr data-plan="NVIDIA H100 SXM5"><td data-label="VRAM/GPU">80 GB</td><td data-label="PRICE/GPU/HR*">$1,001.5</td></tr></table></div>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseLambdaPage(body, runAug22, scrapers.DefaultLambdaPageURL)
		checkParsed(t, scrapers.LambdaName, runAug22, offers, problems, err) // per-GPU is the page's own price
	})
}

func BenchmarkParseLambda(b *testing.B) {
	benchmarkParse(b, scrapers.ParseLambda, "lambda_instance_types.json", runAug22, scrapers.DefaultLambdaAPIURL)
}

func BenchmarkParseLambdaPage(b *testing.B) {
	benchmarkParse(b, scrapers.ParseLambdaPage, "lambda_pricing.html", runAug22, scrapers.DefaultLambdaPageURL)
}
