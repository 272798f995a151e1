// Package devserver serves the API on localhost the way AppSync serves it:
// GraphQL over HTTP, resolved by the Lambda handler in this process through
// the executor, over DynamoDB Local, and subscriptions over AppSync's
// real-time protocol. It is what `make dev` runs.
package devserver

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"

	"github.com/example/appsync-dynamo/local/console"
	"github.com/example/appsync-dynamo/local/executor"
)

// MaxRequestBytes bounds a request body.
const MaxRequestBytes = 1 << 20

// Handler serves POST /graphql (and GET /graphql?query=...) with the API's
// executor, and subscriptions over AppSync's real-time protocol at
// /graphql/realtime (where Amplify looks for them on an endpoint that is not
// AppSync's own domain).
func Handler(api *API) http.Handler {
	exec := api.Exec
	mux := http.NewServeMux()
	mux.Handle("/graphql/realtime", api.Hub)
	if api.Console != "" {
		mux.Handle("/", console.Handler(api.Console))
		// The page's choice of caller: a sample user's token.
		mux.HandleFunc("/dev/token", func(w http.ResponseWriter, r *http.Request) {
			user := r.URL.Query().Get("user")
			if user == "" {
				http.Error(w, "give ?user=", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte(Token(user)))
		})
	}
	mux.HandleFunc("/graphql", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Headers", "authorization, content-type, x-api-key, "+PlanHeader)
		w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var req executor.Request
		switch r.Method {
		case http.MethodPost:
			if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxRequestBytes)).Decode(&req); err != nil {
				writeError(w, http.StatusBadRequest, "BadRequest", "the body must be a JSON GraphQL request: "+err.Error())
				return
			}
		case http.MethodGet:
			req.Query = r.URL.Query().Get("query")
			req.OperationName = r.URL.Query().Get("operationName")
			if v := r.URL.Query().Get("variables"); v != "" {
				if err := json.Unmarshal([]byte(v), &req.Variables); err != nil {
					writeError(w, http.StatusBadRequest, "BadRequest", "variables must be a JSON object")
					return
				}
			}
		default:
			writeError(w, http.StatusMethodNotAllowed, "BadRequest", "use POST")
			return
		}
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		id, err := Identity(r.Header.Get("Authorization"), host)
		if err != nil {
			writeError(w, http.StatusUnauthorized, "UnauthorizedException", err.Error())
			return
		}
		req.Identity = id
		req.Headers = map[string]string{}
		for k, v := range r.Header {
			req.Headers[strings.ToLower(k)] = strings.Join(v, ",")
		}
		req.Plan = r.Header.Get(PlanHeader) == "1"
		resp := exec.Execute(r.Context(), req)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	})
	return mux
}

// PlanHeader asks for the request's plan (executor.Plan) in extensions.plan,
// with the value 1; the console always sends it.
const PlanHeader = "x-local-plan"

func writeError(w http.ResponseWriter, status int, errType, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"errorType": errType, "message": message}}})
}
