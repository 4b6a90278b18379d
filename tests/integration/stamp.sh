#!/usr/bin/env bash
# STAMP (RFC 8762/8972, docs/stamp.md) across the veth lab, with scapy's
# codec (python3-scapy, scapy.contrib.stamp) as the independent peer:
#   1. scapy session-sender -> txscale stamp reflect (stateful, stateless;
#      IPv4, IPv6): every echoed field, T1 <= T2 <= T3, TTL, SSID, the U flag,
#      CoS / Direct Measurement TLVs, symmetric lengths; runts get no answer
#      and the reflector counts each one
#   2. txscale stamp send -> a scapy stateless reflector: counts and RTT; the
#      same command against scapy's and txscale's stateless reflectors in one
#      run gives the same verdict and counts
#   3. loss per direction: nftables drop rules (numgen) in each direction;
#      lost_forward and lost_backward equal the two drop counters exactly;
#      the last replies dropped: tail probes until one comes, still exact
#   4. authenticated mode both ends; a wrong key: dropped, counted, never answered
#   5. -P on both ends (SO_REUSEPORT, one session per thread)
#   6. txscale server --stamp: the reflector beside the control port, in the
#      server's metrics; -i interval lines add up to the summary
#   7. bad options: one clear line, exit 2
#   8. speed: stamp send -A 0 at 100kpps for 3 s against stamp reflect on
#      the other CPU: sent 300000, nothing lost either way (one retry on a
#      loaded machine, said in the output)
set -euo pipefail

SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
PY=/usr/bin/python3
PEER=$SRC/tests/integration/stamp_peer.py
lab_test stamp nft
[ -x $PY ] && $PY -c 'import scapy.contrib.stamp' 2>/dev/null || skip "needs Debian's python3-scapy (scapy.contrib.stamp; scripts/deps test)"

# reflector [ARGS]: txscale stamp reflect -J ARGS in namespace B (port 862);
# returns once it listens. refl_end: SIGINT, its final counters in $tmp/refl.json
reflector() {
  ip netns exec "$B" "$TXS" stamp reflect -J "$@" >"$tmp/refl.json" 2>"$tmp/refl.err" &
  refl=$!
  FAIL_HOOKS+=('sed "s/^/  reflector: /" "$tmp/refl.err" "$tmp/refl.json" 2>/dev/null')
  wait_for 10 grep -q listening "$tmp/refl.err" || fail "the reflector does not start: $(cat "$tmp/refl.err")"
}
refl_end() {
  kill -INT "$refl" 2>/dev/null || true
  wait "$refl" || fail "the reflector exited $?"
  tail -n1 "$tmp/refl.json" | jq -e '.type == "stamp_reflector"' >/dev/null || fail "no reflector counters"
}
rf() { tail -n1 "$tmp/refl.json" | jq -r "$1"; }

scapy_sender() { # MODE DST [REFLECT ARGS]
  local mode=$1 dst=$2
  shift 2
  reflector "$@"
  ip netns exec "$A" $PY "$PEER" sender "$dst" 862 --mode "$mode" --ttl 57 >"$tmp/peer.out" 2>&1 ||
    fail "scapy sender: $(cat "$tmp/peer.out")"
  ok "scapy sender: $(tail -n1 "$tmp/peer.out")"
  refl_end
  # 5 packets with TLVs + 2 plain + 1 malformed answered; 4 runts counted, never answered
  [ "$(rf .received)" = 12 ] || fail "reflector received $(rf .received), want 12"
  [ "$(rf .reflected)" = 8 ] || fail "reflector reflected $(rf .reflected), want 8"
  [ "$(rf .runts)" = 4 ] || fail "reflector counted $(rf .runts) runts, want 4"
  [ "$(rf .tlv_unknown)" = 5 ] || fail "reflector counted $(rf .tlv_unknown) unknown TLVs, want 5"
  [ "$(rf .tlv_malformed)" = 1 ] || fail "reflector counted $(rf .tlv_malformed) malformed TLVs, want 1"
  ok "reflector: $(tail -n1 "$tmp/refl.json")"
}
run_case scapy_sender_v4 scapy_sender stateful 198.18.0.2
run_case scapy_sender_v6 scapy_sender stateful 2001:2:0:0::2
run_case scapy_sender_stateless scapy_sender stateless 198.18.0.2 --stateless
run_case scapy_sender_bound scapy_sender stateful 198.18.0.2 -B 198.18.0.2

