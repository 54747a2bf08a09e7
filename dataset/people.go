package dataset

import (
	"context"
	"database/sql"
	"fmt"
	"math"
)

// The people table: a census-like population with one row per person.
//
// Every column is drawn from distributions fixed in this file, so each
// column's domain is public knowledge (it is in the source code) and may be
// declared in the config without looking at the data. The attributes depend
// on each other the way census attributes do: education, marital status and
// occupation on age; income on occupation, education and suburb; zip on
// suburb; hours on occupation.
//
// The secret bit stands for a sensitive condition. It depends on age alone
// (P(secret=1) = 0.15 + 0.25*age/100, about 0.25 overall) and is otherwise
// independent of every other column, so attribute inference from the public
// columns can do only slightly better than guessing, while reconstruction
// attacks that query the bit itself over subsets of ids can recover it.
const (
	PeopleTableName   = "people"
	DefaultPeopleRows = 100_000
	// PeopleSuburbs is the number of suburbs, named suburb_0001 to
	// suburb_1000; popularity follows Zipf's law (suburb k weighs 1/k), so
	// the rarest suburbs hold about 13 people per 100,000.
	PeopleSuburbs = 1000
	// Each zip code covers four consecutive suburbs: zip = 2000 + (k-1)/4.
	peopleSuburbsPerZip = 4
	peopleZipMin        = 2000
	peopleZipMax        = peopleZipMin + (PeopleSuburbs-1)/peopleSuburbsPerZip
	peopleAgeMax        = 100
	peopleIncomeMax     = 500_000
	peopleHoursMax      = 99
)

var (
	peopleSexes      = []string{"F", "M"}
	peopleEducations = []string{"none", "primary", "secondary", "certificate", "diploma", "bachelor", "master", "doctorate"}
	peopleMaritals   = []string{"never_married", "married", "separated", "divorced", "widowed"}
	// Occupation indexes below refer to this order.
	peopleOccupations = []string{
		"managers", "professionals", "technicians", "community_service", "clerical", "sales",
		"machinery_operators", "labourers", "student", "retired", "unemployed", "home_duties",
	}
)

const (
	occManagers = iota
	occProfessionals
	occTechnicians
	occCommunity
	occClerical
	occSales
	occMachinery
	occLabourers
	occStudent
	occRetired
	occUnemployed
	occHomeDuties
)

// PeopleTable describes the people table with its public domains.
func PeopleTable() Table {
	return Table{
		Name:        PeopleTableName,
		PrivacyUnit: "id",
		UnitKeyed:   true,
		Columns: []Column{
			{Name: "id", Type: TypeInteger, Doc: "person number 1..rows: the privacy unit"},
			{Name: "age", Type: TypeInteger, HasRange: true, Min: 0, Max: peopleAgeMax, Doc: "age in years"},
			{Name: "sex", Type: TypeText, Categories: clone(peopleSexes)},
			{Name: "suburb", Type: TypeText, Categories: peopleSuburbNames(), Doc: "suburb of residence, Zipf-popular: suburb_0001 is the largest"},
			{Name: "zip", Type: TypeInteger, HasRange: true, Min: peopleZipMin, Max: peopleZipMax, Doc: "postcode: four suburbs each"},
			{Name: "income", Type: TypeInteger, HasRange: true, Min: 0, Max: peopleIncomeMax, Doc: "annual income in dollars, rounded to 100; a range too wide to GROUP BY"},
			{Name: "education", Type: TypeText, Categories: clone(peopleEducations), Doc: "highest level reached"},
			{Name: "marital", Type: TypeText, Categories: clone(peopleMaritals)},
			{Name: "occupation", Type: TypeText, Categories: clone(peopleOccupations)},
			{Name: "hours", Type: TypeInteger, HasRange: true, Min: 1, Max: peopleHoursMax, Doc: "usual weekly hours of work, study or care"},
			{Name: "secret", Type: TypeInteger, HasRange: true, Min: 0, Max: 1, Doc: "sensitive bit the attacks try to recover; depends weakly on age only"},
		},
	}
}

func clone(s []string) []string { return append([]string(nil), s...) }

func peopleSuburbNames() []string {
	names := make([]string, PeopleSuburbs)
	for i := range names {
		names[i] = suburbName(i + 1)
	}
	return names
}

func suburbName(k int) string { return fmt.Sprintf("suburb_%04d", k) }

var peopleColumnDefs = []string{
	"id INTEGER PRIMARY KEY",
	"age INTEGER NOT NULL",
	"sex TEXT NOT NULL",
	"suburb TEXT NOT NULL",
	"zip INTEGER NOT NULL",
	"income INTEGER NOT NULL",
	"education TEXT NOT NULL",
	"marital TEXT NOT NULL",
	"occupation TEXT NOT NULL",
	"hours INTEGER NOT NULL",
	"secret INTEGER NOT NULL",
}

