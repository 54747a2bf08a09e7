package dataset

import (
	"context"
	"database/sql"
	"fmt"
	"math"
)

// The bank table: a bank's direct-marketing calls, one row per client, in
// the shape of the UCI Bank Marketing data (Moro, Cortez and Rita 2014;
// 45,211 rows and 17 attributes in bank-full.csv) that Protivash et al.
// reconstruct under IDP: id (the privacy unit, as `load --add-id` adds it),
// then age, job, marital, education, default, balance, housing, loan,
// contact, day, month, duration, campaign, pdays, previous, poutcome and y.
// Widths are mixed as they are there: two wide numeric columns (balance, a
// few thousand distinct values; duration, over a thousand), three of middle
// width (age, pdays, previous) and twelve narrow ones of 2 to 31 values.
//
// Each column's marginal is drawn to be close to the public data's and the
// columns depend on each other as they do there: job on age, marital on
// age, education on job, balance on age, job and default, housing and loan
// on age and job, contact on month, earlier contact (pdays, previous,
// poutcome) on month, and the outcome y on duration, poutcome, month,
// contact, housing and job. The generator is fixed in this file, so each
// column's domain is public knowledge (the config may declare it without
// looking at the data). No row is any real client's.
const (
	BankTableName   = "bank"
	DefaultBankRows = 45_211

	bankAgeMin, bankAgeMax                = 18, 95
	bankBalanceMin, bankBalanceMax        = -10_000, 110_000
	bankDurationMax                       = 5_000
	bankCampaignMax                       = 63
	bankPdaysMax                          = 999 // days since the last contact of an earlier campaign; -1: never
	bankPreviousMax                       = 275
	bankNeverContacted                    = -1
	bankStream                     uint64 = 0x62616e6b // "bank": separates this stream from other generators'
)

// Category lists, in the order the public data's documentation lists them
// where it does; indexes below refer to these orders.
var (
	bankJobs = []string{"admin.", "blue-collar", "entrepreneur", "housemaid", "management", "retired",
		"self-employed", "services", "student", "technician", "unemployed", "unknown"}
	bankMaritals   = []string{"divorced", "married", "single", "unknown"}
	bankEducations = []string{"primary", "secondary", "tertiary", "unknown"}
	bankNoYes      = []string{"no", "yes"}
	bankContacts   = []string{"cellular", "telephone", "unknown"}
	bankMonths     = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	bankPoutcomes  = []string{"failure", "other", "success", "unknown"}
)

const (
	jobAdmin = iota
	jobBlueCollar
	jobEntrepreneur
	jobHousemaid
	jobManagement
	jobRetired
	jobSelfEmployed
	jobServices
	jobStudent
	jobTechnician
	jobUnemployed
	jobUnknown
	bankJobCount // the size of the per-job tables
)

const (
	poutcomeFailure = iota
	poutcomeOther
	poutcomeSuccess
	poutcomeUnknown
)

// BankTable describes the bank table with its public domains.
func BankTable() Table {
	r := func(name string, lo, hi int64, doc string) Column {
		return Column{Name: name, Type: TypeInteger, HasRange: true, Min: lo, Max: hi, Doc: doc}
	}
	c := func(name string, cats []string, doc string) Column {
		return Column{Name: name, Type: TypeText, Categories: clone(cats), Doc: doc}
	}
	return Table{
		Name:        BankTableName,
		PrivacyUnit: "id",
		UnitKeyed:   true,
		Columns: []Column{
			{Name: "id", Type: TypeInteger, Doc: "client number 1..rows: the privacy unit"},
			r("age", bankAgeMin, bankAgeMax, "age in years"),
			c("job", bankJobs, "type of job"),
			c("marital", bankMaritals, "marital status (divorced includes widowed)"),
			c("education", bankEducations, ""),
			c("default", bankNoYes, "has credit in default"),
			r("balance", bankBalanceMin, bankBalanceMax, "average yearly balance in euros: wide"),
			c("housing", bankNoYes, "has a housing loan"),
			c("loan", bankNoYes, "has a personal loan"),
			c("contact", bankContacts, "how the client was last called"),
			r("day", 1, 31, "day of the month of the last call"),
			c("month", bankMonths, "month of the last call"),
			r("duration", 0, bankDurationMax, "length of the last call in seconds: wide"),
			r("campaign", 1, bankCampaignMax, "calls to this client in this campaign"),
			r("pdays", bankNeverContacted, bankPdaysMax, "days since a call of an earlier campaign; -1: never called"),
			r("previous", 0, bankPreviousMax, "calls to this client before this campaign"),
			c("poutcome", bankPoutcomes, "outcome of the earlier campaign"),
			c("y", bankNoYes, "subscribed a term deposit"),
		},
	}
}

