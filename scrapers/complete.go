package scrapers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"golang.org/x/net/html"
)

// A parser proves that the body it reads arrived whole before it trusts what it found, so a
// page cut short is an error naming the provider, never a smaller market (docs/providers.md
// §6.2). JSON bodies decode to their end with nothing after them; HTML pages end with their
// closing </html> tag and close every table they open. The same checks bound the memory a
// parse takes: JSON collections are decoded one element at a time, HTML pages are tokenized
// before a tree of them is built.

// decodeJSON decodes a whole JSON body into v. The document must run to the end of the body
// with nothing after it but white space: a body that ends inside the document (an empty one
// included) is ErrIncomplete; trailing data, any other syntax error and a document of the wrong
// shape are ErrLayoutChanged. Errors returned by UnmarshalJSON methods of v pass unchanged.
func decodeJSON(body []byte, what string, v any) error {
	err := json.Unmarshal(body, v)
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case len(bytes.TrimSpace(body)) == 0:
		return fmt.Errorf("%w: decoding %s: the body is empty", ErrIncomplete, what)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &syn) && syn.Offset >= int64(len(body)):
		return fmt.Errorf("%w: decoding %s: the body ends inside the JSON document (%d bytes)", ErrIncomplete, what, len(body))
	case syn != nil || errors.As(err, &typ):
		return fmt.Errorf("%w: decoding %s: %w", ErrLayoutChanged, what, err)
	}
	return err
}

// eachElement calls f with each element of the JSON array data, in order, decoding one element
// at a time so that memory follows the largest element rather than the array. data is valid
// JSON (as an UnmarshalJSON method receives it); a value that is not an array is
// ErrLayoutChanged. The bytes f gets are reused for the next element: f must not keep them.
func eachElement(data []byte, f func(i int, raw []byte) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return fmt.Errorf("%w: %s where an array was expected", ErrLayoutChanged, jsonKind(data))
	}
	var raw json.RawMessage
	for i := 0; dec.More(); i++ {
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("%w: element #%d: %w", ErrLayoutChanged, i, err)
		}
		if err := f(i, raw); err != nil {
			return err
		}
	}
	return nil
}

// eachMember calls f with each member of the JSON object data, in order, one at a time (see
// eachElement, whose rules it follows).
func eachMember(data []byte, f func(key string, raw []byte) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("%w: %s where an object was expected", ErrLayoutChanged, jsonKind(data))
	}
	var raw json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return fmt.Errorf("%w: object key %v: %v", ErrLayoutChanged, t, err)
		}
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("%w: member %q: %w", ErrLayoutChanged, clip(key, 60), err)
		}
		if err := f(key, raw); err != nil {
			return err
		}
	}
	return nil
}

// jsonKind names the kind of a JSON value for messages: "an object", "null", ...
func jsonKind(data []byte) string {
	v := bytes.TrimSpace(data)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// Bounds of the HTML pages the parsers build a tree of. The pricing pages have some tens of
// thousands of tokens (at the density of testdata/coreweave_pricing.html, 74 per kB, CoreWeave's
// 1 MB page has about 75,000) and no token larger than an inline script of a few hundred kB; a
// tree of the largest page these bounds allow takes some tens of MB, whatever the body limit.
const (
	maxPageTokens = 300_000 // tags, text runs and comments
	maxPageToken  = 4 << 20 // bytes of the largest one
)

// checkPage proves that an HTML page arrived whole, and is one the parsers may build a tree of:
// its last token, but for white space and comments, is the closing </html> tag, every <table>
// it opens is closed, it has at most maxPageTokens tokens and none over maxPageToken bytes. A
// page cut short (an empty body included) is ErrIncomplete, a body that is no HTML document at
// all (no doctype, no <html>) ErrLayoutChanged, too many or too large tokens ErrBodyTooLarge.
func checkPage(body []byte) error {
	z := html.NewTokenizer(bytes.NewReader(body))
	z.SetMaxBuf(maxPageToken)
	var (
		tokens, opened, shut int  // tokens; <table> start and end tags
		document             bool // a doctype or an <html> start tag was seen
		closed               bool // the last token that counts closed the html element
	)
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if err := z.Err(); err != io.EOF {
				if errors.Is(err, html.ErrBufferExceeded) {
					return fmt.Errorf("%w: an HTML token of more than %d bytes", ErrBodyTooLarge, maxPageToken)
				}
				return fmt.Errorf("%w: tokenizing the page: %w", ErrLayoutChanged, err)
			}
			break
		}
		if tokens++; tokens > maxPageTokens {
			return fmt.Errorf("%w: more than %d HTML tokens", ErrBodyTooLarge, maxPageTokens)
		}
		switch tt {
		case html.CommentToken:
		case html.TextToken:
			if len(bytes.TrimSpace(z.Raw())) > 0 {
				closed = false
			}
		case html.StartTagToken:
			switch name, _ := z.TagName(); string(name) {
			case "table":
				opened++
			case "html":
				document = true
			}
			closed = false
		case html.DoctypeToken:
			document, closed = true, false
		case html.EndTagToken:
			name, _ := z.TagName()
			if string(name) == "table" {
				shut++
			}
			closed = string(name) == "html" && bytes.HasSuffix(z.Raw(), []byte(">"))
		default:
			closed = false
		}
	}
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return fmt.Errorf("%w: the body is empty", ErrIncomplete)
	case !closed && !document:
		return fmt.Errorf("%w: not an HTML page (no doctype, no <html> element): %q", ErrLayoutChanged, snippet(body))
	case !closed:
		return fmt.Errorf("%w: the page does not end with </html> (%d bytes)", ErrIncomplete, len(body))
	case opened != shut:
		return fmt.Errorf("%w: the page opens %d <table> elements and closes %d", ErrIncomplete, opened, shut)
	}
	return nil
}
