package sample_test

import (
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/bench"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// TestCountersEqualTheirItems loads each data set into DynamoDB Local and
// checks every denormalized counter against the items it counts, read back
// with the queries the API uses.
func TestCountersEqualTheirItems(t *testing.T) {
	sets := map[string]store.Dataset{
		"sample":     sample.Data(),
		"make dev":   sample.Dev(time.Now()),
		"make bench": bench.Data(),
	}
	for name, d := range sets {
		t.Run(name, func(t *testing.T) {
			s, c := storetest.NewStore(t, d)
			count := func(index, pkAttr, pk, skAttr, prefix string) int {
				return storetest.Count(t, c, s.Table(), index, pkAttr, pk, skAttr, prefix)
			}
			for _, u := range d.Users {
				got, err := s.User(t.Context(), u.ID)
				if err != nil {
					t.Fatal(err)
				}
				posts := count(store.GSI1, store.AttrGSI1PK, store.AuthorPK(u.ID), store.AttrGSI1SK, store.PostPrefix)
				following := count("", store.AttrPK, store.UserPK(u.ID), store.AttrSK, store.FollowsPrefix)
				followers := count(store.GSI2, store.AttrGSI2PK, store.FollowersPK(u.ID), store.AttrGSI2SK, "")
				if got.PostCount != posts || got.FollowingCount != following || got.FollowerCount != followers {
					t.Errorf("%s: postCount %d, followingCount %d, followerCount %d; items: %d posts, follows %d, followed by %d",
						u.ID, got.PostCount, got.FollowingCount, got.FollowerCount, posts, following, followers)
				}
			}
			for _, p := range d.Posts {
				got, err := s.Post(t.Context(), p.ID)
				if err != nil {
					t.Fatal(err)
				}
				if n := count("", store.AttrPK, store.PostPK(p.ID), store.AttrSK, store.CommentPrefix); got.CommentCount != n {
					t.Errorf("post %s: commentCount %d, %d comments", p.ID, got.CommentCount, n)
				}
				if n := count("", store.AttrPK, store.PostPK(p.ID), store.AttrSK, store.LikePrefix); got.LikeCount != n {
					t.Errorf("post %s: likeCount %d, %d likes", p.ID, got.LikeCount, n)
				}
			}
		})
	}
}
