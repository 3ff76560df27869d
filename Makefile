# Petrel build entry points. `make demo` and `make test` are the Quick start.
SHELL := /bin/bash
export GOFLAGS := -buildvcs=false
# go.work lets `go run ./bench/cmd/netbench` work from the root; the targets
# below visit each module on its own instead.
export GOWORK := off

# Every Go module in the repository (the runtime module and bench/, interop/, ...).
MODULES := $(shell find . -name go.mod -not -path './.git/*' -not -path '*/testdata/*' -exec dirname {} \; | sort)
# How much each fuzz target runs inside `make test`: a count of inputs, not a
# duration (a time budget that ends while a worker is mid-input makes Go's
# fuzzer report "context deadline exceeded" as a failure now and then).
FUZZTIME ?= 20000x

.PHONY: demo test check fmt vet rules cross unit fuzz-brief generate

demo:
	go run ./examples/hello/demo

test: check unit fuzz-brief

check: fmt vet rules cross

# The network layer compiles for kqueue (macOS, FreeBSD) and elsewhere.
cross:
	@for os in darwin freebsd windows; do echo "go vet GOOS=$$os"; GOOS=$$os GOARCH=amd64 go vet ./buf/... ./gopool/... ./netpoll/... || exit 1; done

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '/testdata/')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet: generate
	@for m in $(MODULES); do echo "go vet $$m"; (cd $$m && go vet ./...) || exit 1; done

rules:
	@bash scripts/rules.sh

# Code that tests generate at test time (peers' generated code, never committed).
generate:
	@for m in $(MODULES); do if [ -x $$m/generate.sh ]; then (cd $$m && ./generate.sh) || exit 1; fi; done

unit: generate
	@for m in $(MODULES); do echo "go test -race $$m"; (cd $$m && go test -race -count=1 -timeout 15m ./...) || exit 1; done
	@# Memory and latency bounds are asserted exactly without the race runtime
	@# (one package at a time, and the overload test alone: nothing else runs).
	go test -count=1 -p 1 ./buf/... ./netpoll/...
	@# 32-bit pointers and ints (epoll data, buffer and frame arithmetic): amd64 Linux runs 386 binaries.
	@if [ "$$(go env GOHOSTOS)/$$(go env GOHOSTARCH)" = linux/amd64 ]; then \
	  echo "GOARCH=386 go test ./buf/... ./gopool/... ./netpoll/... ./transport/..."; \
	  GOARCH=386 go test -count=1 -p 1 ./buf/... ./gopool/... ./netpoll/... ./transport/... || exit 1; fi
	go test -count=1 -run '^TestOverloadGoodput$$' -v ./server/

# Runs every Fuzz target of every module briefly (its seed corpus runs in `unit` too).
fuzz-brief:
	@for m in $(MODULES); do \
	  for p in $$(cd $$m && go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...); do \
	    for f in $$(cd $$m && go test -list '^Fuzz' $$p | grep '^Fuzz'); do \
	      echo "fuzz $$p $$f ($(FUZZTIME))"; \
	      (cd $$m && go test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -timeout 5m $$p) || exit 1; \
	    done; \
	  done; \
	done
