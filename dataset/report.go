package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dustin/go-humanize"

	"countwall/dataset/progress"
)

// Generator writes a table to a file as the WriteOptions say.
type Generator func(ctx context.Context, path string, w WriteOptions) error

// GenerateShown runs generate into path with a progress bar on log, then
// says on out how many rows of table it wrote. rows is the expected count,
// read as the generator starts (a long table's rows per person are drawn
// then); errors are worded for the command line.
func GenerateShown(ctx context.Context, out, log io.Writer, table, path string, force bool, rows func() int64, generate Generator) error {
	update, done := progress.Bar(log, "generating "+table)
	written := rows()
	counted := func(n, total int64) {
		written = total
		if update != nil {
			update(n, total)
		}
	}
	start := time.Now()
	err := generate(ctx, path, WriteOptions{Progress: counted, Force: force})
	done()
	switch {
	case errors.Is(err, ErrExists):
		return fmt.Errorf("%w; use --force to replace it", err)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("gen %s: interrupted; nothing was written", table)
	case err != nil:
		return fmt.Errorf("gen %s: %w", table, err)
	}
	fmt.Fprintf(out, "wrote %s rows of table %s to %s in %s\n",
		humanize.Comma(written), table, path, time.Since(start).Round(time.Millisecond))
	return nil
}