// PeopleOptions choose the people table to generate.
type PeopleOptions struct {
	Rows int64  // number of people, at least 1
	Seed uint64 // the same seed and Rows give the same table
	// MaxRowsPerPerson, above 1, makes a long table: person i has 1 to
	// MaxRowsPerPerson rows (uniformly, from the seed), each with the
	// person's attributes and hours drawn afresh, as a table of visits or
	// transactions has. id is then not a key of the table.
	MaxRowsPerPerson int64
}

// maxRowsPerPerson bounds a long table's rows per person.
const maxRowsPerPerson = 1000

// longStream separates the rows-per-person draws from the people's.
const longStream = 0x6c6f6e67 // "long"

// GeneratePeople writes a new SQLite file at path holding the people table
// (see PeopleTable). The contents depend only on o: the same seed and row
// count give identical rows on every run.
func GeneratePeople(ctx context.Context, path string, o PeopleOptions, w WriteOptions) error {
	if o.Rows < 1 {
		return fmt.Errorf("people: rows must be at least 1, got %d", o.Rows)
	}
	if o.MaxRowsPerPerson < 0 || o.MaxRowsPerPerson > maxRowsPerPerson {
		return fmt.Errorf("people: rows per person must be between 1 and %d, got %d", maxRowsPerPerson, o.MaxRowsPerPerson)
	}
	gen := newPeopleGenerator(o.Seed)
	t := PeopleTable()
	if o.MaxRowsPerPerson <= 1 {
		return buildNewFile(ctx, path, w.Force, generatedFileMode, func(ctx context.Context, db *sql.DB) error {
			return createAndFill(ctx, db, t, peopleColumnDefs, o.Rows, w.Progress, func(row []any) error {
				gen.next().fill(row)
				return nil
			})
		})
	}
	perPerson := make([]int64, o.Rows)
	total := int64(0)
	draws := newRNG(o.Seed, longStream)
	for i := range perPerson {
		perPerson[i] = 1 + int64(draws.uint64n(uint64(o.MaxRowsPerPerson)))
		total += perPerson[i]
	}
	defs := append([]string{"id INTEGER NOT NULL"}, peopleColumnDefs[1:]...)
	var p person
	left := int64(0)
	return buildNewFile(ctx, path, w.Force, generatedFileMode, func(ctx context.Context, db *sql.DB) error {
		return createAndFill(ctx, db, t, defs, total, w.Progress, func(row []any) error {
			if left == 0 {
				p = gen.next()
				left = perPerson[p.id-1]
			} else {
				p.hours = int64(draws.uint64n(peopleHoursMax + 1))
			}
			left--
			p.fill(row)
			return nil
		})
	})
}

// person is one generated row.
type person struct {
	id, age, zip, income, hours, secret   int64
	sex, suburb, education, marital, occu string
}

func (p person) fill(row []any) {
	row[0], row[1], row[2], row[3], row[4] = p.id, p.age, p.sex, p.suburb, p.zip
	row[5], row[6], row[7], row[8], row[9], row[10] = p.income, p.education, p.marital, p.occu, p.hours, p.secret
}

// peopleGenerator draws people one after another from a single random
// stream, so the i-th person depends only on the seed and i.
type peopleGenerator struct {
	r      *rng
	nextID int64

	age, suburb                     weighted
	sexYoung, sexOld                weighted
	eduAdult, eduYoungAdult, eduOld weighted
	marital                         []ageTable
	occTeen, occAdult, occGraduate  weighted
	occOld                          weighted
	suburbAffluence                 []float64 // log-income shift per suburb
}

// ageTable is a distribution that applies from a minimum age up.
type ageTable struct {
	fromAge int64
	dist    weighted
}

const peopleStream = 0x70656f706c65 // "people": separates this stream from other generators'

func newPeopleGenerator(seed uint64) *peopleGenerator {
	g := &peopleGenerator{r: newRNG(seed, peopleStream), nextID: 1}

	// Age pyramid per single year, weights per thousand, shaped like a
	// developed country's census: flat to 40, thinning after 60.
	ages := make([]uint64, peopleAgeMax+1)
	for a := range ages {
		switch {
		case a < 20:
			ages[a] = 620
		case a < 40:
			ages[a] = 680
		case a < 60:
			ages[a] = 630
		case a < 70:
			ages[a] = 520
		case a < 80:
			ages[a] = 380
		case a < 85:
			ages[a] = 200
		case a < 90:
			ages[a] = 120
		case a < 95:
			ages[a] = 50
		case a < 100:
			ages[a] = 15
		default:
			ages[a] = 3
		}
	}
	g.age = newWeighted(ages...)

	// Zipf popularity, in integer weights so that drawing is exact.
	suburbs := make([]uint64, PeopleSuburbs)
	g.suburbAffluence = make([]float64, PeopleSuburbs)
	for i := range suburbs {
		suburbs[i] = 1_000_000 / uint64(i+1)
		// A fixed pseudo-random affluence per suburb in [-0.25, 0.25),
		// from a hash of its number so that it does not depend on the seed.
		h := splitmix64(uint64(i + 1))
		g.suburbAffluence[i] = 0.5*float64(h>>11)*0x1p-53 - 0.25
	}
	g.suburb = newWeighted(suburbs...)

	g.sexYoung = newWeighted(493, 507) // F, M: more boys are born
	g.sexOld = newWeighted(600, 400)   // women live longer

	//                         none primary secondary cert diploma bachelor master doctorate
	g.eduYoungAdult = newWeighted(1, 2, 600, 200, 110, 85, 2, 0)
	g.eduAdult = newWeighted(10, 30, 320, 200, 120, 220, 80, 20)
	g.eduOld = newWeighted(20, 80, 450, 180, 100, 120, 40, 10)

	//                               never married separated divorced widowed
	g.marital = []ageTable{
		{0, newWeighted(1, 0, 0, 0, 0)},
		{18, newWeighted(900, 90, 8, 2, 0)},
		{25, newWeighted(450, 500, 30, 18, 2)},
		{35, newWeighted(200, 620, 60, 110, 10)},
		{55, newWeighted(100, 620, 40, 150, 90)},
		{75, newWeighted(50, 450, 20, 100, 380)},
	}

	// managers professionals technicians community clerical sales machinery labourers student retired unemployed home
	g.occTeen = newWeighted(0, 0, 10, 40, 10, 120, 5, 80, 680, 0, 45, 10)
	g.occAdult = newWeighted(100, 120, 140, 100, 120, 90, 70, 110, 30, 10, 50, 60)
	g.occGraduate = newWeighted(180, 450, 60, 90, 70, 40, 5, 10, 40, 5, 20, 30)
	g.occOld = newWeighted(30, 50, 10, 30, 30, 20, 5, 10, 5, 760, 5, 45)
	return g
}

