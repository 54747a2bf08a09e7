package dataset

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"countwall/pglex"
)

// LoadOptions say what LoadCSV imports and where.
type LoadOptions struct {
	CSVPath string // the CSV file; its first row names the columns
	DBPath  string // the SQLite file, created if it does not exist
	Table   string // the table to create
	Unit    string // the privacy-unit column: it must exist and never be empty
	// AddID, when set, adds a column of that name numbering the rows from 1
	// and makes it the privacy unit: for a file with no identifier column,
	// where each row is one person. Unit "rownum" with no such column in the
	// file means AddID "rownum".
	AddID string
	// Delimiter separates fields; 0 detects it from the header line among
	// ',', ';', tab and '|' (public statistical files often use ';').
	Delimiter rune
	// Replace drops an existing table of the same name, in the same
	// transaction as the import; without it an existing table is an error.
	Replace bool
	// Progress, when not nil, follows the rows inserted.
	Progress Progress
}

// ErrTableExists is wrapped by LoadCSV's error for a table that the database
// already has when LoadOptions.Replace is not set.
var ErrTableExists = errors.New("table already exists")

// LoadResult reports what LoadCSV created.
type LoadResult struct {
	// Table has the column names and inferred types, and no domains: a
	// domain must come from public knowledge, not from the data.
	Table       Table
	Rows        int64
	CreatedFile bool // the database file was new
	// Lowered lists the names (the table's, the header's) that were stored
	// in lower case, as given.
	Lowered   []string
	Delimiter rune // the field separator used
	// Warnings are things the data owner should check, such as a unit
	// column with far fewer distinct values than rows.
	Warnings []string
}

// LoadCSV imports a CSV file into a new table of a new or existing SQLite
// database.
//
// The header row gives the column names, which follow CheckName (a name
// such as "Visit Date" is kept, and must be double-quoted in SQL) and are
// distinct ignoring case. Each column's type is inferred over all rows: INTEGER if
// every non-empty value is a base-10 64-bit integer, REAL if every one is a
// decimal number, TEXT otherwise. Numbers may have surrounding blanks; a
// number written with a leading zero (such as the zip code 02134) or an
// integer too large for 64 bits makes its column TEXT, so that no digits are
// lost. A field that is empty or blank is NULL.
//
// The file is read twice: once to check it and infer the types, once to
// insert. A malformed file (a row with the wrong number of fields, bad
// quoting) is reported with its line number before anything is written. A
// new database is built under a temporary name and renamed into place; an
// existing one gets the table in a single transaction.
func LoadCSV(ctx context.Context, o LoadOptions) (LoadResult, error) {
	if err := CheckName("table", o.Table); err != nil {
		return LoadResult{}, err
	}
	if strings.HasPrefix(strings.ToLower(o.Table), "sqlite_") {
		return LoadResult{}, fmt.Errorf("table name %q is reserved by SQLite (it starts with sqlite_)", o.Table)
	}
	if o.DBPath == "" {
		return LoadResult{}, errors.New("no database file given")
	}
	if o.Delimiter == 0 {
		d, err := detectDelimiter(o.CSVPath)
		if err != nil {
			return LoadResult{}, err
		}
		o.Delimiter = d
	}
	scan, err := scanCSV(o.CSVPath, o.Unit, o.AddID, o.Delimiter)
	if err != nil {
		return LoadResult{}, err
	}
	// Names are stored in lower case: the firewall reads an unquoted name in
	// SQL folded to lower case, as PostgreSQL does, and its config keys are
	// lower-cased too, so a column Age could be named nowhere as Age.
	var lowered []string
	lower := func(name string) string {
		if l := strings.ToLower(name); l != name {
			lowered = append(lowered, name)
			return l
		}
		return name
	}
	tableName := lower(o.Table)
	for i, name := range scan.names {
		scan.names[i] = lower(name)
	}
	scan.unit = strings.ToLower(scan.unit)
	t := Table{Name: tableName, PrivacyUnit: scan.unit, Columns: make([]Column, len(scan.names))}
	defs := make([]string, len(scan.names))
	for i, name := range scan.names {
		t.Columns[i] = Column{Name: name, Type: scan.kinds[i].columnType()}
		defs[i] = pglex.QuoteIdentAlways(name) + " " + strings.ToUpper(t.Columns[i].Type)
		if name == scan.unit {
			defs[i] += " NOT NULL"
		}
	}
	// A unit column whose values were all counted and all distinct (or one
	// the load numbered) keys the table; the firewall checks it again when
	// it starts.
	t.UnitKeyed = scan.addedID || (len(scan.units) < maxDistinctTracked && int64(len(scan.units)) == scan.rows)
	res := LoadResult{Table: t, Rows: scan.rows, Lowered: lowered, Delimiter: o.Delimiter, Warnings: scan.unitWarnings()}

	fill := func(ctx context.Context, tx *sql.Tx) error {
		return insertCSV(ctx, tx, o.CSVPath, t, scan.rows, o.Progress, scan.addedID, o.Delimiter)
	}
	create := "CREATE TABLE " + pglex.QuoteIdentAlways(t.Name) + " (" + strings.Join(defs, ", ") + ")"

	_, statErr := os.Stat(o.DBPath)
	if errors.Is(statErr, fs.ErrNotExist) {
		res.CreatedFile = true
		err := buildNewFile(ctx, o.DBPath, false, importedFileMode, func(ctx context.Context, db *sql.DB) error {
			return inTransaction(ctx, db, func(tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, create); err != nil {
					return fmt.Errorf("creating table %s: %w", t.Name, err)
				}
				return fill(ctx, tx)
			})
		})
		return res, err
	}
	if statErr != nil {
		return LoadResult{}, fmt.Errorf("checking %s: %w", o.DBPath, statErr)
	}
	return res, loadIntoExisting(ctx, o, t.Name, create, fill)
}

