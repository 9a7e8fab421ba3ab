package redact

import (
	"bytes"
	"slices"
	"testing"
)

// wholeText applies the shapes the plain way, each expression over all of b: what
// redactShapes must equal.
func wholeText(b []byte) []byte {
	for _, s := range shapes {
		b = s.re.ReplaceAll(b, s.repl)
	}
	return b
}

var shapeSeeds = []string{
	`{"url":"https://api.example/v1?api_key=abc123&limit=5","note":"Bearer eyJhbGciOiJIUzI1NiJ9.x"}`,
	`<a href='clickhouse://gpucost:hunter2@db:9000/x?password=pw;token=t0k3n'>link</a>`,
	`Authorization: BASIC dXNlcjpwYXNzd29yZA== and "TOKEN   \n\t abcdefgh12" then token short`,
	`plain text with no credential at all, just = signs a=b and colons: here`,
	`x?KEY=1&Sig=abc#frag ;secret=s3cr3t"quoted"&auth=zz<tag>&pwd=p`,
	`redis://:onlypassword@host/0 ftp://user:pa:ss@h mailto:someone@example.com`,
	`"a":"b","c":"d"`,
	``,
}

func TestShapesByPieceEqualWholeText(t *testing.T) {
	for _, s := range shapeSeeds {
		if got, want := redactShapes([]byte(s)), wholeText([]byte(s)); !bytes.Equal(got, want) {
			t.Errorf("redactShapes(%q)\n = %q\nwant %q", s, got, want)
		}
	}
	// Every shape is in a seed, so the comparison is not only of texts left unchanged.
	for _, sh := range shapes {
		if !slices.ContainsFunc(shapeSeeds, sh.re.MatchString) {
			t.Errorf("no seed holds the shape %s", sh.re)
		}
	}
}

func FuzzShapesByPieceEqualWholeText(f *testing.F) {
	for _, s := range shapeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in := bytes.Clone(b)
		if got, want := redactShapes(b), wholeText(in); !bytes.Equal(got, want) {
			t.Errorf("redactShapes(%q)\n = %q\nwant %q", in, got, want)
		}
	})
}
