# make run   installs what is missing, builds, starts every service (ARGS="--flag=value ...")
# make test  builds and runs every test; make bench runs the benchmarks
# make fuzz  runs the fuzz tests with many more requests and a random seed (FUZZ_SEED / FUZZ_COUNT override)
SHELL := /bin/bash
PROTOS := $(shell find proto -name '*.proto')
GEN := internal/rpc/gen/.stamp

.PHONY: all deps nats build run test fuzz bench clean
all: build

deps: node_modules/.stamp nats

# npm install applies patches/ (postinstall: patch-package)
node_modules/.stamp: package.json $(wildcard package-lock.json) $(wildcard patches/*.patch)
	npm install --no-audit --no-fund
	@touch $@

# Debian's nats-server carries watch fan-out; install it when absent.
nats:
	@command -v nats-server >/dev/null 2>&1 || { \
	  echo "installing nats-server"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server) >/dev/null \
	  || { echo "could not install nats-server: run 'apt-get install nats-server' as root"; exit 1; }; }

$(GEN): $(PROTOS) node_modules/.stamp
	node scripts/gen-proto-types.mjs
	@touch $@

build: deps $(GEN)
	npx tsc -p tsconfig.json
	node scripts/link-bins.mjs

run: build
	node dist/cmd/svc-apiserver/main.js $(ARGS)

test: build
	node dist/test/run.js $(TESTS)

FUZZ_COUNT ?= 25000
FUZZ_SEED ?= random
fuzz: build
	FUZZ_COUNT=$(FUZZ_COUNT) FUZZ_SEED=$(FUZZ_SEED) node dist/test/run.js integration/fuzz.test

bench: build
	node dist/test/bench/run.js

clean:
	rm -rf dist bin internal/rpc/gen
