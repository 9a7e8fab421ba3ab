package schema_test

import (
	"testing"

	"github.com/gpucost/gpucost/schema"
)

func TestContinent(t *testing.T) {
	tests := []struct {
		country, region, want string
	}{
		{"US", "us-texas", "north-america"}, // Vast: the country decides
		{"DE", "de-bavaria", "europe"},
		{"TW", "tw-taiwan", "asia"},
		{"", "north-america", "north-america"}, // CoreWeave names the continent
		{"", "europe", "europe"},
		{"", "us-east-1", "north-america"}, // Lambda's region names
		{"", "europe-central-1", "europe"},
		{"", "asia-northeast-2", "asia"},
		{"", "me-west-1", "asia"},
		{"", "australia-east-1", "oceania"},
		{"", "", ""},                     // RunPod publishes no location
		{"", "US-TX-3", "north-america"}, // a data-center id that starts with the country
		{"", "nowhere-1", ""},
		{"ZZ", "", ""},
	}
	for _, tt := range tests {
		o := schema.Offer{Country: tt.country, Region: tt.region}
		if got := o.Continent(); got != tt.want {
			t.Errorf("Continent(%q, %q) = %q, want %q", tt.country, tt.region, got, tt.want)
		}
	}
}

func TestEveryCountryOnOneContinent(t *testing.T) {
	for _, code := range []string{"US", "CA", "MX", "BR", "GB", "FR", "DE", "PL", "NO", "SE", "CZ", "RU", "JP", "KR", "CN", "IN", "SG", "TH", "AU", "NZ", "ZA", "AE", "IL"} {
		if !schema.KnownCountry(code) {
			t.Errorf("%s is not a known country", code)
		}
	}
	if schema.KnownCountry("UK") || schema.KnownCountry("us") {
		t.Error("UK (not ISO: GB) and lower case are not country codes")
	}
}
