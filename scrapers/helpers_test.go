package scrapers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// Fixtures (testdata/), built to docs/providers.md (no live access):
//
//   - vastai_offers.json (§1): one search page of traps: the three real sample offers of §1.9
//     (V100 deverified at 0.06 + storage, H100 SXM 81559 MiB with ", US", RTX 3090 Quebec), a V100
//     whose bw_nvlink proves SXM2, cpu_cores null and 0, min_bid above dph_total, a null
//     geolocation, a clustered 8x H100 SXM, an empty and an unknown gpu_name, a modded 48 GB RTX
//     4090, a row with no price, num_gpus 0 and "two", and a dph_base-only row in "Czechia, CZ, EU".
//   - vastai_market.json (§1): a whole marketplace (122 asks, 25 GPU names) the fake search server
//     (vastMarket) slices, sorts and clamps like Vast does; full field sets in the live shape,
//     prices per offer with storage at 8 GB. The snapshot's vastai part is recorded from it.
//   - runpod_gputypes.json (§2): the gpuTypes answer to our query for 32 types with both clouds'
//     flags, on-demand and spot prices and lowestPrice, including the placeholder 0.5 (MI300X, H200
//     NVL and RTX 2000 Ada community, RTX 5000 Ada in both clouds, L40 and RTX 6000 Ada secure
//     spot), zero and null prices, spot equal to on-demand, the unknown row, and an unknown GPU
//     (RTX PRO 4500 Blackwell). The snapshot's runpod part is recorded from it (with
//     runpod_catalog.json, by a run with a key).
//   - runpod_gputypes_placeholders.json (§2.4): rows in the layout of our query's answer where
//     lowestPrice repeats a 0.5: the two reported 2026 cases (MI350X community 0.5 next to secure
//     5.49, RTX 2000 Ada community 0.5 above secure 0.24), and 0.5s the other cloud's price
//     vouches for (RTX A6000 community next to secure 0.76, A40 secure next to community 0.35) or
//     not (RTX 3070 secure over 3x community 0.13, RTX A4500 offered in community only). The
//     MI350X id and every stock and host figure are illustrative.
//   - runpod_gputypes_traps.json (§2.8): the verbatim sample rows (yrys and gpu-index shapes: no
//     cloud flags, lowestPrice null-filled), plus rows without id and with a non-string id, and a
//     GraphQL error next to the data.
//   - runpod_catalog.json (§2.9): the REST v2 catalog's answer (GET /v2/catalog/gpus, no
//     filters: {"gpus": [...]} of id, name, pool, manufacturer, memory, secure, community, price
//     {secure, community, serverless}, maxCount) for the 33 types of runpod_gputypes.json, at
//     its pod prices (0 where GraphQL has 0 or null), the GPU pools and serverless prices of 21
//     of them, none for the others (AMD MI300X, types in no pool, the unknown row). The RTX
//     4090's 1.1 is the documented example's; the other serverless prices are RunPod's
//     per-second flex rates of 2025 as an hour (H100 0.00116 $/s: 4.176), the RTX PRO 6000's
//     and the pools' names as RunPod spells them are illustrative. The snapshot's runpod part
//     holds it as the answer of a run with a key.
//   - runpod_catalog_traps.json (§2.9): the documented example verbatim (with availability and
//     dataCenters), a serverless price null, absent, 0, negative, a boolean, 1e400, 1500000 and
//     a string, a MIG slice, an AMD type without and one with a serverless price (the MI350X's
//     8.1 and pool are illustrative), the unknown row priced, a type without an id, a type listed
//     twice, no price object, no memory, memory as a string, an element that is a string and
//     one that is null.
//   - lambda_instance_types.json (§3.7): the instance-types response with the spec examples and
//     the sky-cat v7 cents/vCPU/GiB tuples (8x B200 SXM6 at 3992 cents), the descriptions seen in
//     the sources, capacity lists that are often empty, and cpu_4x_general. storage_gib values
//     other than a10 and 8x H100 are placeholders, as §3.7 says.
//   - lambda_instance_types_traps.json (§3.5): a 1.5.3-format record (no specs.gpus, price as the
//     string "80"), the spec's "Example GPU" (unknown name), a negative price, the gdr variant,
//     a CPU type without specs.gpus, and capacity lists with a region twice, a blank name, a name
//     that is markup, and only a nameless region (§3.4).
//   - lambda_pricing.html (§3.6): lambda.ai/pricing (1-Click Cluster tables first: tabs per GPU
//     model, <tr data-plan> rows with DURATION, GPU COUNT and PRICE/GPU/HR* cells, 16 – 2048 B200
//     and 16 – 512 H100 for 1 week – 3 months or 3 – 12 months; then the "Instances pricing"
//     heading, 8x/4x/2x/1x tabs paired to tabpanels, <tr data-plan> rows with data-label cells,
//     "—" for unpriced, hash-suffixed classes, an escaped copy of the rows in window.__islands).
//     B200 instance prices are the live ones of §3.6; the other instance prices are the API
//     cents per GPU of the fixture above, and the cluster prices are illustrative; vCPU/RAM/
//     storage of the smaller B200 and A6000 sizes are placeholders.
//   - lambda_pricing_changed.html: the same page redesigned as cards (no tabs, no data-plan).
//   - coreweave_pricing.html (§4.2, §4.7): the pricing page with every GPU row and value (NA and
//     EU), the CPU section after it, footnotes.
//   - coreweave_pricing_traps.html: thousands separators in a price, "Contact sales" inside a
//     price, a "4<sup>1</sup>" count, an unknown GPU (Vera Rubin NVL144), an em-dash spot price
//     and a malformed price.
//   - coreweave_pricing_changed.html: rows no longer "table-row-v2 w-dyn-item" listitems.
//   - coreweave_pricing_renamed.html: the "Spot Price" header renamed.
//   - verda_pricing.html (§8.6–8.7): verda.com/pricing with its schema.org JSON-LD @graph
//     (Organization, WebSite, ContactPoint, BreadcrumbList, ItemList, an OfferCatalog of services
//     whose Offers are nested, then the top-level Offer nodes): the 1x on-demand and spot rows
//     of the 2026-08-22 page with the CC variants, the H100 rows twice, 24 blank-model CPU rows,
//     instant clusters and serverless rows (N-GPU totals) and storage rows; rendered tables and
//     __NEXT_DATA__ around it that the parser ignores. Trimmed: the live page has 163 Offer
//     nodes; the CC names and the cluster and serverless prices other than §8.7's are
//     illustrative.
//   - verda_pricing_traps.html: a second JSON-LD script without @graph, a price as text, a
//     verbatim and a conflicting duplicate, "serverless spot" next to "spot", GB300 next to B300,
//     the B300's old 262GB label, EUR, a price differing from its specification, a name and
//     description of different kinds, an 8x instance row, an unknown kind, @type as an array,
//     a monthly unit, an unknown GPU, negative and zero prices, odd white space, no
//     priceSpecification, and a priced Offer nested in the catalog.
//   - verda_pricing_changed.html: the prices moved into Product/AggregateOffer nodes.
//   - verda_instance_types.json (§8.3–8.4): GET /instance-types in the SDKs' field set, prices
//     as strings (one type as numbers): the sky-cat types and prices of §8.7 (B300, H200, H100,
//     A100, RTX PRO 6000, CPU), the 2x RTX A6000 with p2p "50GB/s", the B300's gpu_memory of
//     262 per GPU; the other types' prices, specs and p2p figures are illustrative.
//   - verda_instance_types_traps.json (§8.5): a price as a JSON number, spot_price_per_hour,
//     an empty price (spot only), zero, negative, malformed and boolean prices, eur, counts from
//     the description and the type id, no gpu_memory, sized storage, an AMD 7900XTX, the old
//     262GB B300 label, a count "two", a type listed twice, a CC type, an element that is no
//     object, gpu as a string, a CPU type without a count, the older "NVidia" spelling.
//   - verda_instance_availability.json, verda_instance_availability_spot.json (§8.4): where
//     each type of the fixture above is deployable on demand and as spot, in FIN-01..03 and
//     ICE-01 (illustrative).
//   - verda_token.json: an OAuth2 token answer with a fake token.
//   - oci_products.json, oci_shapes.json (§9): OCI's USD price list ({"lastUpdated", "items"}:
//     partNumber, displayName, metricName, serviceCategory, currencyCodeLocalizations) with every
//     "GPU Per Hour" part of §9.2 at its listed value, the licence add-ons, Cloud@Customer and
//     VMware rows, and a few CPU, memory and NVMe parts; and the estimator's shapes catalog with
//     the GPU shapes of §9.5 (and H200, MI300X and L40S shapes named by the same pattern, not
//     seen verbatim) billed under those parts, the verbatim BM.DenseIO.E5.128 and a flexible CPU
//     shape. Which generation part (X7, V2, E3) a P100, V100 or A100 40 GB shape is billed under,
//     the qty of each shape's ocpu product, bundleMemoryQty and allowPreemptible are
//     illustrative; gpuMemoryQty is the shape's total but for MI355X and GB300 (per GPU, §9.5).
//     The snapshot's oci part is recorded from them.
//   - oci_products_traps.json, oci_shapes_traps.json (§9.5): a fractional qty on a GPU part, a
//     verbatim duplicate item, H100T (an illustrative shape name), a metric in other case and
//     spacing, a VMware node part under a GPU shape, an EUR-only part, two differing
//     pay-as-you-go prices, a zero price, a price as a string, a part listed twice differently,
//     a part missing from the list, a fractional and a string gpuQty, a shape without an ocpu
//     product, a hidden, an inactive and a duplicate shape, no gpuMemoryQty, a 7-decimal price.
//   - oci_products_changed.json, oci_shapes_changed.json: currencyCodeLocalizations renamed
//     prices; the shapes under "shapes" instead of "items".
//   - vultr_plans.json, vultr_plans_page2.json (§10.2): GET /v2/plans?type=all in two pages (the
//     first's meta.links.next is the second's cursor): CPU plans (the free tier at 0), Cloud GPU
//     plans with and without gpu_count (A100, A40 and A16 slices, whole A100/A40/A16/L40S/H100,
//     4x L40S with spot), GH200, MI300X with a location_cost override, and the Dedicated Metal
//     (vdm) plans without GPU fields of §10.4. vultr_plans_metal.json: GET /v2/plans-metal with
//     the two documented sample plans (8x H100, 8x MI300X) and the id table of §10.4 (the "l40"
//     L40S, GH200, 4x and 8x A100) and an 8x B200 not orderable and listed nowhere. Prices other
//     than the documented ones, host figures and locations are illustrative.
//   - vultr_plans_traps.json, vultr_plans_metal_traps.json (§10.4): "" among the locations,
//     deploy_ondemand false with deploy_preemptible true, per-location prices, zero, negative,
//     string and boolean prices, gpu_count "two", "3/2" and "2/1", an A100 total two counts
//     explain, a vdm plan naming no GPU, an unknown GPU, bad locations, a plan twice, no id, an
//     element that is no object, spot only, no locations key, gpuhunt's 8x MI325X, a gpu_count
//     that disagrees with the id.
//   - vultr_plans_changed.json: the plans wrapped in a data object, the cursor moved.
//   - tensordock_hostnodes.json (§11.2): GET /hostnodes in the v2 envelope
//     {"data": {"hostnodes": [...]}}, each hostnode with id, location_id, engine,
//     uptime_percentage, available_resources {gpus: [{v0Name, availableCount, price_per_hr}],
//     vcpu_count, ram_gb, storage_gb, max_vcpus_per_gpu, max_ram_per_gpu, max_vcpus, max_ram_gb,
//     max_storage_gb, available_ports, has_public_ip_available}, pricing {per_vcpu_hr,
//     per_gb_ram_hr, per_gb_storage_hr} and location {uuid, city, stateprovince, country,
//     has_network_storage, network_speed_gbps, network_speed_upload_gbps (fractional: 2.5,
//     10.5), organization, organizationName, tier}: eight hosts with every v0Name of §11.4 and an
//     H100 with none free. No real v2 answer has been published anywhere (every public sample
//     is a test's), so the layout is the documented one and every value is illustrative but the
//     H100 SXM5's $2.25 (TensorDock's homepage "from" price). The snapshot's tensordock part is
//     recorded from it (TestSnapshotTensorDock, with a test token), under runNov29.
//   - tensordock_locations.json (§11.2): GET /locations ({"data": {"locations": [...]}}, id,
//     city, stateprovince, country, tier, gpus: [{v0Name, displayName, max_count, price_per_hr,
//     resources {max_vcpus, max_ram_gb, max_storage_gb}, pricing {...}, network_features
//     {dedicated_ip_available, port_forwarding_available, network_storage_available}}]): the
//     td-tf test sample verbatim (loc-1, Ashburn, RTX 4090 at 0.99 with rates 0.01, 0.002,
//     0.0001) and two illustrative locations, one GPU with max_count 0.
//   - tensordock_hostnodes_traps.json (§11.5): a count 2.0, 1.5, "2", -1 and 5000; a missing
//     storage rate and no pricing (left out, never priced at 0); prices 0, negative, a string,
//     a boolean and absent; a rate as a string, a negative rate and a zero rate; no v0Name, a
//     v0Name twice on one host and as a number, an unknown model, no form token, a displayName
//     that contradicts the v0Name, upper case, no -NNgb; a GPU's own pricing; gpus null and a
//     string; no location and an unknown field; a host twice, without id and no object; a
//     two-letter country and a city of several words with accents; exact sums of long decimals.
//   - tensordock_hostnodes_changed.json: the deprecated v0 layout (hostnodes a map keyed by id,
//     specs.gpu a map), gpuhunt's test sample.
//   - nebius_prices.html (§12.1, §12.7): nebius.com/prices as the server renders it: the GPU table
//     rendered as HTML (not read), and the page's content as JSON in a string literal of a script
//     (self.__next_f.push([1,"{\"page\":…"]), every quote escaped), whose blocks are tables
//     {"title", "table": {"content": [[header], [row], …], "customColumnWidth": […]}}: "NVIDIA
//     GPU Instances" with the header ["Item","vCPUs","RAM, GB","Preemptible, GPU-hour",
//     "On-demand, GPU-hour"] and the nine rows of 2026-08-22 verbatim (GB300 and GB200 NVL72
//     "––" and "[Contact us](#ai-contact-form)", "from $…" L40S floors), then the CPU-only
//     (per vCPU-hour), storage (GB-month) and other-services tables. The script wrapper, the
//     block fields other than title and table, and the other tables' rows are illustrative.
//   - nebius_prices_oct.html: the same page after October 2026: a sixth column "GPU-hour
//     (Effective October 1, 2026)" after the old one, with H100 4.50, H200 5.40, B200 8.50,
//     and preemptible "from $0.79" (H100, H200), "from $0.99" (B200); the B300, RTX PRO 6000
//     and L40S figures of the new column and their preemptible floors are illustrative. The
//     snapshot's nebius part is recorded from it (at runNov29).
//   - nebius_prices_traps.html: the CPU table before the GPU table, a second effective column
//     not yet in effect (January 2027), a verbatim and a conflicting duplicate row, a preview of
//     the table in plain JSON and in a second script string, a row priced in euros, a zero
//     price, a floor with a non-breaking space, odd white space in an item, N/A, an unknown
//     GPU, a thousands separator, a short row, a number cell, an empty item, "$3.85/h", and
//     "Contact us" as plain text.
//   - nebius_prices_changed.html: the tables' rows moved to {"rows": [{"cells": [{"text"}]}]}.
//   - digitalocean_sizes.json, digitalocean_sizes_page2.json (§13.2): GET /v2/sizes?per_page=200
//     in two pages, {"sizes": [...], "links": {"pages": {"next": ".../v2/sizes?page=2&per_page=200"}},
//     "meta": {"total": 19}}, each size in the documented field set (slug, memory MB, vcpus, disk,
//     transfer, price_monthly, price_hourly per droplet, regions, available, description,
//     networking_throughput, gpu_info {count, vram {amount: the droplet's total, unit "gib"},
//     model "nvidia_h100"}, disk_info): CPU sizes without gpu_info, the documented GPU slugs and
//     prices of §13.2 (gpu-4000adax1-20gb 0.76 in no region, gpu-6000adax1-48gb 1.57 tor1,
//     gpu-mi300x1-192gb 2.59 ams3, gpu-h100x1-80gb 4.41 ams3/nyc2/tor1, gpu-h100x1-80gb-spot 1.0,
//     gpu-mi355x1-288gb-spot 4.5 mem1), 8x droplets at the page's prices (H100 8 × 4.41, H200
//     35.76, MI300X 8 × 2.59), an MI325X not available, B300 and MI355X spot. The model strings
//     other than nvidia_h100, amd_mi300x and nvidia_rtx6000_ada, the host figures and the
//     regions of the sizes not listed in §13.2 are illustrative.
//   - digitalocean_sizes_traps.json (§13.3): gpuhunt's sample (8x H100 of 640 gib, 8x MI300X of
//     1536 at its old 15.92), a CPU size, gpu_info null, a region listed twice, available false,
//     no vram, an empty model, an unknown model, a spot size in mem1, no regions (empty and
//     absent), a price as a string, negative, zero and 1e99 prices, no count, a count of 0 and
//     as a string, a vram unit "mib", a malformed and an empty region, a slug twice, no slug, an
//     element that is no object.
//   - digitalocean_sizes_changed.json: the list under "droplet_sizes".
//   - digitalocean_pricing.html (§13.4): the Droplet pricing page of the docs (Hugo markup, the
//     CPU table before, the bandwidth table after) with its on-demand (11 rows), spot (8 rows,
//     both B300 coolings) and contract ("after contacting sales") GPU tables. The values of
//     §13.4's oracle are kept; the other rows' prices are illustrative (the 8x H100 and MI300X
//     at 8 times the 1x, the MI325X, the liquid-cooled 8x B300, the MI350X 8x and the MI355X 1x).
//   - digitalocean_pricing_traps.html: no spot section, header cells in other case and spacing,
//     non-breaking spaces, "Per Hour", a verbatim and a conflicting duplicate, a thousands
//     separator, an unknown GPU, "(16x)" and "(0x)" counts, an Intel GPU, "$0.76/hr", a zero
//     price, "Contact sales", a monthly price, a label in a link and a price in <strong>, an
//     empty price, a row of three cells.
//   - digitalocean_pricing_changed.html: the GPU prices as cards, no table.
//   - hyperstack_pricing.html (§14.3): www.hyperstack.cloud/gpu-pricing as HubSpot renders it:
//     a navigation menu of priceless look-alike labels (NVIDIA GB200 NVL72, NVIDIA HGX B200), the
//     B300 banner, then the four headings: On-Demand GPU Pricing (13 rows <div
//     class="page-price_card_row_item df"> of five cells page-price_card_row_item_col1..col5,
//     each a <span>: GPU Model | VRAM (GB) | Max pCPUs per GPU | Max RAM (GB) per GPU | Pricing Per
//     Hour, two prices starting with &nbsp;), Reservation Pricing (12 rows: model, "Starting from"
//     price, a "Reserve here" link), Spot VM Pricing (5 rows: model, price) and On-Demand CPU
//     Pricing (CPU rows in the same markup), and a footer with a look-alike row. On-demand values
//     are the 2026-08-22 page's; reserved H200 SXM 2.79, H100 SXM 2.72, B200 5.10, A4000 0.11 and
//     spot H100 2.00, A6000 0.40 are documented, the other reserved and spot values illustrative,
//     as is the markup of the header rows and of the reservation and spot rows.
//   - hyperstack_pricing_traps.html: a look-alike priced row in the menu, a duplicate row with odd
//     white space, an unknown GPU (Rubin CPX) at $1,234.50, "Contact sales", a malformed price, a
//     row missing cells, a row without a model, a VRAM that is no number, an unpriced ("—") and a
//     negative reservation, a spot header in row markup.
//   - hyperstack_pricing_changed.html: the same page with the rows and cells in other classes.
//   - hyperstack_pricebook.json, hyperstack_flavors.json (§14.2): GET /pricebook, a bare array of
//     {id, name, value, original_value, discount_applied, start_time, end_time} at the page's
//     rates per GPU-hour (-spot entries for L40, H100 PCIe, RTX PRO 6000 SE and RTX A6000, the
//     two cpu-only-flavors entries), and GET /core/flavors, {"status": true, "message", "data":
//     [{gpu, region_name, flavors: [{id, name, display_name, region_name, cpu, ram, disk,
//     ephemeral, gpu, gpu_count, stock_available, ...}]}]} with the documented flavor names and
//     host figures (n3-H100x1, n3-H100x8-NVLink, n3-H100-SXM5x8 in CANADA-1 and US-1,
//     n3-A100x8-NVLink, n3-RTX-A4000x10 in NORWAY-1), an H200 flavor the pricebook does not
//     price, B200 and B300 flavors, and CPU flavors. Other flavors, figures and stock flags are
//     illustrative.
//   - hyperstack_pricebook_traps.json, hyperstack_flavors_traps.json: a value as a string, an
//     account's discount, a promotion with start and end times, two differing list prices, a
//     negative and a boolean value, a value below original_value without discount_applied, an
//     unknown GPU (GH200), a verbatim duplicate, an original_value that is no number ("n/a"),
//     entries without a name or not objects; a flavor listed twice, a gpu_count as a string,
//     negative and missing beside a GPU, a region from the group, a region that is markup, a
//     flavor without a name, a -spot flavor, an unpriced GPU, a region of no known country, a
//     group without flavors, elements that are not objects.
//   - hyperstack_flavors_changed.json: the flavor groups under "flavors" instead of "data".
//   - snapshot/: a recorded run of every provider (record.go's layout), re-recorded from the
//     fixtures above under -update by TestSnapshotVastRunPod, TestSnapshotPages (the page
//     sources), TestSnapshotOCI, TestSnapshotVultr, TestSnapshotNebius and
//     TestSnapshotTensorDock.
//
// Golden files (testdata/*.golden.*) hold the exact parser output; regenerate them and the
// snapshot with go test ./scrapers/ -update, then review the diff.

