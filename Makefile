# txscale front door. `make demo` and `make test` work on a fresh Debian 12 as root.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
TXS = $(BUILD)/txscale

.PHONY: all build deps demo test test-unit bench bench-peers bench-stamp lab lab-quick install clean sanitize tsan check-builds deb abi-dump

all: build

deps:
	@scripts/deps build

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@scripts/demo $(TXS)

test: deps
	@scripts/deps test
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_INSTALL_PREFIX=$(PREFIX) -DTXSCALE_WERROR=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE integration
	cd $(BUILD) && ctest --output-on-failure -j 2 -L integration

test-unit: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L unit

# Unit tests under AddressSanitizer + UndefinedBehaviorSanitizer
sanitize: deps
	cmake -S . -B build-asan -G Ninja -DTXSCALE_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug -DTXSCALE_WERROR=ON
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS) -L unit

# Concurrency tests under ThreadSanitizer
tsan: deps
	cmake -S . -B build-tsan -G Ninja -DTXSCALE_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTXSCALE_WERROR=ON
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && ctest --output-on-failure -L tsan

# The builds users and packagers make: Release (-O3) with gcc and a clang
# build, both with warnings as errors so that a new warning fails CI.
check-builds: deps
	@scripts/deps test
	cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DTXSCALE_WERROR=ON
	cmake --build build-release -j $(JOBS)
	CC=clang cmake -S . -B build-clang -G Ninja -DCMAKE_BUILD_TYPE=Release -DTXSCALE_WERROR=ON
	cmake --build build-clang -j $(JOBS)

bench: build
	@scripts/deps bench
	bench/run-all $(TXS)

# txscale devices against peer tools (iperf3, sockperf, ...) on one veth: docs/results/peers.json
# txscale udp vs iperf3/sockperf (receiver drop in the stack, then in XDP) and
# packet/xdp vs trafgen, merged into peers.json
# the STAMP reflector against a minimal echo loop, the sender at 100k/s (docs/stamp.md)
bench-stamp: build
	@scripts/deps bench
	bench/stamp --txscale $(TXS) --out docs/results/stamp-latest.json $(STAMP_ARGS)

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

# At a release (docs/abi.md): the ABI dump of the stable surface that the
# test build_abi holds every later build to, abi/libtxscale.so.N.abi, taken
# with abidw from the build's stable projection (needs -g: the default
# RelWithDebInfo build). Commit it with the release.
abi-dump: build
	@scripts/deps test
	cmake --build $(BUILD) --target abi-dump

# Debian packages (debian/): libtxscale0, libtxscale-dev, txscale, built in a
# copy of the tree under $(BUILD)/deb-src; the packages, lintian's report and
# the build log land in $(BUILD)/deb. DEB_BUILD_OPTIONS= (empty) also runs
# the unit tests inside the package build.
deb:
	@scripts/deps deb
	scripts/deb $(BUILD)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-release build-clang
