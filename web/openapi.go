package web

import (
	_ "embed"
	"net/http"
	"sync"

	"github.com/goccy/go-yaml"
)

// openAPIYAML is the API's OpenAPI 3.1 document, written in YAML to be read and reviewed;
// openapi_test.go keeps it equal to the handlers.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// openAPI is the document as JSON, served at /api/v1/openapi.json. It is converted at the first
// request for it, not at start-up: every gpucost command links this package, and the conversion
// costs tens of milliseconds and megabytes that only serve, and only when asked, needs.
var openAPI = sync.OnceValue(func() []byte {
	doc, err := yaml.YAMLToJSON(openAPIYAML)
	if err != nil {
		panic("web: openapi.yaml: " + err.Error())
	}
	return doc
})

// serveOpenAPI serves the OpenAPI document.
func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if _, err := params(r); err != nil {
		writeError(w, http.StatusBadRequest, apiError{Error: err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(openAPI())
}
