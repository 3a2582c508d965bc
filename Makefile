# duty: the commands behind README's "make test" and CI's .ci/run.
# Everything needed is fetched by the go command from the module proxy
# (staticcheck is run at a pinned version with `go run`).

GO          ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 3s

.PHONY: test vet lint codegen race invariants allocs cring zmq4 protoactor fuzz-smoke bench-smoke ci demo

## test: everything a change must pass (vet, staticcheck, the hot paths'
## generated code, tests under -race, the packages with unsafe ring access
## again with their invariant checks, dutybench's C reference ring, and the
## benchmarks' allocation check)
test: vet lint codegen race invariants allocs cring zmq4 protoactor

# The C reference ring needs cgo and a C compiler (present on the project's
# machines); without one its vet and tests are skipped with a message.
HAVE_CC := $(shell command -v "$$($(GO) env CC)" >/dev/null 2>&1 && echo yes)

# The other platforms duty supports are checked without running anything
# there: go vet type-checks every package and its tests for darwin (with
# and without the invariant checks) and for linux/arm64, and darwin/arm64
# must build (docs/ipc.md, "Platforms").
vet:
	$(GO) vet ./...
	$(GO) vet -tags duty_queue_seqcst ./queue
	$(GO) vet -tags duty_codegen ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=darwin $(GO) vet -tags duty_invariants ./...
	GOARCH=arm64 $(GO) vet ./...
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	$(GO) vet -tags zmq4 ./cmd/dutybench
	$(GO) vet -tags protoactor ./cmd/dutybench
ifeq ($(HAVE_CC),yes)
	$(GO) vet -tags cring ./cmd/dutybench
else
	@echo "no C compiler ($$($(GO) env CC)): dutybench's C reference ring is not vetted"
endif

## lint: gofmt (the toolchain's own, so no install) and staticcheck
lint:
	@out=$$("$$($(GO) env GOROOT)/bin/gofmt" -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) run $(STATICCHECK) ./...

## codegen: the tests that hold the hot paths to the compiler's output
## (what inlines, exact instructions, the order of stores), read through
## internal/gcout. They are built only with -tags duty_codegen, so a Go
## upgrade that changes that code fails here, on its own, and the race and
## invariants passes do not build them. A new test in a duty_codegen file
## gets its name in CODEGEN_TESTS.
CODEGEN_PKGS  := ./internal/atomicbuf ./internal/record ./ringbuf ./mailbox ./message ./ipc/publication
CODEGEN_TESTS := TestReleaseStoresCompileToMOV|TestOrderedStoresOnArm64|TestOrderedStoresOnAmd64AreReleaseStores|TestFastPathsInlineTheCopy|TestReaderInlines|TestClaimMarkersOrderedOnArm64|TestPublishRecordOrderOnArm64|TestPublishRecordStoreOrder|TestWriteFastPathsInlineTheCopy|TestReadyInlines|TestPrefetchCallsInline|TestSendInlinesTheRingFastPath|TestIdleActorCycleInlines|TestMarkIsOneStore|TestMarkOrderedOnArm64|TestFixedRouteIsNotGeneric
codegen:
	$(GO) test -count=1 -tags duty_codegen -run '^($(CODEGEN_TESTS))$$' $(CODEGEN_PKGS)

race:
	$(GO) test -race -count=1 ./...

## invariants: the packages that index shared memory through unsafe
## pointers, built with -tags duty_invariants (every such access is checked
## and panics when out of bounds)
invariants:
	$(GO) test -count=1 -tags duty_invariants ./internal/... ./ringbuf ./broadcast ./mailbox ./ipc/...

## allocs: every dutybench variant and the trading demo's pipeline allocate
## nothing per message (the race detector allocates, so the race pass skips
## these tests)
allocs:
	$(GO) test -count=1 -run 'TestZeroAllocsPerMessage' ./cmd/dutybench
	$(GO) test -count=1 -run 'TestNoAllocationsPerMessage' ./examples/trading

## cring: dutybench's C reference ring (cgo, build tag cring) runs, its
## checker fails on a corrupt message, and W1 and W3 report their figures
## as ratios to it
cring:
ifeq ($(HAVE_CC),yes)
	$(GO) test -count=1 -tags cring -run 'TestSmokeEveryVariant/.*/w[13]/(cring|manytoone-to-cring)|TestCorruptSequenceFails/w[13]/(cring|manytoone-to-cring)|TestRunReportsTheLimit' ./cmd/dutybench
else
	@echo "no C compiler ($$($(GO) env CC)): dutybench's C reference ring is not tested"
endif

## zmq4: dutybench's go-zeromq/zmq4 variants of WZ and WZL (build tag zmq4,
## which keeps zmq4 out of the default build) run and fail on a corrupt
## message
zmq4:
	$(GO) test -count=1 -tags zmq4 -run 'TestSmokeEveryVariant/goroutines/wz.*/zmq4|TestCorruptSequenceFails/wz.*/zmq4' ./cmd/dutybench

## protoactor: dutybench's protoactor-go variants of WA and WAL (build tag
## protoactor, which keeps protoactor-go out of the default build) and
## duty's beside them run and fail on a corrupt message
protoactor:
	$(GO) test -count=1 -tags protoactor -run 'TestSmokeEveryVariant/.*/wal?/|TestCorruptSequenceFails/wal?/' ./cmd/dutybench

## fuzz-smoke: every fuzz target for FUZZTIME
fuzz-smoke:
	./.ci/fuzz-smoke $(FUZZTIME)

## bench-smoke: every benchmark once (a smoke test, not a measurement)
bench-smoke:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...

ci: test fuzz-smoke bench-smoke

## demo: the main demo
demo:
	$(GO) run ./examples/trading
