package proxy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"countwall/mechanisms"
	"countwall/pgerror"
)

// SET countwall.confidence = 0.95 makes every answer row carry the interval
// that holds the true count at that confidence, in two more columns, ci_low
// and ci_high (float8, named in the RowDescription). The interval comes
// from the mechanism's noise parameters and the published answer only
// (mechanisms.Intervaler), never from the data: the library's confidence
// interval under laplace and gaussian, the documented range of the bounded
// and sticky mechanisms that publish it, the answer itself under exact.
// Where a mechanism states none (its noise depends on the data, or its
// parameters are not published, or the answer is a 0/1 threshold) both
// are NULL. `SET countwall.confidence = off` turns them off.

// confidenceSetting is the session setting's name.
const confidenceSetting = "countwall.confidence"

// The confidence levels accepted: below 0.5 an interval says little, and
// at 1 the Laplace and Gaussian intervals are unbounded.
const (
	minConfidence = 0.5
	maxConfidence = 0.999999
)

// confidenceRE is a confidence written as a plain decimal (no exponent,
// hexadecimal or NaN).
var confidenceRE = regexp.MustCompile(`^0?\.[0-9]+$`)

// intervalColumns are the two columns an interval adds.
var intervalColumns = []Column{{Name: "ci_low", Type: ColumnFloat8}, {Name: "ci_high", Type: ColumnFloat8}}

func (s *Session) setConfidence(value string) (*Result, error) {
	v := strings.ToLower(strings.Trim(strings.TrimSpace(value), `'"`))
	s.mu.Lock()
	defer s.mu.Unlock()
	if v == "off" || v == "default" {
		delete(s.settings, confidenceSetting)
		return &Result{Tag: "SET"}, nil
	}
	c, err := strconv.ParseFloat(v, 64)
	if !confidenceRE.MatchString(v) || err != nil || c < minConfidence || c > maxConfidence {
		return nil, &pgerror.Error{Code: pgerror.InvalidParameterValue,
			Message: fmt.Sprintf("%s must be a decimal between %g and %g, or off", confidenceSetting, minConfidence, maxConfidence),
			Hint:    "SET countwall.confidence = 0.95 adds each answer's 95% interval as ci_low and ci_high."}
	}
	s.settings[confidenceSetting] = v
	return &Result{Tag: "SET"}, nil
}

// confidence is the session's confidence level, when intervals are on.
func (s *Session) confidence() (float64, bool) {
	s.mu.Lock()
	v, ok := s.settings[confidenceSetting]
	s.mu.Unlock()
	if !ok {
		return 0, false
	}
	c, err := strconv.ParseFloat(v, 64)
	return c, err == nil
}

// confidenceText is SHOW countwall.confidence.
func (s *Session) confidenceText() string {
	if c, ok := s.confidence(); ok {
		return strconv.FormatFloat(c, 'g', -1, 64)
	}
	return "off"
}

// withIntervalColumns adds the interval columns to a query's when the
// session asks for intervals.
func (s *Session) withIntervalColumns(cols []Column) []Column {
	if _, ok := s.confidence(); !ok {
		return cols
	}
	return append(cols, intervalColumns...)
}

// addIntervals adds each released row's interval to an answered query's
// result (rows are the answers not dropped, in order), when the session
// asks for intervals.
func (s *Session) addIntervals(rt *runtime, req *mechanisms.Request, answers []mechanisms.Answer, res *Result) {
	c, ok := s.confidence()
	if !ok {
		return
	}
	res.Columns = append(res.Columns, intervalColumns...)
	res.intervals = true
	row := 0
	for _, a := range answers {
		if a.Dropped {
			continue
		}
		lo, hi, ok := mechanisms.Interval(rt.mech, req, a, c)
		if ok {
			res.Rows[row] = append(res.Rows[row], Value{Float: lo}, Value{Float: hi})
		} else {
			res.Rows[row] = append(res.Rows[row], Value{Null: true}, Value{Null: true})
		}
		row++
	}
}
