package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/example/appsync-dynamo/lambda/store"
)

// AtOnce runs fn(i) for i in [0, n) at the same time and returns the
// errors.
func AtOnce(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// Failures reports each write's error in results and returns how many
// failed.
func Failures(t *testing.T, results []error) int {
	t.Helper()
	failed := 0
	for i, err := range results {
		if err != nil {
			failed++
			t.Errorf("write %d: %v", i, err)
		}
	}
	return failed
}

// AddLikers adds n users to d ("liker000", ...) and returns their IDs.
func AddLikers(d *store.Dataset, n int) []string {
	var ids []string
	for i := range n {
		id := fmt.Sprintf("liker%03d", i)
		ids = append(ids, id)
		d.Users = append(d.Users, store.User{ID: id, Handle: id, Name: id, CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	return ids
}