# 2. txscale stamp send against scapy's stateless reflector
scapy_reflector() {
  local n=300
  ip netns exec "$B" $PY "$PEER" reflector 198.18.0.2 862 --count $n --timeout 30 --ready "$tmp/ready" \
    >"$tmp/peer.out" 2>&1 &
  local p=$!
  wait_for 10 test -s "$tmp/ready" || fail "scapy reflector does not start: $(cat "$tmp/peer.out")"
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -b 200pps -n $n -l 64 -J >"$tmp/send.json" 2>"$tmp/send.err" ||
    fail "stamp send: $(cat "$tmp/send.err")"
  wait $p || fail "scapy reflector: $(cat "$tmp/peer.out")"
  ok "send: $(cat "$tmp/send.json")"
  ok "scapy: $(cat "$tmp/peer.out")"
  local j=$tmp/send.json
  [ "$(jq -r .reflector "$j")" = stateless ] || fail "scapy's stateless reflector taken for $(jq -r .reflector "$j")"
  [ "$(jq -r .lost_forward "$j")" = null ] || fail "a split per direction claimed against a stateless reflector"
  [ "$(jq -r '.sent == '$n' and .received == '$n' and .lost == 0' "$j")" = true ] || fail "counts: $(cat "$j")"
  [ "$(jq -r .answered "$tmp/peer.out")" = $n ] || fail "scapy answered $(jq -r .answered "$tmp/peer.out"), want $n"
  [ "$(jq -r '.rtt_ns.count' "$j")" = $n ] || fail "rtt samples $(jq -r .rtt_ns.count "$j")"
  # RTT excludes the reflector's time between T2 and T3: each RTT <= T4 - T1, > 0
  [ "$(jq -r '.rtt_ns.min > 0 and .rtt_ns.p50 <= .rtt_ns.max and .rtt_ns.max < 1000000000' "$j")" = true ] ||
    fail "rtt: $(jq -c .rtt_ns "$j")"
}
run_case scapy_reflector

# the same command against scapy's stateless reflector and txscale's
# --stateless one, in the same run: the same verdict and counts
differential() {
  local n=200 k
  ip netns exec "$B" $PY "$PEER" reflector 198.18.0.2 862 --count $n --timeout 30 --ready "$tmp/ready" >"$tmp/peer.out" 2>&1 &
  local p=$!
  wait_for 10 test -s "$tmp/ready" || fail "scapy reflector does not start"
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -b 200pps -n $n -l 80 -J >"$tmp/scapy.json" || fail "send vs scapy"
  wait $p || fail "scapy reflector: $(cat "$tmp/peer.out")"
  reflector --stateless
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -b 200pps -n $n -l 80 -J >"$tmp/txs.json" || fail "send vs txscale"
  refl_end
  k='{reflector,split,sent,reflected,received,lost,lost_forward,lost_backward,rtt:.rtt_ns.count}'
  ok "scapy:   $(jq -c "$k" "$tmp/scapy.json")"
  ok "txscale: $(jq -c "$k" "$tmp/txs.json")"
  [ "$(jq -c "$k" "$tmp/scapy.json")" = "$(jq -c "$k" "$tmp/txs.json")" ] || fail "the two reflectors differ"
}
run_case differential

