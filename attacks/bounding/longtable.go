package bounding

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"

	_ "modernc.org/sqlite" // the long table is written, and its truth read, with the sqlite driver
)

// WriteLongTable writes a table genomes(person, snp, allele) of people x
// attributes rows into a new SQLite file at path: allele 1 with a
// probability drawn per snp from [0.1, 0.9], seeded.
func WriteLongTable(ctx context.Context, path string, people, attributes int, seed uint64) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return fmt.Errorf("creating the long table: %w", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE genomes (person INTEGER, snp INTEGER, allele INTEGER)`); err != nil {
		return fmt.Errorf("creating the long table: %w", err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	freq := make([]float64, attributes)
	for i := range freq {
		freq[i] = 0.1 + 0.8*r.Float64()
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // committed below
	ins, err := tx.PrepareContext(ctx, `INSERT INTO genomes VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	for p := 1; p <= people; p++ {
		for s := range attributes {
			allele := 0
			if r.Float64() < freq[s] {
				allele = 1
			}
			if _, err := ins.ExecContext(ctx, p, s, allele); err != nil {
				return fmt.Errorf("writing the long table: %w", err)
			}
		}
	}
	return tx.Commit()
}

// truth is what the raw long table says of the marginal: each snp's
// unbounded count and how many of its cells each person is in.
type truth struct {
	counts    []int64 // by snp
	perPerson []int64 // by person: the cells of the marginal the person is in
}

// readTruth reads the marginal's truth from the long table at path, which
// has snps 0..attributes-1.
func readTruth(ctx context.Context, path string, attributes int) (truth, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return truth{}, fmt.Errorf("reading the long table's truth: %w", err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT person, snp FROM genomes WHERE allele = 1`)
	if err != nil {
		return truth{}, fmt.Errorf("reading the long table's truth: %w", err)
	}
	defer rows.Close()
	tr := truth{counts: make([]int64, attributes)}
	perPerson := map[int64]int64{}
	for rows.Next() {
		var person, snp int64
		if err := rows.Scan(&person, &snp); err != nil {
			return truth{}, err
		}
		if snp < 0 || snp >= int64(attributes) {
			return truth{}, fmt.Errorf("the long table has snp %d, outside 0..%d", snp, attributes-1)
		}
		tr.counts[snp]++
		perPerson[person]++
	}
	if err := rows.Err(); err != nil {
		return truth{}, err
	}
	for _, k := range perPerson {
		tr.perPerson = append(tr.perPerson, k)
	}
	return tr, nil
}

// meanCount is the mean true count of a cell.
func (t truth) meanCount() float64 {
	var sum int64
	for _, c := range t.counts {
		sum += c
	}
	return float64(sum) / float64(len(t.counts))
}

// bias is the mean over cells of |true - bounded| under bound g: a person
// in k cells keeps min(k, g) of them and drops the rest, and with one row
// per person and snp, C = 1 drops nothing. No bounded count exceeds its
// true one, so the mean of the differences is the rows dropped over the
// cells, whichever cells the firewall's keyed hash keeps.
func (t truth) bias(g int64) float64 {
	var dropped int64
	for _, k := range t.perPerson {
		dropped += max(k-g, 0)
	}
	return float64(dropped) / float64(len(t.counts))
}
