#!/usr/bin/env bash
# Link failover on real veth links ("Link failure aborts the run"):
# `send --dev DEV:tx0+tx1 --bond MODE -b 50k` while a link goes down mid-run
# and (some trials) comes back. Each trial checks:
#   - send exits 0 and says which link went down;
#   - timing, at most FAILOVER_MAX_MS (default 10 ms): active-backup, on the
#     wire (captured at both peers, 1 frame in 8 by a BPF filter on the
#     sequence number so that dumpcap keeps up on a loaded box): from the last
#     frame on the dead link to the first on the backup; every mode, from the
#     counters: frames lost in the dead link's ring / that link's rate (the
#     time the sender kept feeding a dead link);
#   - active-backup: the first outage txscale recv reports (a udp socket on
#     198.18.0.2 in the peer, reached over either link; --outage-min 100us:
#     5 datagrams' time at 50k pps) is the switch time where datagrams were
#     lost (recv sees every one; the capture samples): a complete capture
#     agrees with it within 1 ms, one that dumpcap dropped frames from is no
#     shorter; a loss in a silence shorter than --outage-min (a frame the
#     dead link refused, the next one on the backup at once) is no outage,
#     recv's silence is then < 0.1 ms; a switch that lost nothing is a
#     delay, no outage, timed by the capture;
#   - traffic where the mode puts it before, during and after the failure;
#   - counts: the peers' RX counters (veth rx_packets, IPv6 off on the sender
#     side so that nothing else crosses) equal the links' "packets", and
#     RX + drops reported (links' errors, the engine's drops) = datagrams (-n);
#     packet: active-backup with tx0 set down: the frames tx0's ring held
#     when the kernel refused them go out on the backup (no errors);
# A timing check may take up to 3 tries on a loaded box; every measured value
# is printed. FAILOVER_DEVS="packet xdp" chooses the devices (default both,
# xdp: skipped without libxdp).
# Each trial, the delay checks and the no-link-left check is a case of its own.
set -euo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
ring_setup fo 2
MAX_MS=${FAILOVER_MAX_MS:-10}
N=150000
RATE=50kpps
PORT=5201

# nothing but our frames crosses: no IPv6 from the sender, and no ARP replies
# to the peer (its ICMP errors need them once a flap has flushed its neighbours)
for i in 0 1; do
  ip netns exec "$A" sysctl -qw "net.ipv6.conf.tx$i.disable_ipv6=1" >/dev/null
  ip -n "$A" link set "tx$i" arp off
done

# neighbour entries for 198.18.0.2 on both links (a link set down loses them)
neighs() {
  ip -n "$A" neigh replace 198.18.0.2 lladdr "$MAC_RX0" dev tx0 nud permanent 2>/dev/null || true
  ip -n "$A" neigh replace 198.18.0.2 lladdr "$MAC_RX1" dev tx1 nud permanent 2>/dev/null || true
}

links_up() {
  ip -n "$A" link set tx0 up
  ip -n "$A" link set tx1 up
  ip -n "$B" link set rx0 up
  ip -n "$B" link set rx1 up
  sleep 0.2
  neighs
}

now() { date +%s.%N; }
# on_the_wire A0 A1: wait (at most 5 s) until the sender is on the wire, 1000
# frames past the peers' counts A0 + A1 (it may start late on a loaded box)
on_the_wire() {
  for _ in $(seq 100); do
    [ $(($(rxp rx0) + $(rxp rx1) - $1 - $2)) -ge 1000 ] && return 0
    sleep 0.05
  done
}
rxp() { ip netns exec "$B" cat "/sys/class/net/$1/statistics/rx_packets"; }

