#!/usr/bin/env bash
# Datagrams over the MTU on real frame devices (issue 12): on a veth with MTU
# 1500, `send --dev packet:` and `--dev xdp:` with -l 3000 (IPv4) and -l 8000
# (IPv6) exit 0, and `recv` in the peer namespace receives exactly -n
# datagrams (the kernel reassembles the fragments), with nothing lost,
# duplicated or malformed and no reassembly failure. Counts that are no
# multiple of anything, paced (-b) and unpaced (ring-full: the TX ring fills
# and the sender waits for room, never cutting a datagram). The sender's
# summary says datagrams = -n and frames = -n x fragments per datagram.
source "$(dirname "$0")/ring_lib.bash"
command -v jq >/dev/null || skip "needs jq (scripts/deps test)"
ring_setup ufv 1
settle

snmp_v4() { ip netns exec "$B" awk -v f="$1" '$1 == "Ip:" { if (!h) { for (i = 2; i <= NF; i++) col[$i] = i; h = 1 } else print $col[f] }' /proc/net/snmp; }
snmp_v6() { ip netns exec "$B" awk -v f="$1" '$1 == f { print $2 }' /proc/net/snmp6; }

# run DEV DST LEN N FRAGS [send args]
run() {
  local dev=$1 dst=$2 len=$3 n=$4 frags=$5; shift 5
  local name="$dev $dst -l $len -n $n $*" rf0 rf1
  case $dst in *:*) rf0=$(snmp_v6 Ip6ReasmFails) ;; *) rf0=$(snmp_v4 ReasmFails) ;; esac
  rm -f "$WORK/sum.json" # recv stops early at an old summary's count
  ip netns exec "$B" "$TXS" recv -B "$dst" -p 5201 --rcvbuf 33554432 -i 0 -J --idle 1.5 -t 60 \
    --sender-summary "$WORK/sum.json" >"$WORK/recv.json" 2>"$WORK/recv.err" &
  local rpid=$!
  sleep 0.5
  if ! ip netns exec "$A" timeout 60 "$TXS" send -i 0 --dev "$dev" -l "$len" -n "$n" --summary-file "$WORK/sum.json" \
    "$@" "$dst" >"$WORK/send.log" 2>&1; then
    fail "$name: send exited non-zero: $(tail -3 "$WORK/send.log")"
    kill "$rpid" 2>/dev/null; wait "$rpid" 2>/dev/null
    return
  fi
  wait "$rpid" || { fail "$name: recv: $(cat "$WORK/recv.err")"; return; }
  case $dst in *:*) rf1=$(snmp_v6 Ip6ReasmFails) ;; *) rf1=$(snmp_v4 ReasmFails) ;; esac
  local R S
  R=$(tail -n1 "$WORK/recv.json")
  S=$(cat "$WORK/sum.json")
  local sent dg fr drops got lost dup mal
  sent=$(jq -r .packets <<<"$S") dg=$(jq -r .datagrams <<<"$S") fr=$(jq -r .frames <<<"$S") drops=$(jq -r .drops <<<"$S")
  got=$(jq -r .received <<<"$R") lost=$(jq -r .lost <<<"$R") dup=$(jq -r .duplicates <<<"$R") mal=$(jq -r .malformed <<<"$R")
  [ "$sent" = "$n" ] && [ "$dg" = "$n" ] && [ "$drops" = 0 ] || { fail "$name: sender counted $sent datagrams ($dg), $drops drops, want $n"; return; }
  [ "$fr" = $((n * frags)) ] || fail "$name: sender counted $fr frames, want $((n * frags))"
  [ "$got" = "$n" ] || fail "$name: recv received $got of $n: $(jq -c "{lost,lost_exact,late,kernel_drops,flows}" <<<"$R" | head -c 600)"
  [ "$lost" = 0 ] && [ "$dup" = 0 ] && [ "$mal" = 0 ] || fail "$name: lost $lost, duplicates $dup, malformed $mal"
  [ "$rf1" = "$rf0" ] || fail "$name: peer reassembly failures +$((rf1 - rf0))"
  ok "$name: $n datagrams in $fr frames sent, $got received"
}

# IPv4 3000 bytes: 3 fragments (1480 + 1480 + 48); IPv6 8000: 6 (5 x 1448 + 768)
run packet:tx0 198.18.0.2 3000 1237 3 -b 20k
run packet:tx0 2001:2::2 8000 613 6 -b 10k
run packet:tx0 198.18.0.2 3000 3001 3                    # unpaced: the ring fills
run packet:tx0,ring=64 2001:2::2 8000 997 6              # a small ring, unpaced
run packet:tx0 198.18.0.2 3000 1001 3 --unconnected -b 20k
if ip netns exec "$A" "$TXS" send -i 0 -n 1 --dev xdp:tx0 198.18.0.2 >"$WORK/probe.log" 2>&1; then
  sleep 0.3
  run xdp:tx0 198.18.0.2 3000 1237 3 -b 20k
  run xdp:tx0 2001:2::2 8000 613 6 -b 10k
  run xdp:tx0 198.18.0.2 3000 2003 3
  run xdp:tx0,ring=64 2001:2::2 8000 511 6
else
  echo "note: AF_XDP unavailable here, xdp: cases skipped: $(grep -o -- '--dev.*' "$WORK/probe.log" | head -1)"
fi

# --df over the MTU: refused up front like the kernel (EMSGSIZE), exit 2
rc=0
ip netns exec "$A" "$TXS" send -i 0 -n 1 --dev packet:tx0 -l 1473 --df 198.18.0.2 >"$WORK/err.log" 2>&1 || rc=$?
if [ $rc = 2 ] && grep -q -- "-l/--length: '1473'.*MTU 1500" "$WORK/err.log"; then ok "--df: $(head -1 "$WORK/err.log")"
else fail "--df -l 1473: exit $rc: $(cat "$WORK/err.log")"; fi

[ "$FAILS" = 0 ] || { echo "$FAILS failure(s)"; exit 1; }
echo "PASS"
