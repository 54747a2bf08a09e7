package plan

import (
	"fmt"
	"strconv"
)

// How a GROUP BY reads a stored value. SQLite keeps a column's values in
// several storage classes (a column without a declared type may hold the
// integer 1, the real 1.0, the text '1' and the blob x'31' side by side) and
// groups them apart, while the answer renders each as its text. A cell must
// be the sum of everything that maps to it, so every backend groups by the
// value as the column's catalog type reads it:
//
//   - a text column groups by the value's text: integers in decimal, reals in
//     their shortest exact form, text as stored, blobs as their bytes; so 1,
//     1.0, '1' and x'31' are one group "1", in the text's byte order;
//   - an integer or real column groups by the number, so 1 and 1.0 are one
//     group; a stored text or blob is not a number of the column's type and
//     is read as NULL (the NULL group, outside every declared domain).
//
// The SQL does this itself (groupTextFunc, numericGroupSQL), so that distinct
// units, contributor keys and contribution bounds are computed over the
// merged group; the snapshot maps its value codes the same way (grouping).

// GroupTextFunc is the SQLite scalar function that renders a value as a text
// column's group reads it.
const GroupTextFunc = "countwall_group_text"

// GroupText is the text a text column's group reads a value as; ok is false
// for NULL.
func GroupText(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	case string:
		return v, true
	case []byte:
		return string(v), true
	default:
		return fmt.Sprint(v), true
	}
}