# trial DEV MODE HOW: one run; HOW = txdown (tx0 set down in the sender),
# peerdown (rx0 set down: tx0 loses carrier), peerflap (rx0 down, then up).
# Returns 0 when every check passed; 1 for a count/behaviour failure; 2 when
# only the timing bound was missed (retried by the caller).
trial() {
  local dev=$1 mode=$2 how=$3 tag="$1 $2 $3"
  links_up
  local cap=$WORK/fo.pcapng
  rm -f "$cap"
  ip netns exec "$B" timeout 30 dumpcap -q -B 64 -s 96 -f "udp dst port $PORT and udp[15] & 0x0e = 0" -i rx0 -i rx1 -w "$cap" \
    >"$WORK/dumpcap.log" 2>&1 &
  local cpid=$!
  capturing "$WORK/dumpcap.log" || true
  local a0 a1 rpid=
  rm -f "$WORK/sum.json" "$WORK/recv.json" "$WORK/recv.ready"
  if [ "$mode" = active-backup ]; then
    # a udp socket: rx0 may go down under it (198.18.0.2 stays local, and
    # arrives over rx1 as well); it ends 1 s after its last datagram (a
    # switch's silence is milliseconds, its bound 10 ms)
    ip netns exec "$B" "$TXS" recv --dev udp -B 198.18.0.2 -p $PORT -i 0 -J --idle 1 -t 60 --outage-min 100us \
      --sender-summary "$WORK/sum.json" --ready-fd 3 >"$WORK/recv.json" 2>"$WORK/recv.err" 3>"$WORK/recv.ready" &
    rpid=$!
    wait_ready "$WORK/recv.ready" $rpid
  fi
  a0=$(rxp rx0) a1=$(rxp rx1)
  ip netns exec "$A" "$TXS" send -i 0 --summary-file "$WORK/sum.json" --dev "$dev:tx0+tx1" --bond "$mode" \
    -b $RATE -n $N -p $PORT 198.18.0.2 >"$WORK/send.log" 2>&1 &
  local spid=$!
  # the sender is on the wire (it may start late on a loaded box), then a while more
  on_the_wire "$a0" "$a1"
  sleep 0.4
  local t_down t_up=0
  t_down=$(now)
  case $how in
    txdown) ip -n "$A" link set tx0 down ;;
    peerdown | peerflap) ip -n "$B" link set rx0 down ;;
  esac
  if [ "$how" = peerflap ]; then
    sleep 0.6
    t_up=$(now)
    ip -n "$B" link set rx0 up
  fi
  local rc=0
  wait "$spid" || rc=$?
  local rrc=0
  [ -z "$rpid" ] || wait "$rpid" || rrc=$?
  sleep 0.5
  kill -TERM "$cpid" 2>/dev/null || true
  wait "$cpid" 2>/dev/null || true
  local d0 d1
  d0=$(($(rxp rx0) - a0)) d1=$(($(rxp rx1) - a1))
  if [ "$rc" != 0 ]; then
    fail_later "$tag: send exited $rc: $(tail -3 "$WORK/send.log")"
    return 1
  fi
  grep -q "link 0 (tx0) down" "$WORK/send.log" || { fail_later "$tag: send did not report tx0 down: $(cat "$WORK/send.log" | head -5)"; return 1; }
  # one count per fact (docs/devices.md): the summary's packets, drops and
  # errors are the sums of the link rows, and every datagram is one of them
  local pk dr er lp le ld
  pk=$(json_field "$WORK/sum.json" packets)
  dr=$(json_field "$WORK/sum.json" drops)
  er=$(json_field "$WORK/sum.json" errors)
  read -r lp le ld < <(grep -o '"link":[0-9]*,"packets":[0-9]*,"bytes":[0-9]*,"drops":[0-9]*,"errors":[0-9]*' "$WORK/sum.json" |
    awk -F'[:,]' '{ p += $4; d += $8; e += $10 } END { print p + 0, e + 0, d + 0 }')
  local bad=0
  [ $((pk + dr + er)) = $N ] || { fail_later "$tag: datagrams reported $pk + $dr drops + $er errors != $N"; bad=1; }
  [ $((d0 + d1)) = "$lp" ] || { fail_later "$tag: peers' RX $d0 + $d1 != $lp packets on the links"; bad=1; }
  if [ "$lp" != "$pk" ] || [ "$ld" != "$dr" ] || [ "$le" != "$er" ]; then
    fail_later "$tag: links' packets $lp, drops $ld, errors $le != summary's $pk, $dr, $er"; bad=1
  fi
  if [ $((d0 + d1 + le + ld)) != $N ]; then
    fail_later "$tag: RX $((d0 + d1)) + drops $((le + ld)) != $N datagrams"; bad=1
  fi
  # packet: active-backup with tx0 set down in the sender: the kernel refuses what tx0's ring
  # still held (ENETDOWN), and those frames go out on the backup as the later ones do: no
  # errors (xdp: copy mode's umem frames are counted as the failover's drops, docs/linksel.md)
  if [ "$dev" = packet ] && [ "$mode" = active-backup ] && [ "$how" = txdown ] && [ "$le" != 0 ]; then
    fail_later "$tag: $le frames of the dead link's ring not sent on the backup"; bad=1
  fi
  # the wire: interface (0 = rx0, 1 = rx1) and time of every frame
  tshark -r "$cap" -T fields -e frame.interface_id -e frame.time_epoch 2>/dev/null | sort -k2,2n >"$WORK/fo.txt"
  local res
  res=$(awk -v td="$t_down" -v tu="$t_up" -v mode="$mode" '
    { i = $1; t = $2 + 0; n++
      if (n > 1 && t - prev > gap) { gap = t - prev; gat = prev }
      prev = t
      if (t < td) { before[i]++ } else if (tu == 0 || t < tu) { during[i]++ } else { after[i]++ }
      if (i == 0 && (tu == 0 || t < tu)) last0 = t
      if (i == 1 && t >= td && !first1) first1 = t
      if (i == 0 && tu > 0 && t >= tu && !back0) back0 = t
    }
    END {
      ab = (mode == "active-backup") ? (first1 - last0) * 1000 : -1
      bk = (back0 > 0) ? (back0 - tu) * 1000 : -1
      printf "%d %.3f %.3f %d %d %d %d %d %d %.3f %.3f %.0f\n", n, gap * 1000, ab, before[0], before[1], during[0], during[1],
        after[0], after[1], bk, (gat - td) * 1000, (tu > 0 ? (prev - tu) * 1000 : 0)
    }' "$WORK/fo.txt")
  local n gap ab b0 b1 u0 u1 f0 f1 back gat left
  read -r n gap ab b0 b1 u0 u1 f0 f1 back gat left <<<"$res"
  local cdrop
  cdrop=$(grep -o 'dumpcap:[0-9]*' "$WORK/dumpcap.log" | awk -F: '{ s += $2 } END { print s + 0 }')
  # detection time from the counters: frames the dead link's ring held when the
  # queue gave it up, at that link's rate (all of it for active-backup, half for rr)
  local per=50000
  [ "$mode" = balance-rr ] && per=25000
  local react
  react=$(awk -v e="$((le + ld))" -v r=$per 'BEGIN { printf "%.3f", e * 1000 / r }')
  echo "   $tag: captured $n sampled frames (dumpcap dropped $cdrop), RX counters rx0 $d0 rx1 $d1, links' errors $le, drops $ld," \
    "engine drops $dr; dead-link frames = ${react} ms at the link's rate; active-backup switch on the wire ${ab} ms;" \
    "longest silence (sampled, incl. capture drops and stalls) ${gap} ms from ${gat} ms after the change; sampled frames rx0/rx1 before $b0/$b1," \
    "during $u0/$u1, after $f0/$f1; back on rx0 ${back} ms after up; changed at $t_down${t_up:+/$t_up}:" \
    "$(grep -o 'link [0-9] .*' "$WORK/send.log" | tr '\n' ' ')"
  # the capture samples 1 frame in 8 (sequence mod 16 in {0, 1}); dumpcap may drop some on a loaded box
  # (a capture that lost more than 20% is noted; see the timing check below)
  local short=0
  [ "${n:-0}" -ge $((lp / 8 * 8 / 10)) ] || short=1
  if [ "$mode" = active-backup ]; then
    [ "$b1" = 0 ] || { fail_later "$tag: $b1 frames on the backup before the failure"; bad=1; }
    [ "$b0" -gt 0 ] && [ "$u1" -gt 0 ] || { fail_later "$tag: traffic not moved from rx0 to rx1"; bad=1; }
    if [ "$how" = peerflap ] && [ "$f0" = 0 ] && [ $bad = 0 ] && [ "$left" -lt 300 ]; then
      # the carrier came back (rx0 up, a loaded box's late command) when the
      # sender had less than 300 ms to run: the return is not observable
      echo "   $tag: the sender's last frame came $left ms after rx0 went up: the return to the primary is not observable"
      return 2
    fi
    [ "$how" != peerflap ] || [ "$f0" -gt 0 ] || { fail_later "$tag: traffic did not return to the primary ($left ms of sending after rx0 went up)"; bad=1; }
  else
    [ "$b0" -gt 0 ] && [ "$b1" -gt 0 ] || { fail_later "$tag: balance-rr did not use both links before ($b0/$b1)"; bad=1; }
    [ "$u1" -gt 0 ] || { fail_later "$tag: no traffic on the live link during the failure"; bad=1; }
    if [ "$how" = peerflap ]; then
      [ "$f0" -gt 0 ] && [ "$f1" -gt 0 ] || { fail_later "$tag: traffic did not come back to both links ($f0/$f1)"; bad=1; }
    fi
  fi
  [ $bad = 0 ] || return 1
  # recv's outage against the capture's switch. recv sees every datagram
  # (sequence numbers, the kernel's receive stamps): where it lost some, its
  # first outage is the switch, exact. The capture samples 1 frame in 8 and
  # dumpcap drops runs of frames on a loaded box, which can only lengthen its
  # figure (the last frame seen on the dead link is no later, the first seen
  # on the backup no earlier, than the real ones): a complete capture must
  # agree with recv within 1 ms, a lossy one must not be shorter than recv's
  # by more than that (CI saw 12.8 to 27.5 ms captured against recv's 0.2 to
  # 2.4 ms with 20% of the samples dropped).
  local rout=-1 rmiss=0 rholes=0 judged=$ab what="the capture's switch"
  if [ -n "$rpid" ]; then
    [ "$rrc" = 0 ] && tail -n1 "$WORK/recv.json" | jq -e '.type == "summary"' >/dev/null ||
      { fail_later "$tag: recv exited $rrc: $(tail -3 "$WORK/recv.err")"; return 1; }
    # the switch is the run's first outage (a flap's return may make another)
    read -r rout rmiss rholes < <(tail -n1 "$WORK/recv.json" |
      jq -r '[((.outage.events[0].duration_ns // 0) / 1e6), .outage.missing, ([.flows[] | .span - .unique] | add // 0)] | @tsv')
    echo "   $tag: recv: $(tail -n1 "$WORK/recv.json" | jq -r '.outage | "\(.count) outage(s), longest \(.longest_ns) ns, \(.longest_missing) missing inside it"'); first $rout ms; capture's switch $ab ms"
    local rcount
    rcount=$(tail -n1 "$WORK/recv.json" | jq -r .outage.count)
    if [ "$rholes" != 0 ] && [ "$rcount" = 0 ]; then
      # lost, but in a silence shorter than --outage-min (100 us), which is
      # no outage by definition (a frame the dead link refused, the next one
      # sent on the backup at once): recv's silence is below 0.1 ms
      echo "   $tag: recv: $rholes sequences missing in a silence under --outage-min (no outage)"
      rout=0.1
    elif [ "$rmiss" != "$rholes" ]; then
      echo "   $tag: recv: $rholes sequences missing, $rmiss of them in outages"
    fi
    if [ "$rholes" = 0 ]; then
      # nothing lost: the switch only delayed datagrams, which is no outage;
      # the timing is the capture's
      [ "$rcount" = 0 ] || { fail_later "$tag: recv reports an outage with nothing missing"; return 1; }
    else
      judged=$rout what="recv's outage"
      local apart
      if [ "$cdrop" = 0 ] && [ $short = 0 ]; then
        apart=$(awk -v r="$rout" -v a="$ab" 'BEGIN { d = r - a; if (d < 0) d = -d; print (d > 1) ? 1 : 0 }')
      else
        apart=$(awk -v r="$rout" -v a="$ab" 'BEGIN { print (a < r - 1) ? 1 : 0 }')
      fi
      if [ "$apart" = 1 ]; then
        echo "   $tag: recv's outage $rout ms and the capture's switch $ab ms disagree (capture dropped $cdrop)"
        return 2
      fi
    fi
  fi
  # Over the bound with a short capture (and no figure from recv): not
  # measurable, try again
  local slow
  slow=$(awk -v r="$react" -v a="$judged" -v m="$MAX_MS" 'BEGIN { print (r > m || a > m) ? 1 : 0 }')
  if [ "$slow" = 1 ] && [ $short = 1 ] && [ "$what" != "recv's outage" ]; then
    echo "   $tag: capture holds ${n:-0} of ~$((lp / 8)) sampled frames: timing not measurable: $(tail -1 "$WORK/dumpcap.log")"
    return 2
  fi
  if [ "$slow" = 1 ]; then
    echo "   $tag: over ${MAX_MS} ms (dead-link frames $react ms, $what $judged ms)"
    return 2
  fi
  ok "$tag: exit 0, RX $((d0 + d1)) + drops $((le + ld)) = $N datagrams; switch ${judged} ms ($what; the capture's ${ab} ms, dumpcap dropped $cdrop), dead-link frames ${react} ms"
  return 0
}