# 3. loss per direction against nftables drop counters
nft_loss() { # FAMILY (4|6) [REFLECT ARGS]
  local fam=$1 dst n=3000
  shift
  if [ "$fam" = 4 ]; then dst=198.18.0.2; else dst=2001:2:0:0::2; fi
  reflector "$@"
  ip netns exec "$B" nft "add table inet stampf; add chain inet stampf in { type filter hook input priority 0; }; add rule inet stampf in udp dport 862 numgen inc mod 10 == 5 counter drop"
  ip netns exec "$A" nft "add table inet stampb; add chain inet stampb in { type filter hook input priority 0; }; add rule inet stampb in udp sport 862 numgen inc mod 7 == 3 counter drop"
  CLEANUP_HOOKS+=('ip netns exec "$B" nft delete table inet stampf 2>/dev/null' 'ip netns exec "$A" nft delete table inet stampb 2>/dev/null')
  ip netns exec "$A" timeout 60 "$TXS" stamp send "$dst" -b 3kpps -n $n -J --wait 0.5 >"$tmp/send.json" 2>"$tmp/send.err" ||
    fail "stamp send: $(cat "$tmp/send.err")"
  refl_end
  local fd bd j=$tmp/send.json
  fd=$(ip netns exec "$B" nft -j list table inet stampf | jq '[.nftables[] | .rule? | select(.) | .expr[] | .counter? | select(.) | .packets] | add')
  bd=$(ip netns exec "$A" nft -j list table inet stampb | jq '[.nftables[] | .rule? | select(.) | .expr[] | .counter? | select(.) | .packets] | add')
  ip netns exec "$B" nft delete table inet stampf
  ip netns exec "$A" nft delete table inet stampb
  ok "nft drops: forward $fd, backward $bd; send: $(jq -c '{reflector,split,sent,reflected,received,lost,lost_forward,lost_backward,tail_probes,outages}' "$j")"
  [ "$fd" -gt 0 ] && [ "$bd" -gt 0 ] || fail "the drop rules dropped nothing ($fd, $bd)"
  [ "$(jq -r .lost "$j")" = $((fd + bd)) ] || fail "lost $(jq -r .lost "$j"), nft dropped $((fd + bd))"
  if [ "${1:-}" = --stateless ]; then
    [ "$(jq -r .lost_forward "$j")" = null ] || fail "a split claimed against a stateless reflector"
    return 0
  fi
  [ "$(jq -r .split "$j")" = exact ] || fail "split $(jq -r .split "$j"), want exact"
  [ "$(jq -r .lost_forward "$j")" = "$fd" ] || fail "lost_forward $(jq -r .lost_forward "$j"), nft dropped $fd on the way there"
  [ "$(jq -r .lost_backward "$j")" = "$bd" ] || fail "lost_backward $(jq -r .lost_backward "$j"), nft dropped $bd on the way back"
  # the reflector got exactly what nft let through, and reflected all of it
  local sent
  sent=$(jq -r .sent "$j")
  [ "$(rf .reflected)" = $((sent - fd)) ] || fail "reflector reflected $(rf .reflected), want $sent - $fd"
  [ "$(jq -r .reflected "$j")" = $((sent - fd)) ] || fail "the sender's reflected $(jq -r .reflected "$j"), want $((sent - fd))"
}
run_case nft_loss_v4 nft_loss 4
run_case nft_loss_v6 nft_loss 6
run_case nft_loss_stateless nft_loss 4 --stateless

# the last replies lost on the way back: tail probes until one is answered,
# and the split is still exact
nft_tail() {
  reflector
  ip netns exec "$A" nft "add table inet stampt; add chain inet stampt in { type filter hook input priority 0; }; add rule inet stampt in udp sport 862 numgen inc mod 1000 97-101 counter drop"
  CLEANUP_HOOKS+=('ip netns exec "$A" nft delete table inet stampt 2>/dev/null')
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -b 1kpps -n 100 -J --wait 0.3 >"$tmp/send.json" 2>"$tmp/send.err" ||
    fail "stamp send: $(cat "$tmp/send.err")"
  refl_end
  local bd j=$tmp/send.json
  bd=$(ip netns exec "$A" nft -j list table inet stampt | jq '[.nftables[] | .rule? | select(.) | .expr[] | .counter? | select(.) | .packets] | add')
  ok "nft dropped $bd replies; send: $(jq -c '{split,sent,received,lost_forward,lost_backward,tail_probes}' "$j")"
  [ "$bd" = 5 ] || fail "nft dropped $bd, want 5 (3 last replies, 2 tail probes' replies)"
  [ "$(jq -c '[.split, .sent, .lost_forward, .lost_backward, .tail_probes]' "$j")" = '["exact",103,0,5,3]' ] ||
    fail "tail: $(cat "$j")"
}
run_case nft_tail

