package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/ch-go"
	"github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// Planning reads the whole latest market, a million offers at market scale. Read row by row
// through clickhouse-go, that costs 24 allocations an offer (every text value copied, every
// price a new big.Int) and more than a second of garbage collection; read as columns through
// ch-go, the columnar client clickhouse-go is built on, the blocks' dictionaries give each
// provider, region and GPU name once, an offer id is a slice of its block's text, and a price
// repeated across the market is made once. ch-go speaks only servers that take settings as
// text (Store.readsColumnar); on older ones (18.16) planning reads rows.

// readsColumnar says whether planning reads this store's market as columns: over the native
// protocol (a DSN of http:// speaks to a port ch-go cannot), to a server that takes settings as
// text, as ch-go sends them (from revision 54429 on: not 18.16).
func (s *Store) readsColumnar() bool {
	return s.chOpts.Protocol == clickhouse.Native && s.version.takesTextSettings()
}

// readPlanOffers runs q, a SELECT of toPlanColumns with ? placeholders for args, on a ch-go
// connection of its own, and reads each row into the offer next returns.
func (s *Store) readPlanOffers(ctx context.Context, what, q string, args []any, next func() *schema.Offer) error {
	body, err := inlineArgs(q, args)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	client, err := s.dialColumnar(ctx)
	if err != nil {
		return s.connectError(err)
	}
	defer client.Close()
	var cols planColumnBlock
	err = client.Do(ctx, ch.Query{
		Body:     body,
		Settings: s.columnarSettings(),
		Result:   cols.results(),
		OnResult: func(context.Context, proto.Block) error { return cols.read(next) },
	})
	if err != nil {
		return s.queryError(what, driverException(err))
	}
	return nil
}

// dialColumnar connects ch-go to the first of the DSN's addresses that answers, with its user,
// TLS, compression and timeouts, to the store's database.
func (s *Store) dialColumnar(ctx context.Context) (*ch.Client, error) {
	opts := ch.Options{
		Database:    s.database,
		User:        s.chOpts.Auth.Username,
		Password:    s.chOpts.Auth.Password,
		TLS:         s.chOpts.TLS,
		ClientName:  "gpucost",
		DialTimeout: or(s.chOpts.DialTimeout, 30*time.Second), // clickhouse-go's defaults
		ReadTimeout: or(s.chOpts.ReadTimeout, 300*time.Second),
	}
	if c := s.chOpts.Compression; c != nil {
		switch c.Method {
		case clickhouse.CompressionLZ4:
			opts.Compression = ch.CompressionLZ4
		case clickhouse.CompressionLZ4HC:
			opts.Compression = ch.CompressionLZ4HC
		case clickhouse.CompressionZSTD:
			opts.Compression = ch.CompressionZSTD
		}
	}
	var errs []error
	for _, addr := range s.chOpts.Addr {
		opts.Address = addr
		client, err := ch.Dial(ctx, opts)
		if err == nil {
			return client, nil
		}
		errs = append(errs, driverException(err))
	}
	return nil, errors.Join(errs...)
}

// columnarSettings are the settings every query of the store carries: the DSN's and this
// server's (serverVersion.settings).
func (s *Store) columnarSettings() []ch.Setting {
	var set []ch.Setting
	add := func(from clickhouse.Settings) {
		for k, v := range from {
			// As clickhouse-go sends them: a custom setting as such, the others important (a
			// server that does not know one refuses the query rather than ignoring it).
			st := ch.Setting{Key: k, Value: fmt.Sprint(v), Important: true}
			switch v := v.(type) {
			case clickhouse.CustomSetting:
				st.Value, st.Important, st.Custom = v.Value, false, true
			case bool:
				st.Value = "0"
				if v {
					st.Value = "1"
				}
			}
			set = append(set, st)
		}
	}
	add(s.chOpts.Settings)
	add(s.version.settings(s.cluster != ""))
	return set
}

