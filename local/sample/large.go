package sample

import (
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/example/appsync-dynamo/lambda/store"
)

// BlogStart is when Blog's busier blog begins: its first post, and the
// readers' follows.
var BlogStart = time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)

// Blog returns the sample data plus a busier blog: alice writes `posts` more
// posts, each commented commentsPerPost times by a rotation of `authors`
// readers (u_reader01, ...); every reader follows alice and bob, and alice
// follows carol too. Counts are consistent and IDs deterministic.
func Blog(posts, commentsPerPost, authors int) store.Dataset {
	return BlogFrom(BlogStart, posts, commentsPerPost, authors)
}

// BlogFrom is Blog begun at start: alice's posts an hour apart from start,
// their comments a minute apart, their likes a second apart; the readers
// join in the hours before start. Its IDs are those times'.
func BlogFrom(start time.Time, posts, commentsPerPost, authors int) store.Dataset {
	d := Data()
	// The users are counted into after the readers are appended: a pointer
	// into d.Users taken before an append may point into the old array.
	const alice, bob, carol = 0, 1, 2

	readers := make([]string, authors)
	for i := range readers {
		readers[i] = fmt.Sprintf("u_reader%02d", i+1)
		d.Users = append(d.Users, store.User{ID: readers[i], Handle: fmt.Sprintf("reader%02d", i+1), Name: fmt.Sprintf("Reader %d", i+1),
			CreatedAt: timestamp(start.Add(-time.Duration(authors-i) * time.Hour)), FollowingCount: 2})
		d.Follows = append(d.Follows,
			store.Follow{FollowerID: readers[i], FollowedID: Alice, CreatedAt: timestamp(start)},
			store.Follow{FollowerID: readers[i], FollowedID: Bob, CreatedAt: timestamp(start)})
	}
	d.Users[alice].FollowerCount += authors
	d.Users[bob].FollowerCount += authors
	d.Follows = append(d.Follows, store.Follow{FollowerID: Alice, FollowedID: Carol, CreatedAt: timestamp(start)})
	d.Users[alice].FollowingCount++
	d.Users[carol].FollowerCount++

	next := 0
	for p := range posts {
		t := start.Add(time.Duration(p) * time.Hour)
		post := store.Post{ID: id(t), AuthorID: Alice, Title: fmt.Sprintf("Post %d", p+1),
			Body: fmt.Sprintf("Post %d: notes on single-table design.", p+1), CreatedAt: timestamp(t), UpdatedAt: timestamp(t), CommentCount: commentsPerPost}
		for c := range commentsPerPost {
			ct := t.Add(time.Duration(c+1) * time.Minute)
			author := readers[next%len(readers)]
			next++
			d.Comments = append(d.Comments, store.Comment{ID: id(ct), PostID: post.ID, AuthorID: author,
				Body: fmt.Sprintf("Comment %d on post %d", c+1, p+1), CreatedAt: timestamp(ct)})
		}
		for l := range min(p%4, len(readers)) { // a few likes, by the first readers, one each
			lt := t.Add(time.Duration(l+1) * time.Second)
			d.Likes = append(d.Likes, store.Like{ID: id(lt), PostID: post.ID, UserID: readers[l%len(readers)], LikedAt: timestamp(lt)})
			post.LikeCount++
		}
		d.Posts = append(d.Posts, post)
	}
	d.Users[alice].PostCount += posts
	return d
}

// id is the ULID of time t, its random part zeros: deterministic.
func id(t time.Time) string { return ulid.MustNew(ulid.Timestamp(t), zeros{}).String() }

func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// Follow makes reader follow author in d, the counts kept.
func Follow(d *store.Dataset, reader, author string) {
	d.Follows = append(d.Follows, store.Follow{FollowerID: reader, FollowedID: author, CreatedAt: "2024-05-01T00:00:00.000Z"})
	count(d, reader, func(u *store.User) { u.FollowingCount++ })
	count(d, author, func(u *store.User) { u.FollowerCount++ })
}