# 4. authenticated mode
auth() {
  printf 'stamp-secret\n' >"$tmp/key"
  printf 'other-secret\n' >"$tmp/bad"
  reflector --auth-file "$tmp/key"
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -b 1kpps -n 500 -J --auth-file "$tmp/key" --tlvs cos,direct \
    >"$tmp/send.json" 2>"$tmp/send.err" || fail "stamp send: $(cat "$tmp/send.err")"
  ok "$(cat "$tmp/send.json")"
  [ "$(jq -r '.sent == 500 and .received == 500 and .lost == 0 and .reflector == "stateful"' "$tmp/send.json")" = true ] ||
    fail "authenticated: $(cat "$tmp/send.json")"
  local rc=0
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -n 3 --auth-file "$tmp/bad" >"$tmp/bad.out" 2>&1 || rc=$?
  [ $rc = 1 ] || fail "a sender with the wrong key: exit $rc ($(cat "$tmp/bad.out"))"
  grep -q "no answer to 5 first probes (1 s each): nothing came back" "$tmp/bad.out" ||
    fail "a sender with the wrong key: $(cat "$tmp/bad.out")"
  # an unauthenticated sender's 44-byte packets are runts to an authenticated reflector
  rc=0
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -n 2 >"$tmp/plain.out" 2>&1 || rc=$?
  [ $rc = 1 ] || fail "an unauthenticated sender: exit $rc"
  grep -q "an authenticated one wants --auth-file" "$tmp/plain.out" || fail "an unauthenticated sender: $(cat "$tmp/plain.out")"
  refl_end
  # nothing on the port: the ICMP port unreachables are named, not taken for silence
  rc=0
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -p 863 -n 2 >"$tmp/none.out" 2>&1 || rc=$?
  [ $rc = 1 ] && grep -q "the host answered port unreachable (ICMP) [0-9]* times: no reflector listens on that port" \
    "$tmp/none.out" || fail "no reflector: exit $rc: $(cat "$tmp/none.out")"
  [ "$(rf .bad_mac)" = 5 ] || fail "bad MACs counted $(rf .bad_mac), want 5 (the wrong key's first probes)"
  [ "$(rf .runts)" = 5 ] || fail "runts counted $(rf .runts), want 5"
  [ "$(rf .reflected)" = 500 ] || fail "reflected $(rf .reflected), want 500"
  [ "$(rf .sessions)" = 1 ] || fail "sessions $(rf .sessions): a packet with a wrong MAC made one"
}
run_case auth

# 5. sessions in parallel, reflector threads over SO_REUSEPORT
parallel() {
  reflector -P 2
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -B 198.18.0.1 -P 3 -b 2kpps -n 2000 -J >"$tmp/send.json" 2>"$tmp/send.err" ||
    fail "stamp send: $(cat "$tmp/send.err")"
  refl_end
  ok "$(cat "$tmp/send.json")"
  [ "$(jq -r '.sent == 6000 and .received == 6000 and .lost == 0 and .lost_forward == 0' "$tmp/send.json")" = true ] ||
    fail "-P 3: $(cat "$tmp/send.json")"
  [ "$(rf .sessions)" = 3 ] && [ "$(rf .reflected)" = 6000 ] || fail "reflector: $(tail -n1 "$tmp/refl.json")"
}
run_case parallel