var update = flag.Bool("update", false, "rewrite the golden files and the recorded snapshot in testdata/")

// The runs the parser tests stamp on offers. The golden files hold them, so they need no
// scrubbing; each set of fixtures keeps the run it was recorded under.
var (
	// runAug22 is the run of the Lambda, CoreWeave, Verda, OCI, DigitalOcean and Hyperstack
	// fixtures, modelled on the live pages and documents of 2026-08-22 (lambda_*, coreweave_*,
	// verda_*, oci*, digitalocean_* and hyperstack_*.golden.json,
	// snapshot/{lambda,coreweave,verda,oci,digitalocean,hyperstack}), and of Nebius's page of
	// that day (nebius_prices.golden.json).
	runAug22 = schema.Run{ID: "run-20260822T1400Z", ObservedAt: time.Date(2026, 8, 22, 14, 0, 0, 0, time.UTC)}
	// runNov29 is the run of the Vast.ai and RunPod fixtures (vastai_*.golden.json,
	// runpod_*.golden.json, snapshot/{vastai,runpod}), and of Nebius's October page and traps
	// (nebius_prices_oct and nebius_prices_traps.golden.json, snapshot/nebius).
	runNov29 = schema.Run{ID: "run-20261129T1400Z", ObservedAt: time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)}
)

