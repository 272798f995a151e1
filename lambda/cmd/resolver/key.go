package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/example/appsync-dynamo/lambda/awsenv"
	"github.com/example/appsync-dynamo/lambda/cursor"
)

// secretTimeout bounds one read of the token key's secret.
const secretTimeout = 5 * time.Second

// tokenCodec returns the codec of pagination tokens: the key of
// NEXT_TOKEN_SECRET_ARN, read in the background from now (a failed read
// fails the request that needed it, and the next tries again), or
// NEXT_TOKEN_KEY (tokenKey).
func tokenCodec(cfg aws.Config, getenv func(string) string, log *slog.Logger) (*cursor.Codec, error) {
	arn := getenv("NEXT_TOKEN_SECRET_ARN")
	if arn == "" {
		key, err := tokenKey(getenv)
		if err != nil {
			return nil, err
		}
		if key == cursor.DevelopmentKey {
			log.Warn("NEXT_TOKEN_KEY is not set: signing pagination tokens with the public development key")
		}
		return cursor.New([]byte(key)), nil
	}
	endpoint := awsenv.Endpoint(getenv, "SECRETS_MANAGER")
	read := func() ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), secretTimeout)
		defer cancel()
		key, err := awsenv.SecretString(ctx, cfg.HTTPClient, cfg, endpoint, arn)
		if err == nil && key == cursor.DevelopmentKey {
			err = errPublicKey
		}
		if err != nil {
			log.Error("cannot read the token key", "secret", arn, "error", err)
			return nil, err
		}
		return []byte(key), nil
	}
	type result struct {
		key []byte
		err error
	}
	first := make(chan result, 1)
	go func() {
		key, err := read()
		first <- result{key, err}
	}()
	started := false
	return cursor.Deferred(func() ([]byte, error) { // called one at a time
		if !started {
			started = true
			r := <-first
			return r.key, r.err
		}
		return read()
	}), nil
}

// errPublicKey refuses the public development key as a deployment's key:
// anyone could forge tokens with it.
var errPublicKey = errors.New("the token key is the public development key: set a secret one")

// tokenKey returns the key that signs pagination tokens. In Lambda (the
// runtime API is set) it must be configured and must not be the public
// development key, with which anyone could forge tokens; elsewhere (tests,
// make dev) the development key stands in for a missing one.
func tokenKey(getenv func(string) string) (string, error) {
	key := getenv("NEXT_TOKEN_KEY")
	inLambda := getenv("AWS_LAMBDA_RUNTIME_API") != ""
	switch {
	case inLambda && key == "":
		return "", errors.New("NEXT_TOKEN_KEY is not set: the function will not sign pagination tokens with the public development key")
	case inLambda && key == cursor.DevelopmentKey:
		return "", errPublicKey
	case key == "":
		return cursor.DevelopmentKey, nil
	}
	return key, nil
}
