#!/usr/bin/env bash
# ndr --remote vs local namespace mode on the same veth, interleaved
set -u
cd /work/main
TXS=build/txscale
LAB=ncmp; A=$LAB-a; B=$LAB-b
scripts/netns-lab up --name $LAB >/dev/null
ip netns exec $B $TXS server -B 198.18.0.2 > /tmp/ncmp-srv.log 2>&1 &
srv=$!
sleep 1
OPTS=(--trial 2 --precision 5 --max-trials 12 --lo 5k --hi 600k --recv-args "--rcvbuf 262144" -J)
for i in 1 2 3; do
  ip netns exec $A $TXS ndr --remote 198.18.0.2 "${OPTS[@]}" > /tmp/ncmp-r$i.json 2>/tmp/ncmp-r$i.err
  echo "remote $i: $(tail -n1 /tmp/ncmp-r$i.json | jq -c '{rate_pps, outcome, confirmed, limited_by, trials}')"
  $TXS ndr --send-netns $A --recv-netns $B "${OPTS[@]}" 198.18.0.2 > /tmp/ncmp-l$i.json 2>/tmp/ncmp-l$i.err
  echo "local  $i: $(tail -n1 /tmp/ncmp-l$i.json | jq -c '{rate_pps, outcome, confirmed, limited_by, trials}')"
done
kill $srv; wait $srv 2>/dev/null
scripts/netns-lab down --name $LAB