# the sender's TLVs (the DSCP the reflector got comes back in CoS) and PTPv2 stamps
sender_options() {
  reflector
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -n 300 -b 1kpps -S 0x28 --tlvs cos,direct,tsinfo,pad -l 200 -J \
    >"$tmp/tlv.json" 2>&1 || fail "--tlvs: $(cat "$tmp/tlv.json")"
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -n 300 -b 1kpps --ptp -J >"$tmp/ptp.json" 2>&1 ||
    fail "--ptp: $(cat "$tmp/ptp.json")"
  # the text summary says what the JSON does: the split, the probes around the run, the CoS echo
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -n 100 -b 1kpps -S 0x28 --tlvs cos >"$tmp/tlv.txt" 2>&1 ||
    fail "--tlvs, text: $(cat "$tmp/tlv.txt")"
  grep -q "^split exact; first probe retried 0 times, 0 tail probes, 0 refused by our device, 0 foreign replies; CoS echoed: DSCP 10 ECN 0$" \
    "$tmp/tlv.txt" || fail "the text summary: $(cat "$tmp/tlv.txt")"
  refl_end
  ok "tlvs: $(jq -c '{received,cos,bad_time}' "$tmp/tlv.json"); ptp: $(jq -c '{received,bad_time,rtt:.rtt_ns.count}' "$tmp/ptp.json")"
  [ "$(jq -c '[.received, .cos.dscp, .cos.ecn, .bad_time]' "$tmp/tlv.json")" = '[300,10,0,0]' ] || fail "--tlvs cos with DSCP 10"
  [ "$(jq -c '[.received, .rtt_ns.count, .bad_time]' "$tmp/ptp.json")" = '[300,300,0]' ] || fail "--ptp"
  [ "$(rf .tlv_unknown)" = 0 ] && [ "$(rf .tlv_malformed)" = 0 ] || fail "the reflector found our TLVs wrong"
}
run_case sender_options

# 6. txscale server --stamp: the reflector beside the control port, in its metrics
server_stamp() {
  lab_server -B 198.18.0.2 --stamp --metrics-file "$tmp/srv.prom"
  grep -q "STAMP reflector on 198.18.0.2 port 862" "$tmp/srv.log" || fail "no STAMP reflector in the server's log"
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -b 2kpps -n 1000 -J >"$tmp/send.json" 2>"$tmp/send.err" ||
    fail "stamp send: $(cat "$tmp/send.err")"
  [ "$(jq -r '.sent == 1000 and .lost == 0 and .reflector == "stateful"' "$tmp/send.json")" = true ] ||
    fail "against the server: $(cat "$tmp/send.json")"
  # the control port still serves a test meanwhile
  ip netns exec "$A" timeout 60 "$TXS" send -c 198.18.0.2 -n 1000 -b 10kpps -J >"$tmp/ctl.json" 2>&1 ||
    fail "send -c: $(tail -n3 "$tmp/ctl.json")"
  wait_for 5 grep -q '^txscale_stamp_reflected_total 1000$' "$tmp/srv.prom" ||
    fail "metrics: $(grep stamp "$tmp/srv.prom" || echo none)"
  ok "$(grep '^txscale_stamp_re' "$tmp/srv.prom" | tr '\n' ' ')"
  kill -INT "$srv"
  wait "$srv" || fail "server exited $?"
  # its exit says what the reflector did, as stamp reflect's does
  grep -q "stamp reflector: 1000 received, 1000 reflected, 0 runts, 0 bad MAC, 0 send errors, 1 sessions" "$tmp/srv.log" ||
    fail "the server's exit does not give the reflector's counts: $(tail -n 3 "$tmp/srv.log")"
  txs_refuses "bad value for --stamp" server --stamp=99999
  txs_refuses "bad value for --stamp-auth-file" server --stamp --stamp-auth-file "$tmp/nonexistent"
}
run_case server_stamp

