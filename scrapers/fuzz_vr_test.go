package scrapers_test

import (
	"testing"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// checkParsed holds for any parser output: an error means no offers; every offer is complete.
func checkParsed(t *testing.T, provider string, offers []schema.Offer, err error) {
	t.Helper()
	if err != nil && len(offers) != 0 {
		t.Fatalf("error %v with %d offers", err, len(offers))
	}
	for _, o := range offers {
		if o.Provider != provider || o.OfferID == "" || o.GPUCount == 0 || o.RunID != vrRun.ID {
			t.Fatalf("incomplete offer %+v", o)
		}
		if !o.PriceUSDPerHour.IsPositive() || !o.PriceUSDPerGPUHour.Equal(schema.PerGPU(o.PriceUSDPerHour, o.GPUCount)) {
			t.Fatalf("bad prices %s / %s for %d GPUs", o.PriceUSDPerHour, o.PriceUSDPerGPUHour, o.GPUCount)
		}
		if o.GPUModel == "" && !o.HasFlag(schema.FlagUnknownGPU) {
			t.Fatalf("unknown GPU %q without flag", o.GPUNameRaw)
		}
		if o.PriceType != schema.OnDemand && o.PriceType != schema.Spot {
			t.Fatalf("price type %q", o.PriceType)
		}
	}
}

func FuzzParseVast(f *testing.F) {
	f.Add(vrRead(f, "vastai_offers.json"))
	f.Add([]byte(`{"offers": [{"id": 1, "num_gpus": 65536, "gpu_name": "H100 SXM", "gpu_ram": 1e308, "dph_total": 1e308}]}`))
	f.Add([]byte(`{"offers": [{"id": 2, "num_gpus": 1.5, "dph_total": -1, "min_bid": 1e-9, "geolocation": ",,,"}]}`))
	f.Add([]byte(`{"offers": null}`))
	f.Add([]byte(`{"offers": [null, {}, []]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, _, err := scrapers.ParseVast(body, vrRun, scrapers.DefaultVastURL)
		checkParsed(t, scrapers.VastName, offers, err)
	})
}

func FuzzParseRunPod(f *testing.F) {
	f.Add(vrRead(f, "runpod_gputypes.json"))
	f.Add(vrRead(f, "runpod_gputypes_traps.json"))
	f.Add([]byte(`{"data": {"gpuTypes": [{"id": "x", "securePrice": 1e400}]}}`))
	f.Add([]byte(`{"errors": [{"message": ""}], "data": {"gpuTypes": null}}`))
	f.Add([]byte(`{"data": {"gpuTypes": [null, {"id": "NVIDIA H100 NVL", "communityPrice": 0.5, "lowestPrice": {"uninterruptablePrice": 0.5}}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, _, err := scrapers.ParseRunPod(body, vrRun, scrapers.DefaultRunPodURL)
		checkParsed(t, scrapers.RunPodName, offers, err)
	})
}

func BenchmarkParseVast(b *testing.B) {
	body := vrRead(b, "vastai_market.json")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := scrapers.ParseVast(body, vrRun, scrapers.DefaultVastURL); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseRunPod(b *testing.B) {
	body := vrRead(b, "runpod_gputypes.json")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := scrapers.ParseRunPod(body, vrRun, scrapers.DefaultRunPodURL); err != nil {
			b.Fatal(err)
		}
	}
}