timed_trial() {
  local r
  for try in 1 2 3; do
    r=0
    trial "$@" || r=$?
    [ $r = 2 ] || return 0
    echo "   try $try: timing bound missed or not measurable, again: $(grep 'link 0' "$WORK/send.log" | tr '\n' ' ')"
  done
  fail "$*: switch over ${MAX_MS} ms, or not measurable, in 3 tries"
}

no_xdp() { skip "xdp: not in this build"; }

neighs
settle
for dev in ${FAILOVER_DEVS:-packet xdp}; do
  for t in ${FAILOVER_TRIALS:-active-backup/txdown active-backup/peerflap balance-rr/peerflap}; do
    if [ "$dev" = xdp ] && ! "$TXS" send --help 2>&1 | grep 'xdp:IF' >/dev/null; then
      run_case "${dev}_${t%/*}_${t#*/}" no_xdp
    else
      run_case "${dev}_${t%/*}_${t#*/}" timed_trial "$dev" "${t%/*}" "${t#*/}"
    fi
  done
done

# updelay / downdelay: a 100 ms carrier flap inside --downdelay 400 switches
# nothing and loses nothing (the frames wait in the ring); with --updelay 300
# the link is taken back 300 ms after its carrier returns, not before.
delays() {
  links_up
  local a0 a1 rc=0
  a0=$(rxp rx0) a1=$(rxp rx1)
  ip netns exec "$A" "$TXS" send -i 0 --summary-file "$WORK/sum.json" --dev packet:tx0+tx1 --bond active-backup \
    "$@" -b $RATE -n 100000 -p $PORT 198.18.0.2 >"$WORK/send.log" 2>&1 &
  local spid=$!
  on_the_wire "$a0" "$a1"
  sleep 0.3
  T_DOWN=$(now)
  ip -n "$B" link set rx0 down
  sleep "$FLAP"
  T_UP=$(now)
  ip -n "$B" link set rx0 up
  T_UP_DONE=$(now)
  wait $spid || rc=$?
  T_END=$(now)
  D0=$(($(rxp rx0) - a0)) D1=$(($(rxp rx1) - a1))
  [ $rc = 0 ] || fail_later "delays $*: send exited $rc: $(tail -2 "$WORK/send.log")"
}
ms_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b - a) * 1000 }'; }

