# docs/extending.md's second change, bookmarks, as the guide makes it (from
# the top of the tree; then make update): the patch, then its events.
set -e
git apply --3way docs/extending/bookmarks.patch
make event FIELD=User.bookmarks CALLER=alice QUERY='{ user(handle: "carol") { bookmarks { items { id title } nextToken } } }'
make event FIELD=Mutation.bookmarkPost CALLER=carol QUERY='mutation { bookmarkPost(postId: "01HWMMR280YFZMTH8Y8AF1G8GN") { id bookmarkCount } }'
make event FIELD=Mutation.unbookmarkPost CALLER=carol QUERY='mutation { unbookmarkPost(postId: "01HWMMR280YFZMTH8Y8AF1G8GN") { id bookmarkCount } }'
