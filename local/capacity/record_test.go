package capacity_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/local/capacity"
)

// A request that succeeds while the recorder's own read of its item keeps
// failing is kept in Err, after the read was tried ReadAttempts times,
// never taken for a read of an absent item.
func TestTheRecordersFailedReadIsReported(t *testing.T) {
	defer capacity.SetRetryDelay(time.Millisecond)()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if calls.Add(1) == 1 { // the request itself
			w.Write([]byte(`{"Item":{"pk":{"S":"POST#1"},"sk":{"S":"POST"}}}`))
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"the recorder's read"}`))
	}))
	defer srv.Close()
	client := dynamodb.New(dynamodb.Options{
		BaseEndpoint: aws.String(srv.URL),
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("x", "x", ""),
		Retryer:      aws.NopRetryer{},
	})
	rec := capacity.NewRecorder(client, "t")
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "POST#1"}, "sk": &types.AttributeValueMemberS{Value: "POST"}}
	if _, err := rec.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Err(); err == nil || !strings.Contains(err.Error(), "the recorder's read") {
		t.Fatalf("Err() = %v, want the recorder's failed read", err)
	}
	if got, want := calls.Load(), int64(1+capacity.ReadAttempts); got != want {
		t.Errorf("%d requests, want the request and %d tries of the recorder's read", got, capacity.ReadAttempts)
	}
}
