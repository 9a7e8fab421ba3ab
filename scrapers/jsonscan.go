package scrapers

// jsonScanner reads a JSON document in place, one token at a time, checking its syntax as it
// goes by the grammar encoding/json checks (RFC 8259: white space, literals, numbers, strings and
// their escapes; bytes of any value above 0x1f in strings). It allocates nothing and returns
// slices of the document. The first syntax error, or nesting deeper than maxScanDepth, fails it:
// from then on every read returns zero values and failed reports true, so a caller reads on and
// checks once at the end. A failed scan says nothing about the document but that this scanner
// does not take it; the caller hands such a document to encoding/json, which names the error.
type jsonScanner struct {
	data   []byte
	pos    int
	depth  int
	failed bool
}

// maxScanDepth bounds the nesting of arrays and objects the scanner follows (encoding/json's
// limit is 10,000; deeper documents are left to it).
const maxScanDepth = 1000

// fail stops the scan.
func (s *jsonScanner) fail() {
	s.failed = true
	s.pos = len(s.data)
}

// peek skips white space and returns the next byte, 0 at the end of the document.
func (s *jsonScanner) peek() byte {
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; c {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return c
		}
	}
	return 0
}

// atEnd reports whether nothing but white space is left.
func (s *jsonScanner) atEnd() bool { return s.peek() == 0 && s.pos == len(s.data) }

// open reads the opening bracket ('{' or '['), which the caller has peeked.
func (s *jsonScanner) open() {
	if s.depth++; s.depth > maxScanDepth {
		s.fail()
		return
	}
	s.pos++
}

// next moves to element i of the array or object being read, whose closing bracket is end: past
// the comma that must follow element i-1, when i > 0. It returns false, past the closing
// bracket, when there is no element i (and on failure). Read element i (its key and colon first,
// in an object) before calling next again.
func (s *jsonScanner) next(end byte, i int) bool {
	switch c := s.peek(); {
	case c == end:
		s.pos++
		s.depth--
		return false
	case i == 0:
		return !s.failed
	case c == ',':
		s.pos++
		return true
	}
	s.fail()
	return false
}

// key reads an object member's key and the colon after it (see str).
func (s *jsonScanner) key() (key []byte, plain bool) {
	key, plain = s.str()
	if s.peek() != ':' {
		s.fail()
		return nil, false
	}
	s.pos++
	return key, plain
}

// String bytes: strPlain needs no decoding; the others end the fast loop of str.
const (
	strPlain = iota
	strQuote
	strEscape
	strControl
	strNonASCII
)

// strClass classifies the bytes of a string's text.
var strClass = func() (t [256]uint8) {
	for c := range 0x20 {
		t[c] = strControl
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = strNonASCII
	}
	t['"'], t['\\'] = strQuote, strEscape
	return t
}()

// str reads a string and returns its text between the quotes, undecoded. plain reports that the
// text is the string's value as it stands: ASCII without escapes. Otherwise the caller decodes
// it with encoding/json (escapes, and the U+FFFD that replaces invalid UTF-8).
func (s *jsonScanner) str() (text []byte, plain bool) {
	if s.peek() != '"' {
		s.fail()
		return nil, false
	}
	start := s.pos + 1
	plain = true
	for i := start; i < len(s.data); {
		switch strClass[s.data[i]] {
		case strPlain:
			i++
		case strQuote:
			s.pos = i + 1
			return s.data[start:i], plain
		case strNonASCII:
			plain = false
			i++
		case strEscape:
			plain = false
			n := escapeLen(s.data[i:])
			if n == 0 {
				s.fail()
				return nil, false
			}
			i += n
		default: // a control character
			s.fail()
			return nil, false
		}
	}
	s.fail() // no closing quote
	return nil, false
}

// escapeLen returns the length of the escape sequence b starts with, 0 when it is none.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 {
			return 0
		}
		for _, c := range b[2:6] {
			if !isHex(c) {
				return 0
			}
		}
		return 6
	}
	return 0
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number reads a number and returns its text: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?
func (s *jsonScanner) number() []byte {
	s.peek()
	d, start := s.data, s.pos
	i := start
	digits := func() bool { // one or more
		j := i
		for i < len(d) && isDigit(d[i]) {
			i++
		}
		return i > j
	}
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case !digits():
		s.fail()
		return nil
	}
	if i < len(d) && d[i] == '.' {
		i++
		if !digits() {
			s.fail()
			return nil
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if !digits() {
			s.fail()
			return nil
		}
	}
	s.pos = i
	return d[start:i]
}

// literal reads the literal word (true, false or null), which the caller has peeked the first
// byte of.
func (s *jsonScanner) literal(word string) {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		s.fail()
		return
	}
	s.pos += len(word)
}

// null reads a null if one comes next and reports whether it did.
func (s *jsonScanner) null() bool {
	if s.peek() != 'n' {
		return false
	}
	s.literal("null")
	return !s.failed
}

// skip reads a value of any kind.
func (s *jsonScanner) skip() {
	switch c := s.peek(); {
	case c == '{':
		s.open()
		for i := 0; s.next('}', i); i++ {
			s.key()
			s.skip()
		}
	case c == '[':
		s.open()
		for i := 0; s.next(']', i); i++ {
			s.skip()
		}
	case c == '"':
		s.str()
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	case c == '-' || isDigit(c):
		s.number()
	default:
		s.fail()
	}
}
