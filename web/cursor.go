package web

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// apiMaxCursorBytes bounds a cursor: it carries a whole query (each value at most
// apiMaxValueBytes) and a position.
const apiMaxCursorBytes = 4096

// A cursor is where the next page of a paged answer (offers, changes) starts, with the query it
// pages: the answer's "next". The client sends it back as ?cursor=…, alone or with limit, and
// gets the page after, of the same query: the filters as the first page understood them, its
// relative times resolved then, so every page covers the same range. A cursor is opaque to
// clients; here it is base64url of JSON {"q": the query's parameters, "a": the position}. It
// is untrusted: its query passes the same checks as a request's, and its position is read
// strictly.
type cursorDoc struct {
	Query map[string]string `json:"q"`
	After json.RawMessage   `json:"a"`
}

// encodeCursor returns the cursor of the page after position of the query q.
func encodeCursor(q url.Values, position any) string {
	doc := cursorDoc{Query: map[string]string{}}
	for name := range q {
		if s := q.Get(name); s != "" {
			doc.Query[name] = s
		}
	}
	after, err := json.Marshal(position)
	if err != nil {
		panic(fmt.Sprintf("web: a cursor position that is not JSON: %v", err)) // positions are plain structs of strings
	}
	doc.After = after
	b, err := json.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("web: a cursor that is not JSON: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// resume returns the parameters of a request: v itself when it has no cursor; else the
// cursor's query, with v's limit when given, and the cursor's position read into after. A
// request with a cursor takes no other parameter than limit: the cursor carries the rest, each
// of its parameters one of allowed and bounded as a request's.
func resume(v url.Values, allowed []string, after any) (url.Values, error) {
	if !v.Has("cursor") {
		return v, nil
	}
	for name := range v {
		if name != "cursor" && name != "limit" {
			return nil, badRequest{name, "a request with a cursor takes only limit besides it (the cursor carries the rest of the query)"}
		}
	}
	bad := badRequest{"cursor", "not a cursor of this endpoint (send back the next of an answer as it is)"}
	raw, err := base64.RawURLEncoding.DecodeString(v.Get("cursor"))
	if err != nil || len(raw) > apiMaxCursorBytes {
		return nil, bad
	}
	var doc cursorDoc
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.After) == 0 {
		return nil, bad
	}
	if err := json.Unmarshal(doc.After, after); err != nil {
		return nil, bad
	}
	out := url.Values{"cursor": {v.Get("cursor")}}
	for name, value := range doc.Query {
		if name == "cursor" || !slices.Contains(allowed, name) || len(value) > apiMaxValueBytes {
			return nil, badRequest{"cursor", "unknown parameter in the cursor, or a value too long (send back the next of an answer as it is)"}
		}
		out.Set(name, value)
	}
	if v.Get("limit") != "" {
		out.Set("limit", v.Get("limit"))
	}
	return out, nil
}

// offerPosition is schema.OfferPosition in a cursor.
type offerPosition struct {
	Price     string `json:"p"`
	Provider  string `json:"pr"`
	OfferID   string `json:"o"`
	PriceType string `json:"t"`
}

func newOfferPosition(p schema.OfferPosition) offerPosition {
	return offerPosition{Price: p.PriceUSDPerGPUHour.String(), Provider: p.Provider, OfferID: p.OfferID, PriceType: string(p.PriceType)}
}

func (p offerPosition) position() (*schema.OfferPosition, error) {
	price, err := decimal.NewFromString(p.Price)
	pt, perr := schema.ParsePriceType(p.PriceType)
	if err != nil || perr != nil || price.IsNegative() {
		return nil, badRequest{"cursor", "the cursor's position is not an offer's"}
	}
	return &schema.OfferPosition{PriceUSDPerGPUHour: price, Provider: p.Provider, OfferID: p.OfferID, PriceType: pt}, nil
}

// changePosition is schema.ChangePosition in a cursor.
type changePosition struct {
	ChangedAt string `json:"at"`
	Provider  string `json:"pr"`
	PriceType string `json:"t"`
	OfferID   string `json:"o"`
}

func newChangePosition(p schema.ChangePosition) changePosition {
	return changePosition{ChangedAt: p.ChangedAt.UTC().Format(time.RFC3339Nano), Provider: p.Provider, PriceType: string(p.PriceType), OfferID: p.OfferID}
}

func (p changePosition) position() (*schema.ChangePosition, error) {
	at, err := time.Parse(time.RFC3339Nano, p.ChangedAt)
	pt, perr := schema.ParsePriceType(p.PriceType)
	if err != nil || perr != nil {
		return nil, badRequest{"cursor", "the cursor's position is not a price change's"}
	}
	return &schema.ChangePosition{ChangedAt: at.UTC(), Provider: p.Provider, PriceType: pt, OfferID: p.OfferID}, nil
}