// loadIntoExisting creates and fills the table in one transaction of an
// existing database, which takes the write lock at once so that the check
// for an existing table and the creation cannot be raced.
func loadIntoExisting(ctx context.Context, o LoadOptions, table, create string, fill func(context.Context, *sql.Tx) error) error {
	dsn, err := sqliteDSN(o.DBPath, "busy_timeout(5000)")
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", dsn+"&_txlock=immediate")
	if err != nil {
		return fmt.Errorf("opening %s: %w", o.DBPath, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	err = inTransaction(ctx, db, func(tx *sql.Tx) error {
		var kind string
		err := tx.QueryRowContext(ctx,
			"SELECT type FROM sqlite_master WHERE type IN ('table', 'view') AND name = ? COLLATE NOCASE", table).Scan(&kind)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("reading the schema of %s: %w", o.DBPath, err)
		case kind != "table":
			return fmt.Errorf("%s already has a %s named %s; choose another table name", o.DBPath, kind, table)
		case !o.Replace:
			return fmt.Errorf("%s already has a table named %s: %w", o.DBPath, table, ErrTableExists)
		default:
			if _, err := tx.ExecContext(ctx, "DROP TABLE "+pglex.QuoteIdentAlways(table)); err != nil {
				return fmt.Errorf("dropping the old table %s: %w", table, err)
			}
		}
		if _, err := tx.ExecContext(ctx, create); err != nil {
			return fmt.Errorf("creating table %s: %w", table, err)
		}
		return fill(ctx, tx)
	})
	if err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", o.DBPath, err)
	}
	return nil
}

// inTransaction runs f in a transaction, committed only if f succeeds.
func inTransaction(ctx context.Context, db *sql.DB, f func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting the transaction: %w", err)
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing: %w", err)
	}
	return nil
}

// valueKind is what a column's values have looked like so far; kinds only
// widen, in this order.
type valueKind int

const (
	kindNone    valueKind = iota // only NULLs so far
	kindInteger                  // every value an int64
	kindReal                     // every value a decimal number
	kindText
)

func (k valueKind) columnType() string {
	switch k {
	case kindInteger:
		return TypeInteger
	case kindReal:
		return TypeReal
	default: // a column of NULLs only says nothing, and TEXT holds anything
		return TypeText
	}
}

// classify returns the narrowest kind of a trimmed, non-empty value.
func classify(s string) valueKind {
	digits := strings.TrimLeft(s, "+-")
	if len(digits) > 1 && digits[0] == '0' && digits[1] >= '0' && digits[1] <= '9' {
		return kindText // a leading zero is part of a code, not a number
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return kindInteger
	} else if errors.Is(err, strconv.ErrRange) {
		return kindText // an identifier too long for int64 would lose digits as REAL
	}
	// ParseFloat also takes hexadecimal, "inf" and "nan": only plain decimal
	// notation counts as a number here.
	if strings.Trim(s, "0123456789+-.eE") != "" {
		return kindText
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return kindReal
	}
	return kindText
}

