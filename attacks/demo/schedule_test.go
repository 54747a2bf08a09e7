package demo

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// eachAtOnce calls every index once with at most width calls under way,
// takes them in order, and after an error starts no further call, ends the
// context of the calls under way and returns the error.
func TestEachAtOnce(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name        string
		n, width    int
		failAt      int // index whose call fails; -1: none
		wantErr     error
		wantCalled  int // calls started
		wantMaxBusy int
	}{
		{"all, two at a time", 7, 2, -1, nil, 7, 2},
		{"one at a time", 4, 1, -1, nil, 4, 1},
		{"wider than the work", 1, 2, -1, nil, 1, 1},
		{"nothing to do", 0, 2, -1, nil, 0, 0},
		{"an error stops the rest", 6, 1, 2, errBoom, 3, 1},
	}
	for _, tt := range tests {
		var mu sync.Mutex
		var called []int
		busy, maxBusy := 0, 0
		err := eachAtOnce(context.Background(), tt.n, tt.width, func(ctx context.Context, i int) error {
			mu.Lock()
			called = append(called, i)
			busy++
			maxBusy = max(maxBusy, busy)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond) // long enough for the calls to overlap
			mu.Lock()
			busy--
			mu.Unlock()
			if i == tt.failAt {
				return errBoom
			}
			return nil
		})
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.wantErr)
		}
		if len(called) != tt.wantCalled || maxBusy != tt.wantMaxBusy {
			t.Errorf("%s: called %v with at most %d at once, want %d calls and %d at once", tt.name, called, maxBusy, tt.wantCalled, tt.wantMaxBusy)
		}
		for i := 1; i < len(called) && tt.width == 1; i++ {
			if called[i] != called[i-1]+1 {
				t.Errorf("%s: called in the order %v", tt.name, called)
			}
		}
	}
}

// A failed call ends the context of the one still running beside it, and
// the error returned is the failure, not that call's cancellation.
func TestEachAtOnceCancelsTheOthers(t *testing.T) {
	errBoom := errors.New("boom")
	err := eachAtOnce(context.Background(), 2, 2, func(ctx context.Context, i int) error {
		if i == 0 {
			<-ctx.Done() // ends only when the other call fails
			return ctx.Err()
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Errorf("error %v, want %v", err, errBoom)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	if err := eachAtOnce(ctx, 3, 2, func(context.Context, int) error { calls++; return nil }); !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("an ended context: error %v after %d calls, want context.Canceled and none", err, calls)
	}
}
