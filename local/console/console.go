// Package console is make dev's query page: GraphiQL, with a choice of
// caller like the AppSync console's and each response's extensions.cost
// beside the result. GraphiQL and React come from the npm packages pinned
// in package-lock.json, installed into the cache and linked here as
// node_modules (make dev, make test): the page loads nothing from outside
// 127.0.0.1.
package console

import (
	_ "embed"
	"net/http"
	"path/filepath"
)

//go:embed index.html
var page []byte

// assets are the files the page loads from /ide/, and where each is in the
// installed packages.
var assets = map[string]string{
	"graphiql.min.css":            "graphiql/graphiql.min.css",
	"graphiql.min.js":             "graphiql/graphiql.min.js",
	"react.production.min.js":     "react/umd/react.production.min.js",
	"react-dom.production.min.js": "react-dom/umd/react-dom.production.min.js",
}

// Handler serves the page at / and its files at /ide/ from modules, the
// installed node_modules directory.
func Handler(modules string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	mux.HandleFunc("/ide/{file}", func(w http.ResponseWriter, r *http.Request) {
		path, ok := assets[r.PathValue("file")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, filepath.Join(modules, path))
	})
	return mux
}
