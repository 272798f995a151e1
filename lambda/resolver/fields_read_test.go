package resolver_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/example/appsync-dynamo/schema"
)

// Every field of the schema's object types (but the subscriptions') is
// read by a replayed event: a routed field as the event's field, any other
// in an event's selection, so that a golden reply shows what it answers. A
// field added without an event that reads it fails, named.
func TestEveryFieldIsReadByAnEvent(t *testing.T) {
	sch, err := schema.Load(wiredSDL...)
	if err != nil {
		t.Fatal(err)
	}
	files, features := eventFiles(t)
	read := map[string]bool{}
	for _, file := range append(files, features...) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var batch []struct{ Info eventInfo }
		if json.Unmarshal(raw, &batch) != nil {
			var one struct{ Info eventInfo }
			if err := json.Unmarshal(raw, &one); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			batch = append(batch, one)
		}
		for _, ev := range batch {
			parent := sch.Types[ev.Info.ParentTypeName]
			if parent == nil || parent.Fields.ForName(ev.Info.FieldName) == nil {
				continue // a feature's field the tests do not wire
			}
			read[ev.Info.ParentTypeName+"."+ev.Info.FieldName] = true
			if ev.Info.SelectionSetGraphQL == "" {
				continue
			}
			doc, err := parser.ParseQuery(&ast.Source{Input: ev.Info.SelectionSetGraphQL})
			if err != nil {
				t.Fatalf("%s: its selectionSetGraphQL: %v", file, err)
			}
			markRead(sch, read, parent.Fields.ForName(ev.Info.FieldName).Type.Name(), doc.Operations[0].SelectionSet)
		}
	}
	for _, typ := range sch.Types {
		if typ.Kind != ast.Object || typ.BuiltIn || typ.Name == "Subscription" || slices.Contains([]string{"__Schema", "__Type"}, typ.Name) {
			continue
		}
		for _, f := range typ.Fields {
			if key := typ.Name + "." + f.Name; !read[key] && f.Name[0] != '_' {
				t.Errorf("%s is read by no event: record one that selects it (make event FIELD=<its field or a parent's> QUERY='...'), then make update", key)
			}
		}
	}
}

// eventInfo is what TestEveryFieldIsReadByAnEvent reads of an event.
type eventInfo struct {
	ParentTypeName, FieldName, SelectionSetGraphQL string
}

// markRead marks in read every field sel selects of typ, at every depth.
func markRead(sch *ast.Schema, read map[string]bool, typ string, sel ast.SelectionSet) {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			def := sch.Types[typ]
			if def == nil || def.Fields.ForName(s.Name) == nil {
				continue
			}
			read[typ+"."+s.Name] = true
			markRead(sch, read, def.Fields.ForName(s.Name).Type.Name(), s.SelectionSet)
		case *ast.InlineFragment:
			on := typ
			if s.TypeCondition != "" {
				on = s.TypeCondition
			}
			markRead(sch, read, on, s.SelectionSet)
		}
	}
}
