// Package awsenv builds what the function needs of AWS from Lambda's
// environment alone: the region, the role's credentials and the endpoints
// AWS_ENDPOINT_URL_<SERVICE> names. It links none of the SDK's other
// credential sources, and signs its few non-DynamoDB calls itself.
package awsenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Config returns the region and credentials in the environment getenv
// reads, or an error naming what is missing, and the HTTP client of every
// request to AWS (HTTPClient), each of opts applied in turn.
func Config(getenv func(string) string, opts ...Option) (aws.Config, error) {
	region := getenv("AWS_REGION")
	if region == "" {
		region = getenv("AWS_DEFAULT_REGION")
	}
	id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	var missing []string
	if region == "" {
		missing = append(missing, "AWS_REGION")
	}
	if id == "" {
		missing = append(missing, "AWS_ACCESS_KEY_ID")
	}
	if secret == "" {
		missing = append(missing, "AWS_SECRET_ACCESS_KEY")
	}
	if len(missing) > 0 {
		return aws.Config{}, fmt.Errorf("%s not set: Lambda sets them for the execution role; elsewhere set them (any value for DynamoDB Local)",
			strings.Join(missing, ", "))
	}
	creds := aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: getenv("AWS_SESSION_TOKEN"), Source: "awsenv"}
	cfg := aws.Config{
		Region: region,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return creds, nil
		}),
	}
	for _, opt := range opts {
		if err := opt(&cfg, getenv); err != nil {
			return aws.Config{}, err
		}
	}
	if cfg.HTTPClient == nil { // no option gave one
		cfg.HTTPClient = HTTPClient()
	}
	return cfg, nil
}

// An Option changes the configuration Config returns, reading the
// environment with getenv (awstls.Install, for one).
type Option func(cfg *aws.Config, getenv func(string) string) error

// Endpoint returns the endpoint the environment sets for the service whose
// variable suffix is given ("DYNAMODB", "SECRETS_MANAGER"), or "" for AWS's
// own.
func Endpoint(getenv func(string) string, service string) string {
	if e := getenv("AWS_ENDPOINT_URL_" + service); e != "" {
		return e
	}
	return getenv("AWS_ENDPOINT_URL")
}

// SecretString reads the string value of the secret arn with Secrets
// Manager's GetSecretValue, at endpoint ("" for the region's), signed with
// cfg's credentials. An empty value is an error.
func SecretString(ctx context.Context, client aws.HTTPClient, cfg aws.Config, endpoint, arn string) (string, error) {
	var out struct{ SecretString *string }
	if err := Call(ctx, client, cfg, Service{"secretsmanager", "secretsmanager", endpoint}, "GetSecretValue", map[string]string{"SecretId": arn}, &out); err != nil {
		return "", err
	}
	if out.SecretString == nil || *out.SecretString == "" {
		return "", errors.New("GetSecretValue: the secret has no string value")
	}
	return *out.SecretString, nil
}

// A Service is an AWS service that speaks JSON 1.1 (Secrets Manager,
// Systems Manager): its signing name, the prefix of its X-Amz-Target and its
// endpoint ("" for the region's, https://<Name>.<region>.amazonaws.com).
type Service struct {
	Name, TargetPrefix, Endpoint string
}

// Call sends the action to the service with in as its JSON body, signed
// with cfg's credentials (Signature V4), and decodes the answer into out
// (nil: not decoded). A service's error comes back as an *APIError.
func Call(ctx context.Context, client aws.HTTPClient, cfg aws.Config, svc Service, action string, in, out any) error {
	endpoint := svc.Endpoint
	if endpoint == "" {
		endpoint = "https://" + svc.Name + "." + cfg.Region + ".amazonaws.com"
	}
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(endpoint, "/")+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", svc.TargetPrefix+"."+action)
	if err := Sign(ctx, cfg, req, body, svc.Name); err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &e) != nil {
			return fmt.Errorf("%s: HTTP %d, not JSON: %.200s", action, resp.StatusCode, raw)
		}
		return &APIError{Action: action, Status: resp.StatusCode, Type: e.Type[strings.LastIndex(e.Type, "#")+1:], Message: e.Message}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: HTTP %d, not JSON: %.200s", action, resp.StatusCode, raw)
	}
	return nil
}

// APIError is a service's answer to a call it refused.
type APIError struct {
	Action  string
	Status  int
	Type    string // "ResourceNotFoundException", "ParameterNotFound", ...
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s: HTTP %d %s: %s", e.Action, e.Status, e.Type, e.Message)
}

// Sign signs req, whose body is body, for the service named service with
// cfg's credentials (Signature V4, now).
func Sign(ctx context.Context, cfg aws.Config, req *http.Request, body []byte, service string) error {
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	return v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), service, cfg.Region, time.Now())
}
