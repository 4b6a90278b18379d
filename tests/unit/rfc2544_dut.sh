#!/usr/bin/env bash
# A stand-in for the txscale program in tests/unit/test_rfc2544.c: `send`
# and `recv` as the RFC 2544 session runs them, around a modelled device
# under test, a token bucket of FAKE_T frames/s and FAKE_B frames, behind a
# sender whose top rate is FAKE_TOP frames/s. No packet is sent: `send`
# writes the summary of what it would have sent (rate x time, or -n), and
# `recv` answers with what the bucket lets through:
#   passed = sent                               when the rate <= T
#          = min(sent, T x sent / rate + B)     otherwise
# FAKE_LOG, when set, gets one line per child: the arguments it was given.
set -u
cmd=$1; shift
T=${FAKE_T:-50000} B=${FAKE_B:-1000} TOP=${FAKE_TOP:-400000}
[ -n "${FAKE_LOG:-}" ] && echo "$cmd $*" >>"$FAKE_LOG"
case $cmd in
send)
  rate=0 secs=10 n=0 sum= dry=0
  while [ $# -gt 0 ]; do
    case $1 in
      -b) rate=${2%pps}; shift ;;  # the session writes datagrams/s with pps
      -t) secs=$2; shift ;;
      -n) n=$2; shift ;;
      --summary-file) sum=$2; shift ;;
      --dry-run) dry=1 ;;
    esac
    shift
  done
  [ $dry = 1 ] && exit 0
  awk -v r="$rate" -v s="$secs" -v n="$n" -v top="$TOP" 'BEGIN {
    if (r == 0) r = top
    p = n > 0 ? n : int(r * s + 0.5)
    printf "{\"type\":\"summary\",\"kind\":\"send\",\"seconds\":%.17g,\"packets\":%d,\"drops\":0,\"pps\":%.17g}\n", p / r, p, r
  }' >"$sum.tmp" && mv "$sum.tmp" "$sum"
  ;;
recv)
  fd= sum= ss=
  while [ $# -gt 0 ]; do
    case $1 in
      --ready-fd) fd=$2; shift ;;
      --summary-file) sum=$2; shift ;;
      --sender-summary) ss=$2; shift ;;
    esac
    shift
  done
  echo ready >&"$fd"
  for _ in $(seq 1000); do [ -f "$ss" ] && break; sleep 0.01; done
  [ -f "$ss" ] || { echo "no sender summary" >&2; exit 1; }
  awk -v t="$T" -v b="$B" '{
    match($0, /"packets":[0-9]+/); p = substr($0, RSTART + 10, RLENGTH - 10) + 0
    match($0, /"pps":[0-9.e+]+/); r = substr($0, RSTART + 6, RLENGTH - 6) + 0
    ok = p
    if (r > t) { ok = int(t * p / r + b); if (ok > p) ok = p }
    printf "{\"type\":\"summary\",\"kind\":\"recv\",\"received\":%d,\"lost\":%d,\"lost_exact\":true,\"pps\":%.17g,", ok, p - ok, r
    printf "\"latency_ns\":{\"count\":%d,\"min\":1000,\"mean\":2000,\"p50\":2047,\"p90\":3071,\"p99\":4095,\"p99.9\":5119,\"max\":6000}}\n", ok
  }' "$ss" >"$sum"
  ;;
*) echo "rfc2544_dut.sh: no command '$cmd'" >&2; exit 2 ;;
esac
