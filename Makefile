# The two commands a newcomer runs: `make dev` (the API on localhost) and
# `make test` (vet, then every test, DynamoDB Local included).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO ?= go
CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/appsync-dynamo
BUILD_DIR := .build

# Every install into the cache is content-addressed and atomic: a
# directory's name carries the hash of what it installs (content: of the
# files that say what it holds, or a pinned version and checksum), it is
# built in a new directory beside it, and renamed into place whole (place).
# A run that finds it in place meanwhile drops its own; none deletes a
# directory another checkout or a running make dev may be using, and a
# fresh clone (its files newer than the cache) installs nothing again.
content = $(shell cat $(1) | sha256sum | cut -c1-16)
RUN_ID := $(shell od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
define place
	mkdir -p "$(CACHE_DIR)"
	mv -T "$(1)" "$(2)" 2>/dev/null || rm -rf "$(1)"
	test -e "$(2)/$(3)"
endef

# DynamoDB Local 1.25.1, as shipped inside this npm package (docs/local.md).
DDB_PKG         := amplify-dynamodb-simulator
DDB_PKG_VERSION := 2.9.30
DDB_PKG_SHA256  := 3503ffac19f183407909fecdacf4db51ab1fdad1da7b2f177016670b2d80e4b9
DDB_DIR         := $(CACHE_DIR)/dynamodb-local-$(DDB_PKG_VERSION)
export DYNAMODB_LOCAL_DIR := $(DDB_DIR)/emulator

# The Lambda Runtime Interface Emulator (what `sam local invoke` runs), built
# from its module, which the Go checksum database verifies.
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d
RIE         := $(CACHE_DIR)/bin/aws-lambda-rie-$(RIE_VERSION)-static
export AWS_LAMBDA_RIE := $(RIE)

# The Lambda, as AWS runs it: linux/arm64, no cgo, no RPC shim, named bootstrap.
# ARCH=x86_64 builds, synthesizes and deploys the functions for x86_64
# instead (for sam local invoke on an x86_64 host without emulation); the
# bootstraps are rebuilt when ARCH changes ($(BUILD_DIR)/arch records it).
ARCH ?= arm64
GOARCH_arm64  := arm64
GOARCH_x86_64 := amd64
LAMBDA_GOARCH := $(or $(GOARCH_$(ARCH)),$(error ARCH must be arm64 or x86_64, not $(ARCH)))
LAMBDA_FLAGS  := -tags lambda.norpc -trimpath -ldflags='-s -w'
LAMBDA_SRC    := $(shell find lambda -name '*.go' -not -name '*_test.go') go.mod go.sum
# The functions: each main of lambda/cmd (the probe's goes with its feature).
FUNCTIONS     := $(sort $(patsubst lambda/cmd/%/,%,$(dir $(wildcard lambda/cmd/*/*.go))))
BOOTSTRAPS    := $(FUNCTIONS:%=$(BUILD_DIR)/%/bootstrap)

# The linter of the APPSYNC_JS resolvers (eslint with AWS's plugin for that
# runtime), installed from appsyncjs/package-lock.json, which npm checks
# every package against (integrity hashes), into a cache directory named
# after the lock file; appsyncjs/node_modules links to it.
JSLINT_DIR := $(CACHE_DIR)/appsyncjs-lint-$(call content,appsyncjs/package.json appsyncjs/package-lock.json)
export APPSYNCJS_ESLINT := $(JSLINT_DIR)/node_modules/.bin/eslint

# Amplify, the client library the real-time protocol is tested with, from
# local/realtime/amplify/package-lock.json (integrity hashes checked by npm).
AMPLIFY_DIR := $(CACHE_DIR)/realtime-amplify-$(call content,local/realtime/amplify/package.json local/realtime/amplify/package-lock.json)

# GraphiQL and React for make dev's query page, from
# local/console/package-lock.json (integrity hashes checked by npm).
CONSOLE_DIR := $(CACHE_DIR)/console-$(call content,local/console/package.json local/console/package-lock.json)

# A headless Chromium for the query page's test: chrome-headless-shell as the
# npm package @sparticuz/chromium ships it, brotli-compressed with the NSS,
# expat and SwiftShader libraries it needs, checked against its checksum and
# unpacked by Node's zlib (local/console/unbrotli.mjs) into the cache, with a
# fontconfig of its own fonts. HEADLESS_CHROMIUM names the program that runs it.
BROWSER_PKG         := @sparticuz/chromium
BROWSER_PKG_VERSION := 153.0.0
BROWSER_PKG_SHA256  := 20e5656fcdcf4118ede85edfb9d6bb9cc1bbb7ffb8b75622fffbcf36a835c3c0
BROWSER_DIR         := $(CACHE_DIR)/chromium-$(BROWSER_PKG_VERSION)-$(call content,local/console/unbrotli.mjs)
export HEADLESS_CHROMIUM := $(BROWSER_DIR)/chromium

# Powertools for AWS Lambda (TypeScript), the per-event cost's baseline in
# Node (local/nodebaseline), from its package-lock.json (integrity hashes
# checked by npm); its node_modules directory is named in NODE_BASELINE_MODULES.
NODEBASE_DIR := $(CACHE_DIR)/node-baseline-$(call content,local/nodebaseline/package.json local/nodebaseline/package-lock.json)
export NODE_BASELINE_MODULES := $(NODEBASE_DIR)/node_modules

# npm-install installs the packages locked in directory $(1) into $(2), the
# stamp .installed with them, once $(3) is there: npm ci checks every
# package against the lock file's integrity hash.
define npm-install
	mkdir -p "$(2).partial.$(RUN_ID)"
	cp $(1)/package.json $(1)/package-lock.json "$(2).partial.$(RUN_ID)/"
	cd "$(2).partial.$(RUN_ID)" && npm ci --silent --ignore-scripts --no-audit --no-fund
	test -e "$(2).partial.$(RUN_ID)/$(3)" && touch "$(2).partial.$(RUN_ID)/.installed"
	$(call place,$(2).partial.$(RUN_ID),$(2),.installed)
endef

# The CDK CLI (2.x; the npm "3.0.0" is a broken old upload), from
# infra/cdk-cli/package-lock.json (integrity hash checked by npm), into a
# cache directory named after the lock file; the CLI test runs it (CDK_CLI).
CDK_DIR := $(CACHE_DIR)/cdk-cli-$(call content,infra/cdk-cli/package.json infra/cdk-cli/package-lock.json)
CDK     := $(CDK_DIR)/node_modules/.bin/cdk
export CDK_CLI := $(CDK)
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20

PORT  ?= 4000
# How make dev's AppSync writes the selection of a field selected twice, and
# its Lambda reads it (docs/deploying.md): every-occurrence or first-occurrence.
# make synth and make deploy pass it to the stack only when given, and it then
# pins the deployed function's reading (make deploy
# SELECTION_READING=first-occurrence); otherwise the deployment's selection
# probe finds how AWS writes it and hands the function its verdict.
SELECTION_READING ?= every-occurrence
STACK_READING := $(if $(filter command line environment,$(origin SELECTION_READING)),-c selectionReading=$(SELECTION_READING))
# How make dev's AppSync writes a subscription message and measures it against
# AppSync's 240 KB (docs/live.md; make smoke tells a deployed API's):
# utf8-245760, utf8-240000, escaped-245760 or escaped-240000.
MESSAGE_READING ?= utf8-245760
# The most bytes of a client's real-time message make dev's AppSync reads
# (AppSync documents none; docs/live.md): 32768 or 245760.
CLIENT_LIMIT ?= 32768
TLS_PORT ?= 4443
EVENT ?= events/Query.post-with-comments.json

.PHONY: FORCE help test check vet build dev token invoke bench update event capacity synth sam-invoke sam-container smoke deploy destroy dynamodb-local rie browser cdk-cli js-lint js-clients console node-baseline check-tools check-node check-lint clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 18

# The tests that run code at volume (thousands of generated queries, the
# largest payloads, every cut point of a redo, the capacity workloads) are in
# files built without the race detector (//go:build !race && !nobulk), which
# costs them 4 to 10 times their time for code their package's other tests
# run under it: make test runs them without it, beside the race pass (and the
# copies of the tree that local/removal and local/extending test leave them
# out: -tags nobulk). Both lists are read from those files: nothing to keep
# by hand.
BULK_FILES := $(shell grep -rlx --include='*_test.go' '//go:build !race && !nobulk' lambda local schema 2>/dev/null)
BULK_PKGS  := $(sort $(patsubst %/,./%,$(dir $(BULK_FILES))))
BULK_TESTS := $(shell sed -nE 's/^func (Test[A-Za-z0-9_]+)[^A-Za-z0-9_].*/\1/p' $(BULK_FILES) /dev/null | paste -sd'|' -)

# Beside the race pass, on the other core: the stack's tests (the CDK app's
# module: synthesis in jsii's Node process, cfn-lint), then the tests at
# volume one package at a time; their output is kept and printed after.
# Much of the race pass waits (DynamoDB Local's streams, subscriptions,
# kept values): the machine's two cores stay busy.
test: check-tools check-lint dynamodb-local rie browser js-lint js-clients console node-baseline cdk-cli vet ## vet, then all tests (unit, DynamoDB Local, the emulator) under the race detector, and beside them the stack's and those at volume without it
	@mkdir -p $(BUILD_DIR); rm -f $(BUILD_DIR)/infra-test.* $(BUILD_DIR)/bulk-test.*
	( s=0; (cd infra && $(GO) test -count=1 -timeout 30m ./...) > $(BUILD_DIR)/infra-test.log 2>&1 || s=$$?; echo $$s > $(BUILD_DIR)/infra-test.status; \
	  s=0; $(if $(BULK_FILES),$(GO) test -p 1 -count=1 -timeout 30m -run '^($(BULK_TESTS))$$' $(BULK_PKGS),true) > $(BUILD_DIR)/bulk-test.log 2>&1 || s=$$?; echo $$s > $(BUILD_DIR)/bulk-test.status ) & \
	status=0; $(GO) test -race -count=1 -timeout 45m ./... || status=$$?; \
	wait; echo "cd infra && $(GO) test -count=1 ./..."; cat $(BUILD_DIR)/infra-test.log; \
	echo "$(GO) test -count=1 -run '<the tests at volume>' $(BULK_PKGS)"; cat $(BUILD_DIR)/bulk-test.log; \
	[ $$status = 0 ] && [ "$$(cat $(BUILD_DIR)/infra-test.status)" = 0 ] && [ "$$(cat $(BUILD_DIR)/bulk-test.status)" = 0 ]

check: vet ## the fast loop: vet and gofmt, then the tests that need no DynamoDB Local, emulator, browser or npm package (go test -short)
	$(GO) test -short -count=1 ./...

vet: ## go vet and gofmt, in both modules (the function and local tools; the CDK app in infra/)
	$(GO) vet ./...
	cd infra && $(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi

build: $(BOOTSTRAPS) ## build the Lambdas (linux/arm64, or ARCH=x86_64) into .build/<function>/bootstrap: resolver, projector, probe
	@ls -l $^

# The architecture the bootstraps were last built for: rewritten (and so
# newer than them) only when ARCH changes.
$(BUILD_DIR)/arch: FORCE
	@mkdir -p $(@D)
	@echo $(ARCH) | cmp -s - $@ || echo $(ARCH) > $@

$(BOOTSTRAPS): $(BUILD_DIR)/%/bootstrap: $(LAMBDA_SRC) $(BUILD_DIR)/arch
	@mkdir -p $(@D)
	GOOS=linux GOARCH=$(LAMBDA_GOARCH) CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $@ ./lambda/cmd/$*

FORCE:

# The same binary for this machine, to run under the emulator.
$(BUILD_DIR)/local/bootstrap: $(LAMBDA_SRC)
	@mkdir -p $(@D)
	CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $@ ./lambda/cmd/resolver

dev: check-tools dynamodb-local console ## serve GraphQL on http://127.0.0.1:$(PORT)/graphql over DynamoDB Local with sample data [SELECTION_READING=first-occurrence] [MESSAGE_READING=escaped-240000] [CLIENT_LIMIT=245760]
	$(GO) run ./local/cmd/dev -addr 127.0.0.1:$(PORT) -tls-addr 127.0.0.1:$(TLS_PORT) -selection-reading $(SELECTION_READING) -message-reading $(MESSAGE_READING) -client-limit $(CLIENT_LIMIT)

token: ## print a token acting as a sample user: make token CALLER=alice (CALLER=<name> NEW=1: a user with no profile yet)
	@$(GO) run ./local/cmd/dev token $(if $(filter 1,$(NEW)),-new) "$(CALLER)"

invoke: check-tools dynamodb-local rie $(BUILD_DIR)/local/bootstrap ## replay an event through the real bootstrap under the emulator: make invoke EVENT=events/<file>.json [RUNS=20 [AGAINST=<another bootstrap>]] [SECRET_DELAY=50ms] [TLS=1]
	$(GO) run ./local/cmd/invoke -event $(EVENT) -bootstrap $(BUILD_DIR)/local/bootstrap $(if $(RUNS),-runs $(RUNS)) $(if $(AGAINST),-against $(AGAINST)) $(if $(SECRET_DELAY),-secret-delay $(SECRET_DELAY)) $(if $(TLS),-tls)

bench: check-tools dynamodb-local node-baseline ## cost table (four layouts), what every mutation and a million live deliveries cost, the handler benchmarks (with the Node baseline), the JSON decoders compared, a comment's delivery to 100 subscribers
	@# The per-event figures first, in a process of their own: DynamoDB Local's
	@# JVM (which the other benchmarks start) takes CPU from them on 2 cores.
	$(GO) test -run '^$$' -bench Traffic -benchmem -count 3 ./lambda/resolver/
	$(GO) run ./local/cmd/bench
	$(GO) run ./local/cmd/capacity
	$(GO) test -run '^$$' -bench 'PostAuthorBatch100|CommentAuthorBatch100' -benchmem -count 3 ./lambda/resolver/
	$(GO) run ./local/cmd/endtoend
	$(GO) test -run '^$$' -bench Decoders -benchmem -count 3 ./lambda/internal/eventjson/
	$(GO) test -run '^$$' -bench CommentDelivery -benchtime 1x -count 3 ./local/devserver/
	$(GO) test -run '^$$' -bench CommentBesideLargeSubscriptions -benchtime 20x -count 3 ./local/devserver/

update: check-tools dynamodb-local ## after a deliberate change: rewrite the golden replies and every counted figure the documents carry (then review git diff)
	$(GO) test -count=1 ./lambda/resolver -run TestReplayEvents -update
	$(GO) test -count=1 ./local/bench -run 'WhatEachReading|EarlyReturnBeats|WhatEveryMutation' -update
	$(GO) test -count=1 ./local/capacity -run TestLocalReportsWhatTheModelCosts -update
	$(GO) test -count=1 ./local/devserver -run TestTheDocumentsQueries -update
	$(if $(wildcard lambda/trending),$(GO) test -count=1 ./lambda/trending -run TestWhatTrendingCosts -update)

event: check-tools dynamodb-local ## record the event the local AppSync sends a field while it runs a query over the sample data, into events/: make event FIELD=<Type.field> QUERY='<GraphQL>' [CALLER=<alice|bob|carol>] [VARIABLES='<JSON>'] [OUT=events/<Type.field>-<case>.json]
	$(GO) run ./local/cmd/event -field '$(FIELD)' -query '$(QUERY)' $(if $(CALLER),-caller '$(CALLER)') $(if $(VARIABLES),-variables '$(VARIABLES)') -out '$(or $(OUT),events/$(FIELD).json)'

capacity: check-tools dynamodb-local ## the capacity model: what a hot post or user sustains by DynamoDB's documented limits (.build/capacity.json, docs/capacity.svg)
	$(GO) run ./local/cmd/capacity

synth: check-node cdk-cli build ## synthesize the stack into cdk.out/ (offline, no AWS credentials needed)
	$(CDK) synth --quiet -c arch=$(ARCH) $(STACK_READING)
	@ls cdk.out/*.template.json

deploy: check-node cdk-cli build ## deploy the stack with your AWS credentials (THROWAWAY=true for a disposable stack; SELECTION_READING=... pins the selection reading the deployment's probe otherwise finds)
	$(CDK) deploy -c arch=$(ARCH) $(if $(filter true,$(THROWAWAY)),-c throwaway=true) $(STACK_READING)

destroy: check-node cdk-cli ## delete the stack (a retained table and user pool stay unless THROWAWAY=true was deployed)
	$(CDK) destroy

# The synthesized template, for make sam-invoke: synthesized again only when
# what it is made from changed (the CDK app, the functions, the schema and
# the features' parts of it, the JS resolvers, cdk.json, the architecture or
# the selection reading).
TEMPLATE  := cdk.out/AppSyncDynamo.template.json
INFRA_SRC := $(shell find infra -name '*.go' -not -name '*_test.go') infra/go.mod infra/go.sum infra/app.sh cdk.json schema/schema.graphql $(shell find lambda -name '*.graphql') $(wildcard appsyncjs/*.js)

sam-invoke: check-tools dynamodb-local $(TEMPLATE) ## replay an event with sam local invoke on the template (needs Docker and the SAM CLI): make sam-invoke EVENT=events/<file>.json
	$(GO) run ./local/cmd/saminvoke -template $(TEMPLATE) -event $(EVENT)

$(BUILD_DIR)/synth-context: FORCE
	@mkdir -p $(@D)
	@echo "$(ARCH) $(STACK_READING)" | cmp -s - $@ || echo "$(ARCH) $(STACK_READING)" > $@

$(TEMPLATE): $(INFRA_SRC) $(BOOTSTRAPS) $(BUILD_DIR)/synth-context | check-node cdk-cli
	$(CDK) synth --quiet -c arch=$(ARCH) $(STACK_READING)
	@touch $@

sam-container: check-tools dynamodb-local rie ## run the function in a container as SAM does, on a user-defined network with DynamoDB Local, and compare every read event's reply with make invoke's (installs and starts Debian's Docker where there is none; CI runs it)
	@command -v dockerd >/dev/null || { echo "installing Debian's docker.io (root)"; apt-get install -y -q docker.io >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q docker.io >/dev/null; }; }
	@docker info >/dev/null 2>&1 || { echo "starting dockerd"; (dockerd >/tmp/appsync-dynamo-dockerd.log 2>&1 &); for i in $$(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done; docker info >/dev/null; }
	$(GO) test -count=1 -tags samcontainer -v -run . ./local/samcontainer

STACK ?= AppSyncDynamo
smoke: ## first-deploy check against the deployed stack (AWS CLI + credentials), or make dev: make smoke [STACK=...] [URL=http://127.0.0.1:4000/graphql [SELECTION_READING=...]]
	$(GO) run ./local/cmd/smoke -stack $(STACK) $(if $(URL),-url $(URL) -selection-reading $(SELECTION_READING))

cdk-cli: $(CDK_DIR)/.installed ## install the pinned CDK CLI into the cache

# Named after its lock file, the directory holds what that lock file
# installs: it is installed once, beside, and moved into place.
$(CDK_DIR)/.installed:
	$(call npm-install,infra/cdk-cli,$(CDK_DIR),node_modules/.bin/cdk)

js-lint: $(JSLINT_DIR)/.installed ## install the APPSYNC_JS linter into the cache and link appsyncjs/node_modules to it (go test ./appsyncjs lints)
	ln -sfn "$(JSLINT_DIR)/node_modules" appsyncjs/node_modules

$(JSLINT_DIR)/.installed:
	$(call npm-install,appsyncjs,$(JSLINT_DIR),node_modules/.bin/eslint)

console: $(CONSOLE_DIR)/.installed ## install GraphiQL and React (the query page) into the cache and link local/console/node_modules to them
	ln -sfn "$(CONSOLE_DIR)/node_modules" local/console/node_modules

$(CONSOLE_DIR)/.installed:
	$(call npm-install,local/console,$(CONSOLE_DIR),node_modules/graphiql/graphiql.min.js)

js-clients: $(AMPLIFY_DIR)/.installed ## install Amplify (the real-time tests' client) into the cache and link local/realtime/amplify/node_modules to it
	ln -sfn "$(AMPLIFY_DIR)/node_modules" local/realtime/amplify/node_modules

$(AMPLIFY_DIR)/.installed:
	$(call npm-install,local/realtime/amplify,$(AMPLIFY_DIR),node_modules/aws-amplify)

node-baseline: $(NODEBASE_DIR)/.installed ## install Powertools for AWS Lambda (TypeScript), the per-event baseline in Node, into the cache

$(NODEBASE_DIR)/.installed:
	$(call npm-install,local/nodebaseline,$(NODEBASE_DIR),node_modules/@aws-lambda-powertools/event-handler)

browser: $(BROWSER_DIR)/.verified ## fetch, verify and unpack the headless Chromium of the query page's test into the cache

$(BROWSER_DIR)/.verified:
	@echo "fetching headless Chromium ($(BROWSER_PKG)@$(BROWSER_PKG_VERSION)) into $(BROWSER_DIR)"
	mkdir -p "$(BROWSER_DIR).partial.$(RUN_ID)"
	cd "$(BROWSER_DIR).partial.$(RUN_ID)" && npm pack --silent "$(BROWSER_PKG)@$(BROWSER_PKG_VERSION)" >/dev/null
	echo "$(BROWSER_PKG_SHA256)  $(BROWSER_DIR).partial.$(RUN_ID)/sparticuz-chromium-$(BROWSER_PKG_VERSION).tgz" | sha256sum --check --strict -
	tar -xzf "$(BROWSER_DIR).partial.$(RUN_ID)/sparticuz-chromium-$(BROWSER_PKG_VERSION).tgz" -C "$(BROWSER_DIR).partial.$(RUN_ID)" package/bin
	cd "$(BROWSER_DIR).partial.$(RUN_ID)" && node "$(CURDIR)/local/console/unbrotli.mjs" \
		package/bin/chromium.br headless-shell package/bin/al2023.tar.br al2023.tar \
		package/bin/swiftshader.tar.br swiftshader.tar package/bin/fonts.tar.br fonts.tar
	cd "$(BROWSER_DIR).partial.$(RUN_ID)" && tar -xf al2023.tar && tar -xf swiftshader.tar && tar -xf fonts.tar && rm -rf *.tar package
	chmod +x "$(BROWSER_DIR).partial.$(RUN_ID)/headless-shell" && rm "$(BROWSER_DIR).partial.$(RUN_ID)/sparticuz-chromium-$(BROWSER_PKG_VERSION).tgz"
	printf '<?xml version="1.0"?>\n<fontconfig><dir>%s/fonts</dir><cachedir>%s/fonts-cache</cachedir></fontconfig>\n' \
		"$(BROWSER_DIR)" "$(BROWSER_DIR)" > "$(BROWSER_DIR).partial.$(RUN_ID)/fonts.conf"
	printf '#!/bin/sh\n# chrome-headless-shell with the libraries and fonts unpacked beside it.\ndir=$$(dirname "$$(readlink -f "$$0")")\nLD_LIBRARY_PATH="$$dir:$$dir/lib" FONTCONFIG_FILE="$$dir/fonts.conf" exec "$$dir/headless-shell" "$$@"\n' \
		> "$(BROWSER_DIR).partial.$(RUN_ID)/chromium"
	chmod +x "$(BROWSER_DIR).partial.$(RUN_ID)/chromium"
	"$(BROWSER_DIR).partial.$(RUN_ID)/chromium" --version
	touch "$(BROWSER_DIR).partial.$(RUN_ID)/.verified"
	$(call place,$(BROWSER_DIR).partial.$(RUN_ID),$(BROWSER_DIR),.verified)

rie: $(RIE) ## install the Lambda Runtime Interface Emulator into the cache

$(RIE):
	mkdir -p "$(CACHE_DIR)/bin/.rie-build.$(RUN_ID)"
	@# Static (no cgo), as AWS ships it: it runs in a container without a C library (make sam-container).
	CGO_ENABLED=0 GOBIN="$(CACHE_DIR)/bin/.rie-build.$(RUN_ID)" $(GO) install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)
	mv "$(CACHE_DIR)/bin/.rie-build.$(RUN_ID)/aws-lambda-rie" "$@"
	rm -rf "$(CACHE_DIR)/bin/.rie-build.$(RUN_ID)"

check-tools: check-node ## fail loudly when a tool DynamoDB Local or the npm installs need is missing
	@for tool in java javac; do \
		command -v $$tool >/dev/null || { echo "missing $$tool: install a JDK 17+ (DynamoDB Local runs on it)" >&2; exit 1; }; \
	done

check-node:
	@command -v npm >/dev/null || { echo "missing npm: install Node.js 22 or 24" >&2; exit 1; }

check-lint: ## only make test lints the stack's template
	@command -v cfn-lint >/dev/null || { echo "missing cfn-lint (the stack's template is linted in make test): pip install cfn-lint" >&2; exit 1; }

dynamodb-local: $(DDB_DIR)/.verified ## fetch, verify and unpack DynamoDB Local into the cache

$(DDB_DIR)/.verified:
	@echo "fetching DynamoDB Local ($(DDB_PKG)@$(DDB_PKG_VERSION)) into $(DDB_DIR)"
	mkdir -p "$(DDB_DIR).partial.$(RUN_ID)"
	cd "$(DDB_DIR).partial.$(RUN_ID)" && npm pack --silent "$(DDB_PKG)@$(DDB_PKG_VERSION)" >/dev/null
	echo "$(DDB_PKG_SHA256)  $(DDB_DIR).partial.$(RUN_ID)/$(DDB_PKG)-$(DDB_PKG_VERSION).tgz" | sha256sum --check --strict -
	tar -xzf "$(DDB_DIR).partial.$(RUN_ID)/$(DDB_PKG)-$(DDB_PKG_VERSION).tgz" -C "$(DDB_DIR).partial.$(RUN_ID)" package/emulator
	mv "$(DDB_DIR).partial.$(RUN_ID)/package/emulator" "$(DDB_DIR).partial.$(RUN_ID)/emulator"
	rm -rf "$(DDB_DIR).partial.$(RUN_ID)/package" "$(DDB_DIR).partial.$(RUN_ID)/$(DDB_PKG)-$(DDB_PKG_VERSION).tgz"
	touch "$(DDB_DIR).partial.$(RUN_ID)/.verified"
	$(call place,$(DDB_DIR).partial.$(RUN_ID),$(DDB_DIR),.verified)

clean: ## remove build output (the download cache stays)
	rm -rf $(BUILD_DIR) cdk.out