# The flap is what the commands around it made it: at most T_UP_DONE -
# T_DOWN. On a loaded box `sleep 0.1` and two `ip` runs can take longer
# than --downdelay; a switch then is right, and the try says so and is
# made again (a switch after a flap that was surely shorter fails).
downdelay() {
  local flap
  for try in 1 2 3; do
    FLAP=0.1 delays --downdelay 400
    flap=$(ms_between "$T_DOWN" "$T_UP_DONE")
    if grep -q "link 0 (tx0) down" "$WORK/send.log"; then
      [ "$flap" -ge 400 ] || fail "--downdelay 400: a flap of at most $flap ms switched: $(grep 'link 0' "$WORK/send.log" | tr '\n' ' ')"
      echo "    try $try: the flap took up to $flap ms here (load), not 100: again"
      continue
    fi
    [ "$D1" = 0 ] && [ $((D0 + D1)) = 100000 ] || fail "--downdelay 400: rx0 $D0 rx1 $D1 of 100000"
    ok "--downdelay 400: a carrier flap of at most $flap ms switches nothing, all 100000 on rx0"
    return 0
  done
  fail "--downdelay 400: the flap took 400 ms or more in 3 tries (load): not measurable"
}
run_case downdelay

# The link comes back no sooner than 300 ms after its carrier (never early),
# and does come back while the sender runs; a sender that ended before the
# carrier's return plus 300 ms (a late flap on a loaded box) shows neither:
# the try says so and is made again.
updelay() {
  local upat late left
  for try in 1 2 3; do
    FLAP=0.3 delays --updelay 300
    upat=$(grep -o 'link 0 (tx0) up .* at [0-9.]*' "$WORK/send.log" | awk '{ print $NF }' | tail -1)
    left=$(ms_between "$T_UP_DONE" "$T_END")
    if [ -z "$upat" ] && [ "$left" -lt 600 ]; then
      echo "    try $try: the sender ended $left ms after the carrier came back (load): again"
      continue
    fi
    late=$(awk -v u="${upat:-0}" -v t="$T_UP" 'BEGIN { printf "%.0f", (u - t) * 1000 }')
    if [ -n "$upat" ] && [ "$late" -ge 300 ] && [ "$late" -lt 1500 ] && [ $((D0 + D1 + $(grep -o '"errors":[0-9]*' "$WORK/sum.json" | awk -F: '{ s += $2 } END { print s + 0 }'))) -ge 100000 ]; then
      ok "--updelay 300: link 0 taken back ${late} ms after its carrier returned"
    else
      fail "--updelay 300: link 0 back ${late} ms after the carrier (want 300..1500): $(grep 'link 0' "$WORK/send.log" | tr '\n' ' ')"
    fi
    return 0
  done
  fail "--updelay 300: the sender ended before the link could come back in 3 tries (load): not measurable"
}
run_case updelay

# no link left: one line naming the links, exit 1
no_link_left() {
  local spid rc=0 a0 a1
  links_up
  a0=$(rxp rx0) a1=$(rxp rx1)
  ip netns exec "$A" "$TXS" send -i 0 --dev packet:tx0+tx1 --bond active-backup -b $RATE -n $N 198.18.0.2 \
    >"$WORK/none.log" 2>&1 &
  spid=$!
  # the sender is on the wire (it may start late on a loaded box), then a while more
  on_the_wire "$a0" "$a1"
  sleep 0.3
  ip -n "$B" link set rx0 down
  ip -n "$B" link set rx1 down
  wait $spid || rc=$?
  if [ $rc = 1 ] && grep -q "no link left: tx0, tx1 are all down" "$WORK/none.log"; then
    ok "no link left: exit 1, $(grep 'no link left' "$WORK/none.log")"
  else
    fail "no link left: exit $rc: $(tail -3 "$WORK/none.log")"
  fi
}
run_case no_link_left
links_up