# interval reports (-i): per session; they add up to the summary
intervals() {
  reflector
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -P 2 -b 2kpps -t 2.2 -i 0.5 -J >"$tmp/send.json" 2>"$tmp/send.err" ||
    fail "stamp send: $(cat "$tmp/send.err")"
  refl_end
  local n s r ss sr
  n=$(jq -s '[.[] | select(.type == "interval")] | length' "$tmp/send.json")
  s=$(jq -s '[.[] | select(.type == "interval") | .sent] | add' "$tmp/send.json")
  r=$(jq -s '[.[] | select(.type == "interval") | .received] | add' "$tmp/send.json")
  ss=$(tail -n1 "$tmp/send.json" | jq .sent)
  sr=$(tail -n1 "$tmp/send.json" | jq .received)
  ok "$n intervals: sent $s received $r; summary sent $ss received $sr"
  [ "$n" -ge 8 ] && [ "$n" -le 12 ] || fail "$n interval lines for 2 sessions x 2.2 s / 0.5 s"
  [ "$s" = "$ss" ] && [ "$r" = "$sr" ] || fail "the intervals add up to sent $s received $r, the summary says $ss, $sr"
  [ "$(jq -s '[.[] | select(.type == "interval") | .ssid] | unique' -c "$tmp/send.json")" = "[1,2]" ] || fail "SSIDs"
}
run_case intervals

# the engine's devices: whole frames on the veth (packet:), the replies back
# through the kernel to the session's socket; kernel sockets with GSO (udp:)
engine_dev() {
  reflector
  ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 --dev packet:tx0 -b 5kpps -n 2000 -P 2 -J \
    >"$tmp/pkt.json" 2>"$tmp/send.err" || fail "--dev packet:tx0: $(cat "$tmp/send.err")"
  ip netns exec "$A" timeout 60 "$TXS" stamp send 2001:2:0:0::2 --dev udp -b 5kpps -n 2000 --pace poisson --seed 7 -J \
    >"$tmp/udp.json" 2>"$tmp/send.err" || fail "--dev udp --pace poisson: $(cat "$tmp/send.err")"
  refl_end
  ok "packet: $(jq -c '{sent,received,lost_forward,lost_backward,split,local_drops,rtt:.rtt_ns.count,bad_time}' "$tmp/pkt.json")"
  ok "udp, poisson, IPv6: $(jq -c '{sent,received,lost_forward,lost_backward,split,local_drops,rtt:.rtt_ns.count,bad_time}' "$tmp/udp.json")"
  for f in pkt udp; do
    [ "$(jq -r '.sent == 4000 or .sent == 2000' "$tmp/$f.json")" = true ] || fail "$f: sent $(jq -r .sent "$tmp/$f.json")"
    [ "$(jq -r '.lost == 0 and .split == "exact" and .bad_time == 0 and .rtt_ns.count == .sent' "$tmp/$f.json")" = true ] ||
      fail "$f: $(cat "$tmp/$f.json")"
    # one host, one clock: T1 (the engine's stamp as the packet is written)
    # never after T2 (the reflector's kernel receive stamp), T3 never after T4
    [ "$(jq -r '.forward_ns.min >= 0 and .backward_ns.min >= 0' "$tmp/$f.json")" = true ] ||
      fail "$f: a one-way delay below 0 on one clock: forward $(jq -c .forward_ns "$tmp/$f.json"), backward $(jq -c .backward_ns "$tmp/$f.json")"
  done
  [ "$(jq -r .sent "$tmp/pkt.json")" = 4000 ] || fail "packet: -P 2 x 2000 sent $(jq -r .sent "$tmp/pkt.json")"
  [ "$(rf .sessions)" = 3 ] && [ "$(rf .reflected)" = 6000 ] || fail "reflector: $(tail -n1 "$tmp/refl.json")"
}
run_case engine_dev

