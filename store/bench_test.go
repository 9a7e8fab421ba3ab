package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
)

// BenchmarkInsertOffers measures batch inserts of 100k offers into the local ClickHouse; it
// reports rows/s. Run with `make bench` (it needs the local server).
func BenchmarkInsertOffers(b *testing.B) {
	s := storetest.Open(b)
	ctx := context.Background()
	const rows = 100_000
	models := []string{"H100-SXM-80GB", "A100-SXM-80GB", "RTX-4090-24GB", "L40S-48GB", "H200-SXM-141GB"}
	providers := []string{"vastai", "runpod", "lambda", "coreweave"}
	at := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	batch := make([]schema.Offer, rows)
	for i := range batch {
		o := offer(providers[i%len(providers)], fmt.Sprintf("ask-%d", i), models[i%len(models)], schema.OnDemand, at, "1.5", uint16(1+i%8))
		o.PriceUSDPerGPUHour = decimal.New(int64(100000+i%50000), -5)
		batch[i] = o
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := s.InsertOffers(ctx, fmt.Sprintf("bench-%d", i), batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
