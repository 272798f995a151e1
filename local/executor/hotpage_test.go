package executor_test

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/hotkeys"
	"github.com/example/appsync-dynamo/lambda/hotpage"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/wired"
	"github.com/example/appsync-dynamo/schema"
)

// environment is one execution environment: a store of the table with hot
// posts' pages kept for ttl (lambda/hotpage, as deployed), and the local
// AppSync over a handler of it.
func environment(t *testing.T, table string, ttl time.Duration) (*executor.Executor, *hotpage.Store) {
	t.Helper()
	raw := storetest.New(storetest.Client(t), table, wired.Store...)
	s := hotpage.New(raw, raw, hotpage.WithTTL(ttl))
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	h := resolver.New(s, slog.New(slog.NewJSONHandler(io.Discard, nil)), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence))
	return executor.New(sch, lambda.NewHandler(h), resolver.CoreRoutes), s
}

// hotPageData is the sample data, three readers more, and a hot post of
// alice's with comments by bob and the readers before and after it turned
// hot; bob likes it.
func hotPageData(t *testing.T) (string, string) {
	t.Helper()
	d := sample.Data()
	for i := 1; i <= 3; i++ {
		d.Users = append(d.Users, store.User{ID: fmt.Sprintf("u_reader%02d", i), Handle: fmt.Sprintf("reader%02d", i), Name: "Reader", CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	s, _ := storetest.NewStore(t, d, wired.Store...)
	ctx := t.Context()
	p, err := s.CreatePost(ctx, sample.Alice, store.NewPost{Title: "viral", Body: "read by many"})
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range []string{sample.Bob, "u_reader01", "u_reader02", "u_reader03"} {
		if i == 2 {
			if err := hotkeys.Of(s).MakeHot(ctx, p.ID); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.CreateComment(ctx, u, p.ID, "comment by "+u); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.LikePost(ctx, sample.Bob, p.ID, nil); err != nil {
		t.Fatal(err)
	}
	return s.Table(), p.ID
}

// What is kept of a hot post are the table's items, never an answer: in one
// environment, each caller gets their own likedByMe, and the email of a
// comment's author only when they are that author; a draft stays its
// author's.
func TestAHotPostsPageIsEachCallersOwn(t *testing.T) {
	table, post := hotPageData(t)
	e, s := environment(t, table, hotpage.TTL)
	draft, err := s.CreatePost(t.Context(), sample.Alice, store.NewPost{Title: "a draft", Body: "not yet", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	page := `{ post(id: "` + post + `") { title likeCount likedByMe comments(limit: 20) { items { body author { id email } } } }
	  draft: post(id: "` + draft.ID + `") { title } }`
	var callers = []*appsync.Identity{signedIn(sample.Bob), signedIn(sample.Alice), nil, signedIn(sample.Bob)}
	for i, caller := range callers {
		data, resp := run(t, e, executor.Request{Query: page, Identity: caller})
		if len(resp.Errors) > 0 {
			t.Fatalf("caller %d: %v", i, resp.Errors)
		}
		who := ""
		if caller != nil {
			who = caller.Sub
		}
		if liked := get(data, "post", "likedByMe"); liked != (who == sample.Bob) {
			t.Errorf("%q reads likedByMe %v", who, liked)
		}
		for _, c := range get(data, "post", "comments", "items").([]any) {
			email, author := get(c, "author", "email"), get(c, "author", "id")
			if (email != nil) != (author == who) {
				t.Errorf("%q reads %v's email: %v", who, author, email)
			}
		}
		if d := get(data, "draft"); (d != nil) != (who == sample.Alice) {
			t.Errorf("%q reads alice's draft: %v", who, d)
		}
	}
	if !s.KeepsPage(post) {
		t.Error("the environment did not learn the post hot")
	}
}

// Several environments at once, each a handler over its own store: readers,
// likers, commenters, the author editing, the post deleted at the end.
// Every page a reader gets through the local AppSync is the table's as of
// some moment in the TTL before it asked, or after: no comment written
// after the read ended, none missing that was written more than a TTL
// before it began, a title some edit in that window set; and a TTL after
// the last write, every environment answers the table's.
func TestConcurrentEnvironmentsServeNothingOlderThanTheTTL(t *testing.T) {
	const ttl = 300 * time.Millisecond
	table, post := hotPageData(t)
	type env struct {
		e *executor.Executor
		s *hotpage.Store
	}
	envs := make([]env, 4)
	for i := range envs {
		envs[i].e, envs[i].s = environment(t, table, ttl)
	}
	ctx := t.Context()
	var (
		mu      sync.Mutex
		history []written
	)
	record := func(w written) { mu.Lock(); history = append(history, w); mu.Unlock() }
	// So many writes, and pages read until they are all done (5 at least
	// in each environment): counted, not timed, so that a busy machine
	// checks as many pages as an idle one.
	var writers, readers sync.WaitGroup
	var writesDone atomic.Bool
	for i := range 3 {
		writers.Go(func() {
			for n := range 12 {
				w := written{body: fmt.Sprintf("w%d-%d", i, n), started: time.Now()}
				if _, err := envs[i].s.CreateComment(ctx, sample.Bob, post, w.body); err != nil {
					t.Error(err)
					return
				}
				w.returned = time.Now()
				record(w)
				if _, err := envs[i].s.LikePost(ctx, fmt.Sprintf("u_reader0%d", 1+n%3), post, nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
	writers.Go(func() {
		for n := range 10 {
			w := written{title: fmt.Sprint("title ", n), started: time.Now()}
			if _, err := envs[3].s.UpdatePost(ctx, sample.Alice, post, store.PostEdit{Title: &w.title}); err != nil {
				t.Error(err)
				return
			}
			w.returned = time.Now()
			record(w)
			time.Sleep(50 * time.Millisecond)
		}
	})
	query := `{ post(id: "` + post + `") { title likeCount comments(limit: 100) { items { body author { name } } } } }`
	var (
		pages   []seen
		pagesMu sync.Mutex
	)
	for i := range envs {
		readers.Go(func() {
			for n := 0; n < 5 || !writesDone.Load(); n++ {
				r := seen{started: time.Now()}
				data, resp := run(t, envs[i].e, executor.Request{Query: query, Identity: signedIn("u_reader01")})
				if len(resp.Errors) > 0 {
					t.Error(resp.Errors)
					return
				}
				r.returned = time.Now()
				r.title, _ = get(data, "post", "title").(string)
				for _, c := range get(data, "post", "comments", "items").([]any) {
					r.bodies = append(r.bodies, get(c, "body").(string))
				}
				pagesMu.Lock()
				pages = append(pages, r)
				pagesMu.Unlock()
			}
		})
	}
	writers.Wait()
	writesDone.Store(true)
	readers.Wait()
	for _, r := range pages {
		for _, w := range history {
			switch {
			case w.body != "" && w.returned.Before(r.started.Add(-ttl)) && !slices.Contains(r.bodies, w.body) && len(r.bodies) < 100:
				t.Errorf("a page read at %v lacks %q, written %v before", r.started.Format(time.StampMilli), w.body, r.started.Sub(w.returned))
			case w.body != "" && w.started.After(r.returned) && slices.Contains(r.bodies, w.body):
				t.Errorf("a page read by %v holds %q, written after", r.returned.Format(time.StampMilli), w.body)
			}
		}
		if r.title != "viral" && !titleWithin(history, r.title, r.started.Add(-ttl), r.returned) {
			t.Errorf("a page read between %v and %v is titled %q, which no edit then had set", r.started.Format(time.StampMilli), r.returned.Format(time.StampMilli), r.title)
		}
	}
	time.Sleep(ttl)
	fresh, _ := storetest.StoreOn(t, table, wired.Store...)
	want, _ := fresh.Post(ctx, post)
	for i, env := range envs {
		if data, _ := run(t, env.e, executor.Request{Query: query}); get(data, "post", "title") != want.Title {
			t.Errorf("environment %d, a TTL after the last edit: %v, want %q", i, get(data, "post", "title"), want.Title)
		}
	}
	if _, err := envs[0].s.DeletePost(ctx, sample.Alice, post); err != nil {
		t.Fatal(err)
	}
	time.Sleep(ttl)
	for i, env := range envs {
		if data, _ := run(t, env.e, executor.Request{Query: query}); get(data, "post") != nil {
			t.Errorf("environment %d, a TTL after the deletion: the post is still answered", i)
		}
	}
	t.Logf("%d pages checked against %d writes", len(pages), len(history))
}

// written is a write of the concurrent test: a comment's body or a title,
// when it began and when it returned.
type written struct {
	body, title       string
	started, returned time.Time
}

// seen is a page a reader read, and when.
type seen struct {
	title             string
	bodies            []string
	started, returned time.Time
}

// titleWithin reports whether title was the post's, as an edit set it, at
// some moment in [from, to]: set by an edit begun before to, and not
// replaced by one that returned before from.
func titleWithin(history []written, title string, from, to time.Time) bool {
	for i, w := range history {
		if w.title != title || !w.started.Before(to) {
			continue
		}
		replaced := false
		for _, later := range history[i+1:] {
			if later.title != "" && later.returned.Before(from) {
				replaced = true
			}
		}
		if !replaced {
			return true
		}
	}
	return false
}
