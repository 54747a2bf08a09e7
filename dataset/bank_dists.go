package dataset

// The bank table's distributions, shaped after the counts of the public
// bank-full.csv (45,211 rows); integer weights, per thousand unless said.

// bankDists are the categorical distributions the bank generator draws from.
type bankDists struct {
	age                            weighted // index 0 is bankAgeMin
	job, marital                   []ageTable
	education                      [bankJobCount]weighted
	month, day, campaign, previous weighted
	poutcome                       weighted // failure, other, success among clients called before
}

func newBankDists() bankDists {
	var d bankDists
	ages := make([]uint64, bankAgeMax-bankAgeMin+1)
	for i := range ages {
		ages[i] = bankAgeWeight(bankAgeMin + int64(i))
	}
	d.age = newWeighted(ages...)

	d.job = []ageTable{
		//                      admin blue entre house manag retir self serv stud tech unemp unkn
		{bankAgeMin, newWeighted(90, 150, 10, 10, 60, 0, 20, 120, 400, 100, 30, 10)},
		{26, newWeighted(120, 230, 35, 25, 220, 10, 37, 95, 5, 180, 30, 5)},
		{55, newWeighted(80, 180, 40, 50, 170, 250, 30, 60, 0, 100, 30, 10)},
		{60, newWeighted(20, 20, 10, 50, 70, 780, 20, 10, 0, 10, 0, 10)},
	}
	d.marital = []ageTable{
		//                      divorced married single unknown
		{bankAgeMin, newWeighted(10, 140, 848, 2)},
		{26, newWeighted(50, 500, 448, 2)},
		{35, newWeighted(150, 700, 148, 2)},
		{50, newWeighted(200, 748, 50, 2)},
	}

	//                                         primary secondary tertiary unknown
	d.education = [bankJobCount]weighted{
		jobAdmin:        newWeighted(40, 820, 110, 30),
		jobBlueCollar:   newWeighted(390, 550, 20, 40),
		jobEntrepreneur: newWeighted(120, 370, 460, 50),
		jobHousemaid:    newWeighted(500, 310, 150, 40),
		jobManagement:   newWeighted(30, 60, 880, 30),
		jobRetired:      newWeighted(350, 430, 160, 60),
		jobSelfEmployed: newWeighted(80, 360, 530, 30),
		jobServices:     newWeighted(80, 830, 50, 40),
		jobStudent:      newWeighted(50, 540, 240, 170),
		jobTechnician:   newWeighted(20, 690, 260, 30),
		jobUnemployed:   newWeighted(200, 550, 220, 30),
		jobUnknown:      newWeighted(180, 250, 130, 440),
	}

	// Calls by month of the public data (counts): May is the busiest.
	d.month = newWeighted(1403, 2649, 477, 2932, 13766, 5341, 6895, 6247, 579, 738, 3970, 214)
	// Calls by day of the month (counts, rounded): no calls on some days.
	d.day = newWeighted(322, 1293, 1079, 1445, 1910, 1932, 1817, 1842, 1561, 524, 1479, 1603, 1585, 1848, 1703,
		1415, 1939, 2308, 1757, 2752, 2026, 905, 939, 447, 840, 1035, 1121, 1830, 1745, 1566, 643)

	// Calls in this campaign, 1..bankCampaignMax: mostly one to three, then
	// a tail falling by a quarter with each further call.
	campaign := []uint64{39000, 27700, 12200, 7800, 3900, 2900, 1600, 1200, 700, 600}
	for w := uint64(600); len(campaign) < bankCampaignMax; {
		w = max(w*3/4, 2)
		campaign = append(campaign, w)
	}
	d.campaign = newWeighted(campaign...)

	// Earlier calls of a client called before, 1..: geometric, halving.
	previous := make([]uint64, 19)
	for i, w := 0, uint64(1<<18); i < len(previous); i, w = i+1, w/2 {
		previous[i] = max(w, 1)
	}
	d.previous = newWeighted(previous...)
	d.poutcome = newWeighted(600, 220, 180)
	return d
}

// bankAgeWeight is the weight of one year of age: most clients are 30 to
// 45; few are under 25 or over 60.
func bankAgeWeight(age int64) uint64 {
	switch {
	case age < 22:
		return 20
	case age < 25:
		return 110
	case age < 30:
		return 1000
	case age < 36:
		return 2000
	case age < 40:
		return 1700
	case age < 50:
		return 1200
	case age < 60:
		return 850
	case age < 65:
		return 160
	case age < 80:
		return 70
	default:
		return 15
	}
}

// atAge is the distribution of the last table that applies from age or
// below (tables in increasing fromAge, the first from bankAgeMin).
func atAge(tables []ageTable, age int64) weighted {
	for i := len(tables) - 1; i > 0; i-- {
		if age >= tables[i].fromAge {
			return tables[i].dist
		}
	}
	return tables[0].dist
}

// Per-job rates and factors.
var (
	defaultRate = [bankJobCount]float64{0.016, 0.021, 0.037, 0.014, 0.017, 0.01, 0.019, 0.018, 0.003, 0.017, 0.023, 0.007}
	loanByJob   = [bankJobCount]float64{0.19, 0.17, 0.24, 0.08, 0.13, 0.13, 0.12, 0.2, 0.01, 0.17, 0.08, 0.03}
	// jobWealth scales the median balance.
	jobWealth = [bankJobCount]float64{0.85, 0.8, 1.2, 1.0, 1.3, 1.5, 1.3, 0.75, 0.9, 1.0, 1.0, 1.4}
)

// Per-month rates: the contact unknown (most calls of May and June), and
// a client called in an earlier campaign (most in the later months).
var (
	unknownContactRate  = [12]float64{0.02, 0.03, 0.03, 0.05, 0.5, 0.78, 0.04, 0.03, 0.05, 0.05, 0.04, 0.05}
	contactedBeforeRate = [12]float64{0.3, 0.35, 0.5, 0.35, 0.14, 0.1, 0.09, 0.1, 0.55, 0.5, 0.25, 0.55}
)