// bankColumnDefs are the columns' SQLite definitions, in table order;
// "default" is a reserved word and is quoted.
var bankColumnDefs = []string{
	"id INTEGER PRIMARY KEY", "age INTEGER NOT NULL", "job TEXT NOT NULL", "marital TEXT NOT NULL",
	"education TEXT NOT NULL", `"default" TEXT NOT NULL`, "balance INTEGER NOT NULL", "housing TEXT NOT NULL",
	"loan TEXT NOT NULL", "contact TEXT NOT NULL", "day INTEGER NOT NULL", "month TEXT NOT NULL",
	"duration INTEGER NOT NULL", "campaign INTEGER NOT NULL", "pdays INTEGER NOT NULL",
	"previous INTEGER NOT NULL", "poutcome TEXT NOT NULL", "y TEXT NOT NULL",
}

// BankOptions choose the bank table to generate.
type BankOptions struct {
	Rows int64  // number of clients, at least 1
	Seed uint64 // the same seed and Rows give the same table
}

// GenerateBank writes a new SQLite file at path holding the bank table (see
// BankTable). The i-th row depends only on the seed and i.
func GenerateBank(ctx context.Context, path string, o BankOptions, w WriteOptions) error {
	if o.Rows < 1 {
		return fmt.Errorf("bank: rows must be at least 1, got %d", o.Rows)
	}
	gen := newBankGenerator(o.Seed)
	return buildNewFile(ctx, path, w.Force, generatedFileMode, func(ctx context.Context, db *sql.DB) error {
		return createAndFill(ctx, db, BankTable(), bankColumnDefs, o.Rows, w.Progress, func(row []any) error {
			gen.next().fill(row)
			return nil
		})
	})
}

// client is one generated row; categorical columns are indexes into their
// category lists.
type client struct {
	id, age, balance, day, duration, campaign, pdays, previous int64
	job, marital, education, month, contact, poutcome          int
	defaulted, housing, loan, subscribed                       bool
}