// driverException gives a ch-go server error the type the rest of the store reads errors as
// (queryError, connectError), so both clients' errors read alike.
func driverException(err error) error {
	var ex *ch.Exception
	if errors.As(err, &ex) {
		return &clickhouse.Exception{Code: int32(ex.Code), Name: ex.Name, Message: ex.Message, StackTrace: ex.Stack}
	}
	return err
}

// inlineArgs puts args into q's ? placeholders, in order, as literals: ch-go binds nothing
// client-side. A time is its Unix second, a number its shortest exact decimal form, and a text
// the unhex() of its bytes, which no content can break out of. q must hold no other ?.
func inlineArgs(q string, args []any) (string, error) {
	if n := strings.Count(q, "?"); n != len(args) {
		return "", fmt.Errorf("the query has %d placeholders for %d values", n, len(args))
	}
	var b strings.Builder
	for _, arg := range args {
		before, after, _ := strings.Cut(q, "?")
		b.WriteString(before)
		q = after
		switch v := arg.(type) {
		case time.Time:
			fmt.Fprintf(&b, "toDateTime(%d, 'UTC')", v.Unix())
		case string:
			fmt.Fprintf(&b, "unhex('%X')", v)
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return "", fmt.Errorf("no literal for the number %v", v)
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		case int:
			b.WriteString(strconv.Itoa(v))
		default:
			return "", fmt.Errorf("no literal for a value of type %T", arg)
		}
	}
	b.WriteString(q)
	return b.String(), nil
}

// planColumnBlock holds the columns of toPlanColumns as ch-go decodes them, one block at a time.
type planColumnBlock struct {
	observedAt, validUntil                               *proto.ColDateTime
	validUntilNull                                       *proto.ColNullable[time.Time]
	provider, tier, region, country, gpuModel, priceType lowCardinality
	intraNode, interNode                                 lowCardinality
	offerID                                              proto.ColStr
	gpuCount                                             proto.ColUInt16
	vramGB                                               proto.ColFloat64
	price, pricePerGPU                                   proto.ColDecimal64
	availableCount                                       *proto.ColNullable[uint32]
	reliability                                          *proto.ColNullable[float64]
	interned                                             map[string]string         // every text of the dictionaries, once
	prices                                               map[int64]decimal.Decimal // every price, once
}

// results names the columns in toPlanColumns' order, each with where ch-go decodes it.
func (c *planColumnBlock) results() proto.Results {
	c.observedAt = &proto.ColDateTime{Location: time.UTC}
	c.validUntil = &proto.ColDateTime{Location: time.UTC}
	c.validUntilNull = proto.NewColNullable[time.Time](c.validUntil)
	c.availableCount = new(proto.ColUInt32).Nullable()
	c.reliability = new(proto.ColFloat64).Nullable()
	c.interned = map[string]string{}
	c.prices = map[int64]decimal.Decimal{}
	for _, lc := range c.texts() {
		lc.col.Index = new(proto.ColStr)
	}
	return proto.Results{
		{Name: "observed_at", Data: c.observedAt},
		{Name: "valid_until", Data: c.validUntilNull},
		{Name: "provider", Data: &c.provider.col},
		{Name: "offer_id", Data: &c.offerID},
		{Name: "tier", Data: &c.tier.col},
		{Name: "region", Data: &c.region.col},
		{Name: "country", Data: &c.country.col},
		{Name: "gpu_model", Data: &c.gpuModel.col},
		{Name: "gpu_count", Data: &c.gpuCount},
		{Name: "vram_gb", Data: &c.vramGB},
		{Name: "price_type", Data: &c.priceType.col},
		{Name: "price_usd_per_hour", Data: &c.price},
		{Name: "price_usd_per_gpu_hour", Data: &c.pricePerGPU},
		{Name: "intra_node", Data: &c.intraNode.col},
		{Name: "inter_node", Data: &c.interNode.col},
		{Name: "available_count", Data: c.availableCount},
		{Name: "reliability", Data: c.reliability},
	}
}