# 8. speed (issue 31): stamp send at 100kpps for 3 s, its one session's worker
# pinned to CPU 0 (-A 0), against stamp reflect pinned to CPU 1: nothing
# lost either way, and exactly the 300000 packets it schedules. The machine
# may be shared (CI, other builds): both run at nice -10 for their 3 s, so
# that the test measures them rather than their neighbours (each in a
# session of its own whose autogroup is at -10 too, where the kernel groups
# by session: there a nice value counts only within its group, and the
# others' builds, each its own group, took three quarters of the CPUs), and
# a reflector still off its CPU long enough for its 8 MiB buffer to fill
# loses packets there (its socket_drops say so), so one retry is allowed,
# and said.
# "${PRIO[@]}" CMD...: CMD at nice -10, its own autogroup too where there is
# one (a command, not a function: a background job's PID is then CMD's own)
PRIO=(setsid sh -c 'echo -10 >/proc/self/autogroup 2>/dev/null; exec nice -n -10 "$@"' sh)
rate_100k() {
  [ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (sender and reflector each on its own)"
  local try j=$tmp/send.json
  for try in 1 2; do
    "${PRIO[@]}" ip netns exec "$B" taskset -c 1 "$TXS" stamp reflect -J >"$tmp/refl.json" 2>"$tmp/refl.err" &
    refl=$!
    wait_for 10 grep -q listening "$tmp/refl.err" || fail "the reflector does not start: $(cat "$tmp/refl.err")"
    "${PRIO[@]}" ip netns exec "$A" timeout 60 "$TXS" stamp send 198.18.0.2 -A 0 -b 100kpps -t 3 -J >"$j" 2>"$tmp/send.err" ||
      fail "stamp send: $(cat "$tmp/send.err")"
    refl_end
    ok "try $try: $(jq -c '{sent,received,lost_forward,lost_backward,split,local_drops,tail_probes,rtt_p50:.rtt_ns.p50,rtt_p99:.rtt_ns.p99,seconds}' "$j"); reflector socket_drops $(rf .socket_drops)"
    # scheduled: 300000; a tail probe after a lost last packet is sent (and counted) besides
    [ "$(jq -r '.sent - .tail_probes' "$j")" = 300000 ] ||
      fail "sent $(jq -r .sent "$j") with $(jq -r .tail_probes "$j") tail probes, want 300000 scheduled (100kpps x 3 s)"
    [ "$(jq -r '.split == "exact" and .lost_forward == 0 and .lost_backward == 0 and .received == 300000' "$j")" = true ] && break
    [ "$try" = 1 ] || fail "lost at 100kpps twice: $(jq -c '{received,lost_forward,lost_backward,split,local_drops}' "$j"), reflector socket_drops $(rf .socket_drops)"
    ok "RETRY: lost at 100kpps ($(jq -c '{lost_forward,lost_backward}' "$j")), reflector socket_drops $(rf .socket_drops): the machine is loaded (load $(cut -d' ' -f1-3 /proc/loadavg)); once more"
  done
  [ "$(rf .reflected)" = 300000 ] || fail "the reflector reflected $(rf .reflected), want 300000"
}
run_case rate_100k

bad_options() {
  txs_refuses --one-line "unknown TLV 'foo'" stamp send 198.18.0.2 --tlvs cos,foo
  txs_refuses --one-line "reflector's address is missing" stamp send
  txs_refuses --one-line "packets/s" stamp send 198.18.0.2 -b 10Mbit
  txs_refuses --one-line "names 1 CPUs for 2 sessions" stamp send 198.18.0.2 -P 2 -A 0
  txs_refuses --one-line "expected const or poisson" stamp send 198.18.0.2 --pace nope
  txs_refuses --one-line "--pace poisson needs a rate" stamp send 198.18.0.2 --pace poisson -b 0pps -n 5
  txs_refuses --one-line "bad value for --pace-slack" stamp send 198.18.0.2 --pace-slack 200000
  txs_refuses --one-line "bad value for -n/--packets: '0'" stamp send 198.18.0.2 -n 0
  txs_refuses --one-line "-n 10 and -t 1 exclude each other" stamp send 198.18.0.2 -n 10 -t 1
  txs_refuses "parallel" stamp reflect -P 0
  txs_refuses "nope" stamp nope
  local rc=0 out
  out=$("$TXS" stamp send 198.18.0.2 -l 20 2>&1) || rc=$?
  [ $rc = 2 ] && [[ "$out" == *"length 20"* ]] || fail "-l 20: exit $rc: $out"
  rc=0
  out=$("$TXS" stamp reflect --auth-file "$tmp/nonexistent" 2>&1) || rc=$?
  [ $rc = 2 ] && [[ "$out" == *nonexistent* ]] || fail "--auth-file missing: exit $rc: $out"
}
run_case bad_options
