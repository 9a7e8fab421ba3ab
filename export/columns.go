package export

import (
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
)

// columns are the CSV columns of a record kind T, a schema type: its fields in their order,
// named by their JSON tags, so that the CSV header is the JSON's keys and a new field is a new
// column of both. Cells are written as:
//
//   - time.Time: UTC, RFC 3339; decimal.Decimal: fixed decimals (schema.PriceDecimals unless
//     the kind says otherwise), so a price is exact and a column lines up;
//   - a nil pointer: empty (JSON null); a list: its items joined by ';';
//   - text, integers, floats and booleans as Go formats them (floats without a needless
//     decimal).
type columns[T any] struct {
	names []string
	cells []func(reflect.Value) string
}

// columnsOf returns T's columns; decimals overrides the places of a decimal column by name. It
// panics on a field it cannot write, or an override of no column, programming errors the
// vocabulary test finds.
func columnsOf[T any](decimals map[string]int32) columns[T] {
	t := reflect.TypeFor[T]()
	var c columns[T]
	overridden := 0
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || f.Anonymous {
			panic(fmt.Sprintf("export: %s.%s has no JSON name to be a column", t.Name(), f.Name))
		}
		places, ok := decimals[name]
		if ok {
			overridden++
		} else {
			places = schema.PriceDecimals
		}
		cell, err := cellOf(f.Type, places)
		if err != nil {
			panic(fmt.Sprintf("export: column %s of %s: %v", name, t.Name(), err))
		}
		c.names = append(c.names, name)
		c.cells = append(c.cells, cell)
	}
	if overridden != len(decimals) {
		panic(fmt.Sprintf("export: decimals %v name a column %s does not have", decimals, t.Name()))
	}
	return c
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	decimalType = reflect.TypeFor[decimal.Decimal]()
)

// cellOf returns the formatter of a field of type t. The value it is given is addressable.
func cellOf(t reflect.Type, places int32) (func(reflect.Value) string, error) {
	switch t {
	case timeType:
		return func(v reflect.Value) string { return v.Addr().Interface().(*time.Time).UTC().Format(time.RFC3339) }, nil
	case decimalType:
		return func(v reflect.Value) string { return v.Addr().Interface().(*decimal.Decimal).StringFixed(places) }, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		elem, err := cellOf(t.Elem(), places)
		if err != nil {
			return nil, err
		}
		return func(v reflect.Value) string {
			if v.IsNil() {
				return ""
			}
			return elem(v.Elem())
		}, nil
	case reflect.String:
		return reflect.Value.String, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(v reflect.Value) string { return strconv.FormatUint(v.Uint(), 10) }, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(v reflect.Value) string { return strconv.FormatInt(v.Int(), 10) }, nil
	case reflect.Float64:
		return func(v reflect.Value) string { return strconv.FormatFloat(v.Float(), 'f', -1, 64) }, nil
	case reflect.Bool:
		return func(v reflect.Value) string { return strconv.FormatBool(v.Bool()) }, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return func(v reflect.Value) string {
				items := make([]string, v.Len())
				for i := range items {
					items[i] = v.Index(i).String()
				}
				return strings.Join(items, ";")
			}, nil
		}
	}
	return nil, fmt.Errorf("no CSV form for %s", t)
}

// row returns r as a CSV record under c.names.
func (c columns[T]) row(r *T) []string {
	v := reflect.ValueOf(r).Elem()
	out := make([]string, len(c.cells))
	for i, cell := range c.cells {
		out[i] = cell(v.Field(i))
	}
	return out
}

// writeCSV writes rows under c's header; every cell passes textcell.CSV.
func writeCSV[T any](w io.Writer, c columns[T], rows []T) error {
	cw := textcell.NewCSVWriter(w)
	if err := cw.Write(c.names); err != nil {
		return err
	}
	for i := range rows {
		if err := cw.Write(c.row(&rows[i])); err != nil {
			return err
		}
	}
	return cw.Flush()
}