// readTestdata returns the contents of testdata/name.
func readTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// checkGolden compares a parser's offers and problems with testdata/<name>.golden.json, or
// rewrites it under -update.
func checkGolden(t *testing.T, name string, offers []schema.Offer, problems []error) {
	t.Helper()
	p := struct {
		Offers   []schema.Offer `json:"offers"`
		Problems []string       `json:"problems"`
	}{Offers: offers, Problems: []string{}}
	for _, e := range problems {
		p.Problems = append(p.Problems, e.Error())
	}
	got, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	compareGolden(t, filepath.Join("testdata", name+".golden.json"), append(got, '\n'))
}

// compareGolden compares got with the golden file at path, or rewrites it under -update.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// newTestClient returns a client for tests: cfg, with two retries, millisecond waits and a 10 s
// attempt timeout where cfg leaves them zero.
func newTestClient(tb testing.TB, cfg scrapers.ClientConfig) *scrapers.Client {
	tb.Helper()
	if cfg.RetryMax == 0 {
		cfg.RetryMax = 2
	}
	if cfg.RetryWaitMin == 0 && cfg.RetryWaitMax == 0 {
		cfg.RetryWaitMin, cfg.RetryWaitMax = time.Millisecond, 5*time.Millisecond
	}
	if cfg.AttemptTimeout == 0 {
		cfg.AttemptTimeout = 10 * time.Second
	}
	c, err := scrapers.NewClient(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// timeoutContext returns a background context with deadline d from now (none when d is 0),
// cancelled when the test ends.
func timeoutContext(tb testing.TB, d time.Duration) context.Context {
	if d <= 0 {
		return context.Background()
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}

// handlerTransport serves requests from an http.Handler without a network, so a source can be
// pointed at its real default URL (the snapshot is recorded that way).
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

// fixtureHandler answers every request with testdata/file as contentType.
func fixtureHandler(tb testing.TB, file, contentType string) http.Handler {
	body := readTestdata(tb, file)
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeBody(w, contentType, body) })
}

// writeBody answers 200 with body and contentType.
func writeBody(w http.ResponseWriter, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write(body)
}

// hang is a handler that never answers: it reads the request (so the server notices the client
// hanging up) and waits for the client to give up, 10 s at most.
func hang(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// mustReplace replaces every old in a fixture with new, panicking if old is absent (the edit
// would silently test nothing).
func mustReplace(s, old, new string) string {
	out := strings.ReplaceAll(s, old, new)
	if out == s {
		panic("fixture edit found nothing to replace: " + old)
	}
	return out
}

// mustReplaceRegexp replaces every match of pattern in a fixture, panicking if there is none.
func mustReplaceRegexp(s, pattern, repl string) string {
	out := regexp.MustCompile(pattern).ReplaceAllString(s, repl)
	if out == s {
		panic("fixture edit found nothing to replace: " + pattern)
	}
	return out
}

// parseFunc is the signature every provider's parser shares (ParseVast, ParseLambdaPage, ...).
type parseFunc func(body []byte, run schema.Run, sourceURL string) ([]schema.Offer, []error, error)

// benchmarkParse measures parse on testdata/file.
func benchmarkParse(b *testing.B, parse parseFunc, file string, run schema.Run, sourceURL string) {
	body := readTestdata(b, file)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := parse(body, run, sourceURL); err != nil {
			b.Fatal(err)
		}
	}
}

// checkParsed asserts what every parse must satisfy, whatever the input: an error is an *Error
// of the provider and comes without offers; otherwise there is at least one offer, each
// stamped with run, priced and complete, and no nil problem.
func checkParsed(t *testing.T, provider string, run schema.Run, offers []schema.Offer, problems []error, err error) {
	t.Helper()
	if err != nil {
		var se *scrapers.Error
		if !errors.As(err, &se) || se.Source != provider {
			t.Fatalf("error %v is not a %s *scrapers.Error", err, provider)
		}
		if len(offers) != 0 {
			t.Fatalf("error %v with %d offers", err, len(offers))
		}
		return
	}
	if len(offers) == 0 {
		t.Fatal("nil error and no offers")
	}
	for _, o := range offers {
		if o.Provider != provider || o.OfferID == "" || o.GPUCount == 0 || o.RunID != run.ID {
			t.Fatalf("incomplete offer %+v", o)
		}
		if !o.PriceUSDPerHour.IsPositive() || !o.PriceUSDPerGPUHour.IsPositive() {
			t.Fatalf("offer %q: price %s, per GPU %s for %d GPUs", o.OfferID, o.PriceUSDPerHour, o.PriceUSDPerGPUHour, o.GPUCount)
		}
		if o.GPUModel == "" && !o.HasFlag(schema.FlagUnknownGPU) {
			t.Fatalf("offer %q: unknown GPU %q without flag", o.OfferID, o.GPUNameRaw)
		}
		// On-demand or spot, but for the 1-Click Clusters of Lambda's page (the only Lambda offers
		// with InfiniBand), which are committed and only that; RunPod's savings plans, which are
		// secure-cloud terms of a week to six months; and the reservation table of Hyperstack's
		// rate card (reserved, of no stated term).
		committed := o.PriceType.Committed()
		cluster := provider == scrapers.LambdaName && o.InterNode == schema.InterInfiniBand && strings.HasPrefix(o.OfferID, "1-Click Cluster ")
		savingsPlan := provider == scrapers.RunPodName && o.Tier == schema.TierSecure &&
			slices.Contains([]schema.PriceType{schema.Term1W, schema.Term1M, schema.Term3M, schema.Term6M}, o.PriceType)
		reservation := provider == scrapers.HyperstackName && o.PriceType == schema.Reserved && strings.HasPrefix(o.OfferID, "1x ")
		if !slices.Contains(schema.PriceTypes, o.PriceType) || (committed && !cluster && !savingsPlan && !reservation) || (!committed && cluster) {
			t.Fatalf("offer %q: price type %q", o.OfferID, o.PriceType)
		}
		// Serverless only from Verda's page (its containers) and RunPod's v2 catalog (one GPU of
		// a worker, an offer id of its own).
		runPodServerless := provider == scrapers.RunPodName && o.GPUCount == 1 && strings.HasSuffix(o.OfferID, ":serverless")
		if o.PriceType == schema.Serverless && provider != scrapers.VerdaName && !runPodServerless {
			t.Fatalf("offer %q: price type %q", o.OfferID, o.PriceType)
		}
	}
	for _, p := range problems {
		if p == nil {
			t.Fatal("nil problem")
		}
	}
}

// checkPerGPU asserts that each offer's per-GPU price is its price divided by its GPU count
// (schema.PerGPU), for the sources that price whole offers.
func checkPerGPU(t *testing.T, offers []schema.Offer) {
	t.Helper()
	for _, o := range offers {
		if !o.PriceUSDPerGPUHour.Equal(schema.PerGPU(o.PriceUSDPerHour, o.GPUCount)) {
			t.Fatalf("offer %q: per GPU %s != %s / %d", o.OfferID, o.PriceUSDPerGPUHour, o.PriceUSDPerHour, o.GPUCount)
		}
	}
}

// misbehaviour is one way a provider's server goes wrong, shared by the fetch tests of the
// Lambda, CoreWeave and Verda sources. serve gets the good body and the request number (1-based).
type misbehaviour struct {
	name         string
	serve        func(w http.ResponseWriter, r *http.Request, n int, good []byte)
	wantAttempts int   // 0: don't check
	wantErr      error // nil: a correct result
}

// misbehaviours are the common failure modes, for a source whose good answer has contentType
// and whose answer after a layout change is layoutChanged.
func misbehaviours(contentType string, layoutChanged []byte) []misbehaviour {
	return []misbehaviour{
		{"ok", func(w http.ResponseWriter, _ *http.Request, _ int, good []byte) { writeBody(w, contentType, good) }, 1, nil},
		{"429 then success", func(w http.ResponseWriter, _ *http.Request, n int, good []byte) {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
				return
			}
			writeBody(w, contentType, good)
		}, 2, nil},
		{"500 until retries run out", func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
			http.Error(w, "upstream connect error", http.StatusInternalServerError)
		}, 3, scrapers.ErrStatus},
		{"layout changed", func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
			writeBody(w, contentType, layoutChanged)
		}, 1, scrapers.ErrLayoutChanged},
		{"50 MB body, chunked", func(w http.ResponseWriter, _ *http.Request, _ int, good []byte) {
			w.Header().Set("Content-Type", contentType)
			_, _ = w.Write(good[:len(good)/2])
			chunk := bytes.Repeat([]byte("<div>padding</div>\n"), 1<<16)
			for written := 0; written < 50<<20; written += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, 0, scrapers.ErrBodyTooLarge},
		{"50 MB body, Content-Length", func(w http.ResponseWriter, _ *http.Request, _ int, good []byte) {
			w.Header().Set("Content-Type", contentType)
			w.Header().Set("Content-Length", strconv.Itoa(50<<20))
			_, _ = w.Write(good)
		}, 0, scrapers.ErrBodyTooLarge},
		{"empty 200", func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) { writeBody(w, contentType, nil) }, 1, scrapers.ErrIncomplete},
	}
}

// checkFetch asserts a Fetch outcome: the wanted error (an *Error of the source) or offers,
// never an empty success.
func checkFetch(t *testing.T, source string, res schema.Extract, err error, wantErr error, wantAttempts int) {
	t.Helper()
	if err != nil {
		t.Logf("Fetch error: %v", err)
	}
	if wantErr == nil {
		if err != nil {
			t.Fatalf("Fetch: %v", err)
		}
	} else {
		if !errors.Is(err, wantErr) {
			t.Fatalf("Fetch error %v, want %v", err, wantErr)
		}
		var se *scrapers.Error
		if !errors.As(err, &se) || se.Source != source {
			t.Errorf("error %v is not a %s *scrapers.Error", err, source)
		}
	}
	if err == nil && len(res.Offers) == 0 {
		t.Error("empty success")
	}
	if wantAttempts > 0 && res.Attempts != wantAttempts {
		t.Errorf("Attempts = %d, want %d", res.Attempts, wantAttempts)
	}
}