func (c client) fill(row []any) {
	yesNo := func(b bool) string { return bankNoYes[b2i(b)] }
	row[0], row[1], row[2], row[3] = c.id, c.age, bankJobs[c.job], bankMaritals[c.marital]
	row[4], row[5], row[6], row[7] = bankEducations[c.education], yesNo(c.defaulted), c.balance, yesNo(c.housing)
	row[8], row[9], row[10], row[11] = yesNo(c.loan), bankContacts[c.contact], c.day, bankMonths[c.month]
	row[12], row[13], row[14], row[15] = c.duration, c.campaign, c.pdays, c.previous
	row[16], row[17] = bankPoutcomes[c.poutcome], yesNo(c.subscribed)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// bankGenerator draws clients one after another from a single random
// stream.
type bankGenerator struct {
	r      *rng
	nextID int64
	bankDists
}

func newBankGenerator(seed uint64) *bankGenerator {
	return &bankGenerator{r: newRNG(seed, bankStream), nextID: 1, bankDists: newBankDists()}
}

func (g *bankGenerator) next() client {
	r := g.r
	c := client{id: g.nextID}
	g.nextID++
	c.age = bankAgeMin + int64(g.age.draw(r))
	c.job = atAge(g.job, c.age).draw(r)
	c.marital = atAge(g.marital, c.age).draw(r)
	c.education = g.education[c.job].draw(r)
	c.defaulted = r.chance(defaultRate[c.job])
	c.balance = g.drawBalance(c)
	c.housing = r.chance(housingRate(c.age, c.job))
	c.loan = r.chance(loanRate(c.job, c.defaulted))
	c.month = g.month.draw(r)
	c.day = 1 + int64(g.day.draw(r))
	c.contact = g.drawContact(c.age, c.month)
	c.campaign = 1 + int64(g.campaign.draw(r))
	g.drawEarlierCampaign(&c)
	c.duration = clampRound(math.Exp(math.Log(180)+0.8*r.normal()), 0, bankDurationMax)
	c.subscribed = r.chance(subscribeRate(c))
	return c
}

// drawBalance: a lognormal balance around a median set by age and job,
// with some clients at exactly 0 and some overdrawn; a client in default
// is mostly overdrawn or at 0.
func (g *bankGenerator) drawBalance(c client) int64 {
	r := g.r
	zero, overdrawn := 0.08, 0.08
	if c.defaulted {
		zero, overdrawn = 0.25, 0.45
	}
	u := r.float64()
	z := r.normal()
	switch {
	case u < zero:
		return 0
	case u < zero+overdrawn:
		return clampRound(-math.Exp(math.Log(250)+0.9*z), bankBalanceMin, 0)
	}
	median := 520 * jobWealth[c.job] * (1 + 0.02*float64(c.age-bankAgeMin))
	return clampRound(math.Exp(math.Log(median)+1.15*z), 1, bankBalanceMax)
}

// drawContact: the contact of most calls in May and June is unknown (as in
// the public data, whose first campaign did not record it); older clients
// are more often called on a landline.
func (g *bankGenerator) drawContact(age int64, month int) int {
	if g.r.chance(unknownContactRate[month]) {
		return 2
	}
	landline := 0.07
	if age >= 60 {
		landline = 0.3
	}
	return b2i(g.r.chance(landline))
}

// drawEarlierCampaign sets pdays, previous and poutcome: most clients were
// never called before (pdays -1, previous 0, poutcome unknown); clients
// called in the later months more often were.
func (g *bankGenerator) drawEarlierCampaign(c *client) {
	r := g.r
	if !r.chance(contactedBeforeRate[c.month]) {
		c.pdays, c.previous, c.poutcome = bankNeverContacted, 0, poutcomeUnknown
		return
	}
	// Calls cluster about three months, six months and a year after the
	// earlier campaign's, with a spread of others.
	switch u := r.float64(); {
	case u < 0.4:
		c.pdays = clampRound(95+10*r.normal(), 1, 871)
	case u < 0.7:
		c.pdays = clampRound(185+15*r.normal(), 1, 871)
	case u < 0.85:
		c.pdays = clampRound(360+20*r.normal(), 1, 871)
	default:
		c.pdays = 1 + int64(r.uint64n(871))
	}
	c.previous = 1 + int64(g.previous.draw(r))
	if r.chance(0.005) { // a few clients called many times over
		c.previous = 20 + int64(r.uint64n(bankPreviousMax-19))
	}
	c.poutcome = g.poutcome.draw(r)
}

// subscribeRate is the chance of a yes: a logistic model in which the
// length of the call matters most, then an earlier success, the month and
// the contact, as in the public data (about 12% say yes).
func subscribeRate(c client) float64 {
	logit := -2.3 + 1.6*(math.Log(float64(c.duration)+1)-math.Log(180))
	if c.poutcome == poutcomeSuccess {
		logit += 3.0
	}
	switch bankMonths[c.month] {
	case "mar", "sep", "oct", "dec":
		logit += 1.3
	case "may":
		logit -= 0.4
	}
	if c.contact == 2 {
		logit -= 0.9
	}
	if c.housing {
		logit -= 0.5
	}
	if c.job == jobStudent || c.job == jobRetired {
		logit += 0.5
	}
	return 1 / (1 + math.Exp(-logit))
}

func housingRate(age int64, job int) float64 {
	p := 0.6
	switch {
	case age < 30:
		p = 0.5
	case age >= 60:
		p = 0.12
	}
	switch job {
	case jobBlueCollar, jobServices:
		p += 0.15
	case jobRetired, jobStudent:
		p -= 0.2
	}
	return math.Max(p, 0.03)
}

func loanRate(job int, defaulted bool) float64 {
	p := loanByJob[job]
	if defaulted {
		p += 0.2
	}
	return p
}
