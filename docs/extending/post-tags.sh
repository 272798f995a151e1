# docs/extending.md's first change, Post.tags, as the guide makes it (from
# the top of the tree; then make update): the patch, then its event.
set -e
git apply --3way docs/extending/post-tags.patch
make event FIELD=Mutation.createPost OUT=events/Mutation.createPost-tags.json CALLER=bob QUERY='mutation { createPost(input: {title: "A tagged post", body: "Tagged.", tags: ["go", "dynamodb", "ünïcode 😀"]}) { id title tags } }'