// splitmix64 is a fixed integer hash (the SplitMix64 finaliser).
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Median log-income by occupation (ln dollars): e.g. 11.4 is about $89,000.
var occupationLogIncome = [...]float64{
	occManagers: 11.4, occProfessionals: 11.3, occTechnicians: 11.0, occCommunity: 10.7,
	occClerical: 10.8, occSales: 10.5, occMachinery: 10.9, occLabourers: 10.6,
	occStudent: 8.6, occRetired: 10.2, occUnemployed: 9.4, occHomeDuties: 8.5,
}

// Typical weekly hours by occupation: mean and spread.
var occupationHours = [...][2]float64{
	occManagers: {45, 8}, occProfessionals: {41, 8}, occTechnicians: {39, 7}, occCommunity: {30, 10},
	occClerical: {35, 8}, occSales: {28, 11}, occMachinery: {42, 8}, occLabourers: {36, 10},
	occStudent: {28, 10}, occRetired: {8, 6}, occUnemployed: {10, 8}, occHomeDuties: {30, 15},
}

func (g *peopleGenerator) next() person {
	r := g.r
	p := person{id: g.nextID}
	g.nextID++

	p.age = int64(g.age.draw(r))
	if p.age >= 80 {
		p.sex = peopleSexes[g.sexOld.draw(r)]
	} else {
		p.sex = peopleSexes[g.sexYoung.draw(r)]
	}

	k := g.suburb.draw(r) // 0-based suburb index
	p.suburb = suburbName(k + 1)
	p.zip = peopleZipMin + int64(k/peopleSuburbsPerZip)

	var edu int
	switch {
	case p.age < 5:
		edu = 0
	case p.age < 12:
		edu = 1
	case p.age < 18:
		edu = 2
	case p.age < 22:
		edu = g.eduYoungAdult.draw(r)
	case p.age < 65:
		edu = g.eduAdult.draw(r)
	default:
		edu = g.eduOld.draw(r)
	}
	p.education = peopleEducations[edu]

	for i := len(g.marital) - 1; i >= 0; i-- {
		if p.age >= g.marital[i].fromAge {
			p.marital = peopleMaritals[g.marital[i].dist.draw(r)]
			break
		}
	}

	var occ int
	switch {
	case p.age < 15:
		occ = occStudent
	case p.age < 20:
		occ = g.occTeen.draw(r)
	case p.age < 65 && edu >= 5: // bachelor or higher
		occ = g.occGraduate.draw(r)
	case p.age < 65:
		occ = g.occAdult.draw(r)
	default:
		occ = g.occOld.draw(r)
	}
	p.occu = peopleOccupations[occ]

	// Income: log-normal around the occupation's median, raised by
	// education and shifted by the suburb's affluence; children earn nothing.
	z := r.normal()
	if p.age < 15 {
		p.income = 0
	} else {
		logIncome := occupationLogIncome[occ] + 0.06*float64(edu-2) + g.suburbAffluence[k] + 0.55*z
		p.income = 100 * clampRound(math.Exp(logIncome)/100, 0, peopleIncomeMax/100)
	}

	h := occupationHours[occ]
	if p.age < 5 {
		h = [2]float64{20, 8} // childcare and preschool
	}
	p.hours = clampRound(h[0]+h[1]*r.normal(), 1, peopleHoursMax)

	// The secret bit: P(1) = 0.15 + 0.25*age/100, drawn as an exact integer
	// comparison: u < 1500 + 25*age out of 10000.
	if r.uint64n(10_000) < uint64(1500+25*p.age) {
		p.secret = 1
	}
	return p
}
