package sample

import (
	"time"

	"github.com/example/appsync-dynamo/lambda/store"
)

// devDays is how many days before make dev starts its busier blog begins:
// within the feed's window (feed.TTL), so that every feed is full.
const devDays = 3

// Dev is the data make dev serves, started at now: the seed's entities as
// they are, and Blog(10, 20, 30) begun devDays before now's day, so that the
// readers' feeds (they follow alice) hold alice's posts; bob and carol follow
// alice too, and bob writes a post, so that each caller of the query page
// (alice, bob, carol) has a feed.
func Dev(now time.Time) store.Dataset {
	start := now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -devDays).Add(8 * time.Hour)
	d := BlogFrom(start, 10, 20, 30)
	follows := start.Add(-time.Hour)
	for _, reader := range []string{Bob, Carol} {
		d.Follows = append(d.Follows, store.Follow{FollowerID: reader, FollowedID: Alice, CreatedAt: timestamp(follows)})
		count(&d, reader, func(u *store.User) { u.FollowingCount++ })
		count(&d, Alice, func(u *store.User) { u.FollowerCount++ })
	}
	at := start.Add(30 * time.Minute)
	d.Posts = append(d.Posts, store.Post{ID: id(at), AuthorID: Bob, Title: "Bob's notes",
		Body: "What I learned reading alice's posts.", CreatedAt: timestamp(at), UpdatedAt: timestamp(at)})
	count(&d, Bob, func(u *store.User) { u.PostCount++ })
	return d
}

// count changes the counters of the user id in d.
func count(d *store.Dataset, id string, change func(*store.User)) {
	for i := range d.Users {
		if d.Users[i].ID == id {
			change(&d.Users[i])
		}
	}
}
