package export

import (
	"encoding/json"
	"io"
)

// WriteJSON writes v as indented JSON, the form of every JSON gpucost prints or serves.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
