package risk

import "countwall/proxy/state/release"

// History is the answered statements of the audit, read one at a time and
// kept as answers only, by analyst: a long history's releases (their
// constants and cells) need not all be held at once.
type History struct {
	analyst string // when set, only this analyst's statements are kept
	rd      *reader
	of      map[string]*analystHistory
}

type analystHistory struct {
	answers  []answer
	sums     []sumAnswer
	answered int // answered statements read (Report.Answered)
	unread   int // of which without their structured record (Report.Unread)
}

// NewHistory is an empty history that keeps the statements of analyst
// (every analyst's when empty).
func NewHistory(analyst string) *History {
	return &History{analyst: analyst, rd: newReader(), of: map[string]*analystHistory{}}
}

// HistoryOf is the history of releases rs.
func HistoryOf(rs []release.Release, analyst string) *History {
	h := NewHistory(analyst)
	for i := range rs {
		h.add(&rs[i])
	}
	return h
}

// Add reads one audited statement.
func (h *History) Add(r release.Release) { h.add(&r) }

func (h *History) add(r *release.Release) {
	if h.analyst != "" && r.Analyst != h.analyst {
		return
	}
	a := h.of[r.Analyst]
	if a == nil {
		a = &analystHistory{}
		h.of[h.rd.in.of(r.Analyst)] = a
	}
	if r.Answered() && r.Kind == "query" {
		a.answered++
		if r.Query == nil {
			a.unread++
		}
	}
	a.answers = h.rd.appendAnswers(a.answers, r)
	a.sums = h.rd.appendSums(a.sums, r)
}

// Unread is how many answered statements, of every analyst kept, came
// without their structured record (release.Query): the solvers read
// nothing of them.
func (h *History) Unread() int {
	n := 0
	for _, a := range h.of {
		n += a.unread
	}
	return n
}

// answersOf is an analyst's answers, in the order read.
func (h *History) answersOf(analyst string) []answer {
	if a := h.of[analyst]; a != nil {
		return a.answers
	}
	return nil
}
