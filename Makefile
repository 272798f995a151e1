# The two commands a newcomer runs: `make dev` (the API on localhost) and
# `make test` (vet, then every test, DynamoDB Local included).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO ?= go
CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/appsync-dynamo
BUILD_DIR := .build

# DynamoDB Local 1.25.1, as shipped inside this npm package (DESIGN.md section 6).
DDB_PKG         := amplify-dynamodb-simulator
DDB_PKG_VERSION := 2.9.30
DDB_PKG_SHA256  := 3503ffac19f183407909fecdacf4db51ab1fdad1da7b2f177016670b2d80e4b9
DDB_DIR         := $(CACHE_DIR)/dynamodb-local-$(DDB_PKG_VERSION)
export DYNAMODB_LOCAL_DIR := $(DDB_DIR)/emulator

# The Lambda, as AWS runs it: linux/arm64, no cgo, no RPC shim, named bootstrap.
LAMBDA_FLAGS := -tags lambda.norpc -trimpath -ldflags='-s -w'

.PHONY: help test vet unit build dev bench dynamodb-local check-tools clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 18

test: check-tools dynamodb-local vet ## vet, then all tests (unit and DynamoDB Local)
	$(GO) test -count=1 ./...

vet: ## go vet and gofmt
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi

build: $(BUILD_DIR)/resolver/bootstrap ## build the Lambda (linux/arm64) into .build/resolver/bootstrap
	@ls -l $<

$(BUILD_DIR)/resolver/bootstrap: $(shell find lambda -name '*.go' -not -name '*_test.go') go.mod go.sum
	@mkdir -p $(@D)
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $@ ./lambda/cmd/resolver

dev: ## serve the API locally (coming: see issue "Local AppSync")
	@echo "make dev is not there yet: the local AppSync server is the next piece of work." >&2
	@echo "Today: make test (DynamoDB Local tests) and the replayable events in events/." >&2
	@exit 1

check-tools: ## fail loudly when a tool the tests need is missing
	@for tool in java javac npm; do \
		command -v $$tool >/dev/null || { echo "missing $$tool: install a JDK 17+ and Node.js 20" >&2; exit 1; }; \
	done

dynamodb-local: $(DDB_DIR)/.verified ## fetch, verify and unpack DynamoDB Local into the cache

$(DDB_DIR)/.verified:
	@echo "fetching DynamoDB Local ($(DDB_PKG)@$(DDB_PKG_VERSION)) into $(DDB_DIR)"
	rm -rf "$(DDB_DIR).partial" && mkdir -p "$(DDB_DIR).partial"
	cd "$(DDB_DIR).partial" && npm pack --silent "$(DDB_PKG)@$(DDB_PKG_VERSION)" >/dev/null
	echo "$(DDB_PKG_SHA256)  $(DDB_DIR).partial/$(DDB_PKG)-$(DDB_PKG_VERSION).tgz" | sha256sum --check --strict -
	tar -xzf "$(DDB_DIR).partial/$(DDB_PKG)-$(DDB_PKG_VERSION).tgz" -C "$(DDB_DIR).partial" package/emulator
	rm -rf "$(DDB_DIR)" && mkdir -p "$(DDB_DIR)"
	mv "$(DDB_DIR).partial/package/emulator" "$(DDB_DIR)/emulator"
	rm -rf "$(DDB_DIR).partial"
	touch "$@"

clean: ## remove build output (the download cache stays)
	rm -rf $(BUILD_DIR) cdk.out
