package pgwire

// oidBool is PostgreSQL's boolean type, which schema discovery's flags
// (attnotnull, relhasindex, ...) are sent as.
const oidBool = 16

// encodeBool is a boolean in text ("t", "f") or binary (one byte) form.
func encodeBool(b, binaryFormat bool) []byte {
	switch {
	case binaryFormat && b:
		return []byte{1}
	case binaryFormat:
		return []byte{0}
	case b:
		return []byte("t")
	default:
		return []byte("f")
	}
}
