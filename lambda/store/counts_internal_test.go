package store

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Every count of a user and of a post (an integer the schema answers) is
// on its counter item and added from it by add: a count added to the
// entity alone would be answered 0, whatever its counter holds.
func TestEveryCountIsCountedAndAdded(t *testing.T) {
	checkCounts(t, UserCounts, func(u *User, c User) { u.add(c) })
	checkCounts(t, PostCounts, func(p *Post, c Post) { p.add(c) })
}

func checkCounts[E any](t *testing.T, counts []string, add func(*E, E)) {
	typ := reflect.TypeFor[E]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Type.Kind() != reflect.Int || name == "" || name == "-" {
			continue
		}
		if !slices.Contains(counts, name) {
			t.Errorf("%s.%s is a count the counter item does not hold: add it to %s's counter item (model.go) as %q", typ.Name(), f.Name, typ.Name(), name)
			continue
		}
		var entity, counter E
		reflect.ValueOf(&counter).Elem().Field(i).SetInt(7)
		add(&entity, counter)
		if got := reflect.ValueOf(entity).Field(i).Int(); got != 7 {
			t.Errorf("(*%s).add leaves out %s (model.go): its counter's 7 reads as %d", typ.Name(), f.Name, got)
		}
	}
}