// csvScan is what the first pass learned.
type csvScan struct {
	names []string
	kinds []valueKind
	unit  string // the unit column's name as the header spells it
	rows  int64
	// addedID says the first column is a row number added by the load.
	addedID bool
	// units counts the distinct values of the unit column, up to
	// maxDistinctTracked.
	units map[string]struct{}
}

// maxDistinctTracked bounds the memory spent counting distinct unit values.
const maxDistinctTracked = 1 << 20

// unitWarnings says when the unit column looks wrong: far fewer distinct
// values than rows means many rows share a contributor, which is right for
// a person with many records but more often a column chosen by mistake.
func (s csvScan) unitWarnings() []string {
	if s.addedID || s.rows < 20 || len(s.units) >= maxDistinctTracked {
		return nil
	}
	distinct := int64(len(s.units))
	if distinct*2 > s.rows {
		return nil
	}
	return []string{fmt.Sprintf("the privacy-unit column %s has %d distinct values over %d rows (%.1f rows each on average): "+
		"rows with the same value are treated as one person (the config's max_rows_per_unit says how many of a person's rows a count keeps). "+
		"If %s does not identify a person, choose the column that does, "+
		"or --add-id NAME to number the rows when each row is one person.", s.unit, distinct, s.rows, float64(s.rows)/float64(distinct), s.unit)}
}

// detectDelimiter picks the field separator that occurs most often outside
// quotes in the header line, ',' when none does.
func detectDelimiter(path string) (rune, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("opening the CSV file: %w", err)
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 1<<16).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	counts := map[rune]int{}
	quoted := false
	for _, c := range line {
		switch {
		case c == '"':
			quoted = !quoted
		case !quoted && (c == ',' || c == ';' || c == '\t' || c == '|'):
			counts[c]++
		}
	}
	best := ','
	for _, c := range []rune{';', '\t', '|'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return best, nil
}

// scanCSV checks the whole file and infers the column types. With addID a
// row-number column of that name is put first and made the unit.
func scanCSV(path, unit, addID string, delim rune) (csvScan, error) {
	f, err := os.Open(path)
	if err != nil {
		return csvScan{}, fmt.Errorf("opening the CSV file: %w", err)
	}
	defer f.Close()
	r := newCSVReader(f, delim)
	s, unitIndex, err := scanHeader(r, path, unit, addID)
	if err != nil {
		return csvScan{}, err
	}
	if err := s.scanRows(r, path, unitIndex); err != nil {
		return csvScan{}, err
	}
	return s, nil
}

// scanHeader reads the header, checks the column names and finds the unit
// column (the added row number, with addID or --unit rownum).
func scanHeader(r *csv.Reader, path, unit, addID string) (csvScan, int, error) {
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return csvScan{}, 0, fmt.Errorf("%s is empty: it needs a header row naming the columns", path)
	}
	if err != nil {
		return csvScan{}, 0, csvError(path, err, 0)
	}
	s := csvScan{names: append([]string(nil), header...), units: map[string]struct{}{}}
	s.names[0] = strings.TrimPrefix(s.names[0], "\ufeff") // a byte-order mark some spreadsheets write
	if addID == "" && strings.EqualFold(unit, "rownum") && !slices.ContainsFunc(s.names, func(n string) bool { return strings.EqualFold(n, "rownum") }) {
		addID = "rownum"
	}
	if addID != "" {
		if unit != "" && !strings.EqualFold(unit, addID) {
			return csvScan{}, 0, fmt.Errorf("--unit %s and --add-id %s disagree: the added row number is the privacy unit", unit, addID)
		}
		s.names = append([]string{addID}, s.names...)
		s.addedID, unit = true, addID
	}
	seen := map[string]string{}
	for i, name := range s.names {
		// Blanks around a header name are the file's layout ("id, age"),
		// as around its values.
		name = strings.TrimSpace(name)
		s.names[i] = name
		if err := CheckName("column", name); err != nil {
			return csvScan{}, 0, fmt.Errorf("%s: header: %w", path, err)
		}
		if prev, dup := seen[strings.ToLower(name)]; dup {
			return csvScan{}, 0, fmt.Errorf("%s: header: column %s appears twice (as %s and %s; names ignore case)", path, name, prev, name)
		}
		seen[strings.ToLower(name)] = name
	}
	unitIndex := -1
	for i, name := range s.names {
		if strings.EqualFold(name, unit) {
			unitIndex, s.unit = i, name
		}
	}
	if unitIndex < 0 {
		hint := "; if the file has no column identifying a person and each row is one, --add-id NAME (or --unit rownum) adds a row-number column as the privacy unit"
		if unit == "" {
			return csvScan{}, 0, fmt.Errorf("no privacy-unit column given; the columns are %s%s", strings.Join(s.names, ", "), hint)
		}
		return csvScan{}, 0, fmt.Errorf("privacy-unit column %q is not in %s; the columns are %s%s", unit, path, strings.Join(s.names, ", "), hint)
	}
	return s, unitIndex, nil
}

