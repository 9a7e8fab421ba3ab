package scrapers_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/gpucost/gpucost/scrapers"
)

// vastBenchBytes is the size of the generated search answer the Vast benchmarks parse: the
// 13 MB payload issue 15 measured.
const vastBenchBytes = 13_000_000

// vastBench holds the Vast search answer of about vastBenchBytes the benchmarks share.
var vastBench struct {
	once sync.Once
	body []byte
}

// vastBenchPayload returns the shared answer, generating it on the first call.
func vastBenchPayload(tb testing.TB) []byte {
	vastBench.once.Do(func() { vastBench.body = generateVastAnswer(tb, vastBenchBytes) })
	return vastBench.body
}

// BenchmarkParseVast parses a 13 MB Vast search answer (about 5,500 asks in the live shape).
// Compare it with BenchmarkParseVastPlainJSON (bench/parse-vast-ratio.sh prints the ratio).
func BenchmarkParseVast(b *testing.B) {
	body := vastBenchPayload(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var offers int
	for b.Loop() {
		os, _, err := scrapers.ParseVast(body, runNov29, scrapers.DefaultVastURL)
		if err != nil {
			b.Fatal(err)
		}
		offers = len(os)
	}
	b.ReportMetric(float64(offers), "offers/op")
}

// vastPlainAnswer holds the fields ParseVast reads, in plain encoding/json types: the peer
// issue 15 compares the parser with.
type vastPlainAnswer struct {
	Offers []struct {
		ID                json.Number `json:"id"`
		NumGPUs           *float64    `json:"num_gpus"`
		GPUName           *string     `json:"gpu_name"`
		GPURAM            *float64    `json:"gpu_ram"`
		DPHTotal          *float64    `json:"dph_total"`
		DPHBase           *float64    `json:"dph_base"`
		StorageTotalCost  *float64    `json:"storage_total_cost"`
		MinBid            *float64    `json:"min_bid"`
		BWNVLink          *float64    `json:"bw_nvlink"`
		Reliability       *float64    `json:"reliability"`
		Reliability2      *float64    `json:"reliability2"`
		Verification      *string     `json:"verification"`
		Geolocation       *string     `json:"geolocation"`
		CPUCoresEffective *float64    `json:"cpu_cores_effective"`
		CPURAM            *float64    `json:"cpu_ram"`
		DiskSpace         *float64    `json:"disk_space"`
		ClusterID         *float64    `json:"cluster_id"`
		Search            *struct {
			TotalHour *float64 `json:"totalHour"`
		} `json:"search"`
	} `json:"offers"`
}

// BenchmarkParseVastPlainJSON decodes the payload of BenchmarkParseVast with encoding/json
// into vastPlainAnswer, and nothing more. The payload's rows with num_gpus as a string are
// type errors that encoding/json reports after decoding everything else; they are no failure
// here.
func BenchmarkParseVastPlainJSON(b *testing.B) {
	body := vastBenchPayload(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var rows int
	for b.Loop() {
		var a vastPlainAnswer
		if err := decodePlain(body, &a); err != nil {
			b.Fatal(err)
		}
		rows = len(a.Offers)
	}
	b.ReportMetric(float64(rows), "rows/op")
}

// decodePlain unmarshals body into a, passing over type errors (encoding/json has decoded
// the rest of the body when it returns one).
func decodePlain(body []byte, a *vastPlainAnswer) error {
	err := json.Unmarshal(body, a)
	if _, typeErr := err.(*json.UnmarshalTypeError); typeErr {
		return nil
	}
	return err
}

// TestVastBenchPayload: the generated answer is the size asked for, deterministic, and parses
// to offers of nearly every row, with the few bad rows it holds as problems.
func TestVastBenchPayload(t *testing.T) {
	body := generateVastAnswer(t, 1_000_000)
	if again := generateVastAnswer(t, 1_000_000); !bytes.Equal(body, again) {
		t.Fatal("two generated answers differ")
	}
	if len(body) < 1_000_000 || len(body) > 1_010_000 {
		t.Errorf("%d bytes, want about 1,000,000", len(body))
	}
	var a vastPlainAnswer
	if err := decodePlain(body, &a); err != nil {
		t.Fatal(err)
	}
	offers, problems, err := scrapers.ParseVast(body, runNov29, scrapers.DefaultVastURL)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, o := range offers {
		ids[o.OfferID] = true
	}
	if len(ids) < len(a.Offers)*99/100 || len(offers) < len(ids)*3/2 {
		t.Errorf("%d rows gave %d offers of %d asks, want nearly every ask and most of them with a spot offer", len(a.Offers), len(offers), len(ids))
	}
	if len(problems) == 0 || len(problems) > len(a.Offers)/100 {
		t.Errorf("%d problems in %d rows, want a few", len(problems), len(a.Offers))
	}
}

// generateVastAnswer returns a Vast search answer of at least size bytes (and at most one row
// more), the same for the same size. Its rows are the asks of testdata/vastai_market.json,
// member for member in the live order and number format, with new ids and the things real asks
// vary: prices (compute, storage, bids), location, host figures, tier, and the nulls and
// malformed rows of docs/providers.md §1.8: null geolocation, cpu_cores null or 0, no min_bid,
// no dph_total (search.totalHour then prices it), a cluster, num_gpus as a string, no price.
func generateVastAnswer(tb testing.TB, size int) []byte {
	var market struct {
		Offers []json.RawMessage `json:"offers"`
	}
	if err := json.Unmarshal(readTestdata(tb, "vastai_market.json"), &market); err != nil {
		tb.Fatal(err)
	}
	templates := make([][]vastMember, len(market.Offers))
	for i, raw := range market.Offers {
		templates[i] = vastMembers(tb, raw)
	}
	rng := rand.New(rand.NewPCG(15, uint64(size)))
	buf := bytes.NewBufferString(`{"offers": [`)
	for i := 0; buf.Len() < size; i++ {
		if i > 0 {
			buf.WriteString(", ")
		}
		writeVastAsk(buf, templates[rng.IntN(len(templates))], 60_000_000+3*i, rng)
	}
	buf.WriteString("]}")
	return buf.Bytes()
}

// vastMember is one member of a template row.
type vastMember struct {
	key string
	raw json.RawMessage
}

// vastMembers splits a row into its members, in order.
func vastMembers(tb testing.TB, row json.RawMessage) []vastMember {
	dec := json.NewDecoder(bytes.NewReader(row))
	if _, err := dec.Token(); err != nil {
		tb.Fatal(err)
	}
	var ms []vastMember
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			tb.Fatal(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			tb.Fatal(err)
		}
		ms = append(ms, vastMember{key: k.(string), raw: raw})
	}
	return ms
}

// vastGeolocations are the locations asks are drawn from, the odd ones of §1.7 among them.
var vastGeolocations = []string{
	`"Texas, US"`, `"California, US"`, `"Oregon, US"`, `"New York, US"`, `", US"`, `"United States, US"`,
	`"Quebec, CA"`, `"Ontario, CA"`, `"Norway, NO"`, `"Sweden, SE"`, `"Poland, PL"`, `"Bavaria, DE"`,
	`"Czechia, CZ"`, `"Czechia, CZ, EU"`, `", RU"`, `"Thailand, TH"`, `"Taiwan, TW"`, `"Japan, JP"`,
}

// writeVastAsk writes one ask made from template with ask id id.
func writeVastAsk(buf *bytes.Buffer, template []vastMember, id int, rng *rand.Rand) {
	num := func(m vastMember) float64 {
		f, _ := strconv.ParseFloat(string(m.raw), 64)
		return f
	}
	var base, storage, bid float64
	for _, m := range template {
		switch m.key {
		case "dph_base":
			base = num(m)
		case "storage_total_cost":
			storage = num(m)
		case "min_bid":
			bid = num(m)
		}
	}
	factor := 0.7 + 0.8*rng.Float64()
	base = math.Round(base*factor*1e5) / 1e5
	storage *= 0.5 + rng.Float64() // other storage rates than the template's
	total := base + storage
	bid = math.Round(bid*factor*1e4) / 1e4
	search := `{"diskHour": ` + pyFloat(storage) + `, "discountTotalHour": 0, "discountedTotalPerHour": ` + pyFloat(total) +
		`, "gpuCostPerHour": ` + pyFloat(base) + `, "slaPremiumPerHour": 0.0, "totalHour": ` + pyFloat(total) + `}`
	set := map[string]string{
		"id":                   strconv.Itoa(id),
		"ask_contract_id":      strconv.Itoa(id),
		"bundle_id":            strconv.Itoa(200_000_000 + 7*id),
		"machine_id":           strconv.Itoa(100_000 + rng.IntN(300_000)),
		"host_id":              strconv.Itoa(10_000 + rng.IntN(400_000)),
		"dph_base":             pyFloat(base),
		"dph_total":            pyFloat(total),
		"discounted_dph_total": pyFloat(total),
		"dph_total_adj":        pyFloat(total * 1.0125),
		"storage_total_cost":   pyFloat(storage),
		"min_bid":              pyFloat(bid),
		"search":               search,
		"geolocation":          vastGeolocations[rng.IntN(len(vastGeolocations))],
		"cpu_cores":            strconv.Itoa(16 << rng.IntN(4)),
		"reliability":          pyFloat(math.Round((0.8+0.2*rng.Float64())*1e7) / 1e7),
		"verification":         [...]string{`"verified"`, `"verified"`, `"unverified"`, `"deverified"`}[rng.IntN(4)],
		"dlperf":               pyFloat(math.Round(rng.Float64()*3e6) / 1e4),
		"score":                pyFloat(math.Round(rng.Float64()*3e6) / 1e4),
		"duration":             pyFloat(rng.Float64() * 1e7),
	}
	switch p := rng.Float64(); {
	case p < 0.04:
		set["geolocation"] = "null"
	case p < 0.05:
		set["cpu_cores"] = "null"
	case p < 0.055:
		set["cpu_cores"] = "0"
	case p < 0.065:
		set["min_bid"] = "null"
	case p < 0.075:
		set["cluster_id"] = strconv.Itoa(100 + rng.IntN(900))
	case p < 0.08:
		set["dph_total"] = "null"
	case p < 0.081:
		set["num_gpus"] = `"two"`
	case p < 0.082:
		set["dph_total"], set["search"], set["dph_base"] = "null", "null", "0"
	}
	buf.WriteByte('{')
	for i, m := range template {
		if i > 0 {
			buf.WriteString(", ")
		}
		buf.WriteString(strconv.Quote(m.key))
		buf.WriteString(": ")
		if v, ok := set[m.key]; ok {
			buf.WriteString(v)
		} else {
			buf.Write(m.raw)
		}
	}
	buf.WriteByte('}')
}

// pyFloat formats f as Vast's Python server does: the shortest repr, a ".0" on whole numbers,
// an exponent below 1e-4 (7.407407407407407e-05).
func pyFloat(f float64) string {
	switch a := math.Abs(f); {
	case a == math.Trunc(a) && a < 1e16:
		return strconv.FormatFloat(f, 'f', 1, 64)
	case a < 1e-4:
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