// texts are the LowCardinality(String) columns.
func (c *planColumnBlock) texts() []*lowCardinality {
	return []*lowCardinality{&c.provider, &c.tier, &c.region, &c.country, &c.gpuModel, &c.priceType, &c.intraNode, &c.interNode}
}

// read puts the rows of the block just decoded into the offers next returns.
func (c *planColumnBlock) read(next func() *schema.Offer) error {
	for _, lc := range c.texts() {
		if err := lc.intern(c.interned); err != nil {
			return err
		}
	}
	n := c.offerID.Rows()
	ids := string(c.offerID.Buf) // one copy per block: each offer id is a slice of it
	// The values behind the nullable columns' pointers, one slice per block.
	var (
		available   = make([]uint32, n)
		reliability = make([]float64, n)
		validUntil  = make([]time.Time, n)
	)
	for i := range n {
		o := next()
		o.ObservedAt = c.observedAt.Row(i).UTC() // whatever zone the column's type names
		if !c.validUntilNull.IsElemNull(i) {
			validUntil[i] = c.validUntil.Row(i).UTC()
			o.ValidUntil = &validUntil[i]
		}
		o.Provider = c.provider.row(i)
		p := c.offerID.Pos[i]
		o.OfferID = ids[p.Start:p.End]
		o.Tier = schema.Tier(c.tier.row(i))
		o.Region = c.region.row(i)
		o.Country = c.country.row(i)
		o.GPUModel = c.gpuModel.row(i)
		o.GPUCount = c.gpuCount[i]
		o.VRAMGB = c.vramGB[i]
		o.PriceType = schema.PriceType(c.priceType.row(i))
		o.PriceUSDPerHour = c.decimal(c.price[i])
		o.PriceUSDPerGPUHour = c.decimal(c.pricePerGPU[i])
		o.IntraNode = schema.IntraNode(c.intraNode.row(i))
		o.InterNode = schema.InterNode(c.interNode.row(i))
		if !c.availableCount.IsElemNull(i) {
			available[i] = c.availableCount.Values.Row(i)
			o.AvailableCount = &available[i]
		}
		if !c.reliability.IsElemNull(i) {
			reliability[i] = c.reliability.Values.Row(i)
			o.Reliability = &reliability[i]
		}
	}
	return nil
}

// decimal is the price of raw micro-dollars, shared by every offer at that price (a Decimal
// is never changed in place).
func (c *planColumnBlock) decimal(raw proto.Decimal64) decimal.Decimal {
	d, ok := c.prices[int64(raw)]
	if !ok {
		d = decimal.New(int64(raw), -schema.PriceDecimals) // the columns' scale: Decimal(18, 6)
		c.prices[int64(raw)] = d
	}
	return d
}

// lowCardinality is a LowCardinality(String) column as the server sends it: a dictionary and,
// per row, its position in it.
type lowCardinality struct {
	col   proto.ColLowCardinalityRaw
	words []string // the block's dictionary, interned
}

// intern reads the block's dictionary into words, each text taken from texts when it is there.
func (lc *lowCardinality) intern(texts map[string]string) error {
	dict, ok := lc.col.Index.(*proto.ColStr)
	if !ok {
		return fmt.Errorf("reading a LowCardinality(String) column: its dictionary is a %T", lc.col.Index)
	}
	lc.words = lc.words[:0]
	for i := range dict.Rows() {
		text, ok := texts[string(dict.RowBytes(i))]
		if !ok {
			text = dict.Row(i)
			texts[text] = text
		}
		lc.words = append(lc.words, text)
	}
	return nil
}

// row is the text of row i.
func (lc *lowCardinality) row(i int) string {
	switch lc.col.Key {
	case proto.KeyUInt8:
		return lc.words[lc.col.Keys8[i]]
	case proto.KeyUInt16:
		return lc.words[lc.col.Keys16[i]]
	case proto.KeyUInt32:
		return lc.words[lc.col.Keys32[i]]
	default:
		return lc.words[lc.col.Keys64[i]]
	}
}
