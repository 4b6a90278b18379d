# txscale front door. `make demo` and `make test` work on a fresh Debian 12 as root.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
TXS = $(BUILD)/txscale

.PHONY: all build deps demo test test-unit bench bench-peers lab lab-quick install clean sanitize tsan

all: build

deps:
	@scripts/deps build

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@scripts/demo $(TXS)

test: build
	@scripts/deps test
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE integration
	cd $(BUILD) && ctest --output-on-failure -L integration

test-unit: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L unit

# Unit tests under AddressSanitizer + UndefinedBehaviorSanitizer
sanitize: deps
	cmake -S . -B build-asan -G Ninja -DTXSCALE_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS) -L unit

# Concurrency tests under ThreadSanitizer
tsan: deps
	cmake -S . -B build-tsan -G Ninja -DTXSCALE_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && ctest --output-on-failure -L tsan

bench: build
	@scripts/deps bench
	bench/run-all $(TXS)

# txscale devices against peer tools (iperf3, sockperf, ...) on one veth: docs/results/peers.json
# txscale udp vs iperf3/sockperf (receiver drop in the stack, then in XDP) and
# packet/xdp vs trafgen, merged into peers.json
bench-peers: build
	@scripts/deps bench
	bench/peers --txscale $(TXS) --out docs/results/peers-udp.json $(PEERS_ARGS)
	bench/peers --txscale $(TXS) --sink xdp --out docs/results/peers-udp-xdp.json $(PEERS_ARGS)
	bench/peers-ring --txscale $(TXS) --out docs/results/peers-ring.json
	jq -s '[.[] | if type == "array" then .[] else . end]' docs/results/peers-udp.json \
		docs/results/peers-udp-xdp.json docs/results/peers-ring.json > docs/results/peers.json

lab: build
	@scripts/deps lab
	python3 bench/lab.py $(LAB_ARGS)

lab-quick: build
	@scripts/deps lab
	python3 bench/lab.py --quick $(LAB_ARGS)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) build-asan build-tsan
