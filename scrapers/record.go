package scrapers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gpucost/gpucost/redact"
)

// IndexFile is the name of the per-source index in a recorded folder.
const IndexFile = "index.json"

// Index is DIR/<source>/index.json: the recorded exchanges of one source, in request order.
type Index struct {
	Source  string       `json:"source"`
	Entries []IndexEntry `json:"entries"`
}

// IndexEntry is one recorded exchange. RequestSHA256 is the SHA-256 of the request body with its
// secrets masked (redact.Redactor.Bytes), as it is matched on replay.
type IndexEntry struct {
	File          string    `json:"file"`   // body file beside the index, e.g. 001-bundles.body
	Method        string    `json:"method"` // request method
	URL           string    `json:"url"`    // request URL, secrets redacted
	RequestSHA256 string    `json:"request_sha256"`
	RequestBody   string    `json:"request_body,omitempty"` // for reading only; matching uses the hash
	Status        int       `json:"status"`
	ContentType   string    `json:"content_type"`
	FetchedAt     time.Time `json:"fetched_at"`
}

func bodyHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// maxIndexedRequestBody bounds the request body copied into the index for readers.
const maxIndexedRequestBody = 4 << 10

// recorder saves responses into DIR/<source>/.
type recorder struct {
	dir string
	red *redact.Redactor

	mu      sync.Mutex
	indexes map[string]*Index
}

func newRecorder(dir string, red *redact.Redactor) *recorder {
	return &recorder{dir: dir, red: red, indexes: map[string]*Index{}}
}

// save records one exchange. The request body is hashed with its secrets masked, as the
// replayer hashes it: a recording keeps no digest of a credential sent in a body (an OAuth2
// client secret), and replays whatever the credentials. credentials marks an answer that
// carries credentials (an access token): its body is kept with every credential-shaped field
// masked, which the values the Redactor knows cannot cover (the token is new).
func (r *recorder) save(source string, req *http.Request, reqBody []byte, resp *http.Response, body []byte, now time.Time, credentials bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	dir := filepath.Join(r.dir, safeName(source))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	idx := r.indexes[source]
	if idx == nil {
		idx = &Index{Source: source}
		r.indexes[source] = idx
	}
	e := IndexEntry{
		File:          fmt.Sprintf("%03d-%s.body", len(idx.Entries)+1, slug(req.URL.Path, req.URL.Hostname())),
		Method:        req.Method,
		URL:           r.red.URL(req.URL.String()),
		RequestSHA256: bodyHash(r.red.Bytes(reqBody)),
		Status:        resp.StatusCode,
		ContentType:   resp.Header.Get("Content-Type"),
		FetchedAt:     now.UTC(),
	}
	if len(reqBody) <= maxIndexedRequestBody {
		e.RequestBody = r.red.String(string(reqBody))
	}
	// A provider may echo a key (a 401 body "invalid key Bearer …"): the folder keeps none.
	kept := r.red.Data(body)
	if credentials {
		kept = r.red.Bytes(body)
	}
	if err := os.WriteFile(filepath.Join(dir, e.File), kept, 0o644); err != nil {
		return err
	}
	idx.Entries = append(idx.Entries, e)
	return writeIndex(filepath.Join(dir, IndexFile), idx)
}

// writeIndex writes an index as indented JSON, atomically.
func writeIndex(path string, idx *Index) error {
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// replayer serves requests from DIR/<source>/.
type replayer struct {
	dir string
	red *redact.Redactor

	mu      sync.Mutex
	sources map[string]*replaySource
}

type replaySource struct {
	dir     string
	entries []IndexEntry
	used    []bool
	err     error
}

func newReplayer(dir string, red *redact.Redactor) *replayer {
	return &replayer{dir: dir, red: red, sources: map[string]*replaySource{}}
}

// serve answers req with the first unused recorded exchange of source whose method, redacted
// URL and request body hash (secrets masked, as recorded) match (or, when all are used, the
// last matching one again).
func (r *replayer) serve(source string, req *http.Request, reqBody []byte) (*http.Response, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rs := r.sources[source]
	if rs == nil {
		rs = loadReplaySource(filepath.Join(r.dir, safeName(source)))
		r.sources[source] = rs
	}
	redURL := r.red.URL(req.URL.String())
	if rs.err != nil {
		return nil, fmt.Errorf("replaying %s %s: %w", req.Method, redURL, rs.err)
	}
	hash := bodyHash(r.red.Bytes(reqBody))
	found, reuse := -1, -1
	for i, e := range rs.entries {
		if e.Method != req.Method || e.URL != redURL || e.RequestSHA256 != hash {
			continue
		}
		if !rs.used[i] {
			found = i
			break
		}
		reuse = i
	}
	if found < 0 {
		found = reuse
	}
	if found < 0 {
		return nil, fmt.Errorf("replaying %s %s (request sha256 %s) from %s: %w", req.Method, redURL, hash[:12], rs.dir, ErrNotRecorded)
	}
	rs.used[found] = true
	e := rs.entries[found]
	body, err := os.ReadFile(filepath.Join(rs.dir, e.File))
	if err != nil {
		return nil, fmt.Errorf("replaying %s: %w", redURL, err)
	}
	h := http.Header{}
	if e.ContentType != "" {
		h.Set("Content-Type", e.ContentType)
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status)),
		StatusCode:    e.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

func loadReplaySource(dir string) *replaySource {
	rs := &replaySource{dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			rs.err = fmt.Errorf("no recording in %s: %w", dir, ErrNotRecorded)
		} else {
			rs.err = fmt.Errorf("reading recording index: %w", err)
		}
		return rs
	}
	var idx Index
	if err := json.Unmarshal(b, &idx); err != nil {
		rs.err = fmt.Errorf("decoding recording index %s: %w", filepath.Join(dir, IndexFile), err)
		return rs
	}
	rs.entries = idx.Entries
	rs.used = make([]bool, len(idx.Entries))
	return rs
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9]+`)

// slug turns a URL path into a short file-name part ("/api/v0/bundles/" -> "bundles").
func slug(path, host string) string {
	parts := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	s := host
	if len(parts) > 0 {
		s = parts[len(parts)-1]
	}
	s = strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if s == "" {
		s = "response"
	}
	if len(s) > 40 {
		s = s[:40]
	}
	return s
}

// safeName makes a source name usable as a folder name.
func safeName(source string) string {
	s := strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(source), "-"), "-")
	if s == "" {
		return "unknown"
	}
	return s
}
