package experiments

import (
	"context"
	"sync"
)

// runJobs runs do on each job, on up to parallel goroutines, and returns
// the outcomes in job order, so that what the caller makes of them does not
// depend on which job finished first. The first error stops the jobs not yet
// started, cancels the context of those running, and is returned.
func runJobs[J, R any](ctx context.Context, jobs []J, parallel int, do func(context.Context, J) (R, error)) ([]R, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	out := make([]R, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(max(parallel, 1), len(jobs)) {
		wg.Go(func() {
			for i := range next {
				r, err := do(ctx, jobs[i])
				if err != nil {
					cancel(err)
					continue // drain: the feeder stops on the cancelled context
				}
				out[i] = r
			}
		})
	}
feed:
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return out, nil
}
