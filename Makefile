# Aulos: the two commands a newcomer needs are `make demo` and `make test`; both install missing
# system packages first (scripts/setup.sh). Slow suites have their own targets.
SWIFT ?= swift
DEMO_FILE ?= demo.wav

.PHONY: all setup build test tsan demo bench clean

all: build

setup:
	@scripts/setup.sh

build: setup
	$(SWIFT) build

## Builds and runs every test suite (unit, graph, render, CLI, zero-allocation).
test: setup
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

## The threaded tests (live graph updates under a render thread, the SPSC ring) under ThreadSanitizer.
## The allocation-counting tests skip themselves here: the sanitizer owns malloc.
tsan: setup
	$(SWIFT) build --build-tests --scratch-path .build-tsan --sanitize=thread
	$(SWIFT) test --skip-build --scratch-path .build-tsan --sanitize=thread --filter 'RealtimeSafetyTests|RealtimeTests'

## Renders the built-in demo rig offline to $(DEMO_FILE) and prints its graph.
demo: setup
	$(SWIFT) build -c release --product aulos
	.build/release/aulos graph
	.build/release/aulos render --output $(DEMO_FILE)

## Graph-overhead benchmark against a C reference (own package: ~4 minutes to build the first time).
bench: setup
	cd Benchmarks && $(SWIFT) package --disable-sandbox benchmark --format markdown

clean:
	rm -rf .build .build-tsan Benchmarks/.build $(DEMO_FILE)