// scanRows reads every row after the header: it counts them and the
// distinct units, checks that each has its unit, and widens each column's
// kind to hold its values.
func (s *csvScan) scanRows(r *csv.Reader, path string, unitIndex int) error {
	s.kinds = make([]valueKind, len(s.names))
	off := 0
	if s.addedID {
		s.kinds[0], off = kindInteger, 1
	}
	for {
		record, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return csvError(path, err, len(s.names)-off)
		}
		s.rows++
		for j, field := range record {
			i := j + off
			v := strings.TrimSpace(field)
			if i == unitIndex && !s.addedID && len(s.units) < maxDistinctTracked {
				s.units[v] = struct{}{}
			}
			if v == "" {
				if i == unitIndex {
					line, _ := r.FieldPos(j)
					return fmt.Errorf("%s: line %d: the privacy-unit column %s is empty; every row needs its contributor", path, line, s.unit)
				}
				continue
			}
			if s.kinds[i] != kindText {
				s.kinds[i] = max(s.kinds[i], classify(v))
			}
		}
	}
}

func newCSVReader(f *os.File, delim rune) *csv.Reader {
	r := csv.NewReader(bufio.NewReaderSize(f, 1<<16))
	r.ReuseRecord = true
	r.Comma = delim
	return r
}

// csvError words a CSV parse error around its line number.
func csvError(path string, err error, fields int) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) && fields > 0 {
			return fmt.Errorf("%s: line %d: the header has %d fields: %w", path, pe.StartLine, fields, pe.Err)
		}
		if pe.StartLine != pe.Line { // an open quote ran on: say where it began
			return fmt.Errorf("%s: line %d, column %d, in the record that starts on line %d: %w", path, pe.Line, pe.Column, pe.StartLine, pe.Err)
		}
		return fmt.Errorf("%s: line %d, column %d: %w", path, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("reading %s: %w", path, err)
}

// insertCSV is the second pass: it reads the file again and inserts every
// row with the values converted to the inferred types.
func insertCSV(ctx context.Context, tx *sql.Tx, path string, t Table, rows int64, progress Progress, addedID bool, delim rune) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening the CSV file: %w", err)
	}
	defer f.Close()
	r := newCSVReader(f, delim)
	off, rownum := 0, int64(0)
	if addedID {
		off = 1
	}
	if _, err := r.Read(); err != nil { // the header, already checked
		return csvError(path, err, 0)
	}
	changed := fmt.Errorf("%s changed while it was being loaded; load it again", path)
	err = insertRows(ctx, tx, t.Name, t.ColumnNames(), rows, progress, func(row []any) error {
		record, err := r.Read()
		if errors.Is(err, io.EOF) {
			return changed
		}
		if err != nil {
			return csvError(path, err, len(t.Columns)-off)
		}
		if addedID {
			rownum++
			row[0] = rownum
		}
		for j, field := range record {
			i := j + off
			v := strings.TrimSpace(field)
			if v == "" {
				row[i] = nil
				continue
			}
			switch t.Columns[i].Type {
			case TypeInteger:
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return changed
				}
				row[i] = n
			case TypeReal:
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return changed
				}
				row[i] = x
			default:
				row[i] = field
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if _, err := r.Read(); !errors.Is(err, io.EOF) {
		return changed
	}
	return nil
}
