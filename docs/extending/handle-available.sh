# docs/extending.md's third change, Query.handleAvailable, as the guide
# makes it (from the top of the tree; then make update): the patch, then its
# event.
set -e
git apply --3way docs/extending/handle-available.patch
make event FIELD=Query.handleAvailable QUERY='{ handleAvailable(handle: "alice") }'
