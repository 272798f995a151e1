package cost

import (
	"context"
	"testing"
)

// Together's branches are of one wave, inside the branch it was started
// from; a later Together is another wave.
func TestTogetherMakesWavesOfBranches(t *testing.T) {
	branchOf := func(ctx context.Context) *Branch { b, _ := ctx.Value(branchKey{}).(*Branch); return b }
	ctx := context.Background()
	level := Together(ctx)
	a, b := level(), level()
	if branchOf(a) == branchOf(b) || branchOf(a).Wave != branchOf(b).Wave || branchOf(a).Parent != nil {
		t.Errorf("one Together's branches: %+v and %+v", branchOf(a), branchOf(b))
	}
	inner := Together(a)()
	if branchOf(inner).Parent != branchOf(a) || branchOf(inner).Wave == branchOf(a).Wave {
		t.Errorf("a nested branch %+v of %+v", branchOf(inner), branchOf(a))
	}
	if later := Together(ctx)(); branchOf(later).Wave == branchOf(a).Wave {
		t.Error("a later Together is of the same wave")
	}
}
