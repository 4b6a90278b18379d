#!/usr/bin/env bash
# txscale send --profile[=N] on the dummy device: the JSON summary carries a
# "profile" object (docs/json-schema.md) whose shares add up to 1 and whose
# sample count is the bursts' (one in N, the first included); the text report
# has the profile line; bad N exits 2 with one line naming the value. Needs
# no root; x86-64 only (elsewhere --profile must be refused cleanly).
set -uo pipefail
TXS=${TXS_BIN:-build/txscale}
fail=0 pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }

expect_err() { # expect_err needle ARGS...
  local needle=$1; shift
  local err rc
  err=$("$TXS" send "$@" 198.18.0.2 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] || { bad "send $* -> exit $rc (want 2): $err"; return; }
  grep -qF -- "$needle" <<<"$err" || { bad "send $*: message lacks '$needle': $err"; return; }
  [ "$(wc -l <<<"$err")" -eq 1 ] || { bad "send $*: more than one line: $err"; return; }
  ok
}

case $(uname -m) in
  x86_64) ;;
  *) expect_err "--profile" --profile -n 1000
     echo "profile_cli: $pass passed, $fail failed (not x86-64: only the refusal is checked)"
     [ $fail -eq 0 ]; exit ;;
esac

summary() { "$TXS" send -J -i 0 --no-pin "$@" 198.18.0.2 | grep '"type":"summary"'; }

# default N = 64; 100000 packets in bursts of 32 = 3125 bursts -> 49 samples,
# bursts 0, 64, ..., 3072 all full: 1568 packets
s=$(summary --profile -n 100000)
p=$(jq -c '.profile' <<<"$s")
[ "$(jq '.sample_every' <<<"$p")" = 64 ] && ok || bad "sample_every: $p"
# a sample dropped as preempted is counted as discarded, and its packets are not sampled
[ "$(jq '.samples + .discarded' <<<"$p")" = 49 ] && ok || bad "samples + discarded (want 49): $p"
[ "$(jq 'if .discarded == 0 then .packets == 1568 else .packets < 1568 end' <<<"$p")" = true ] && ok ||
  bad "packets (want 1568 less discarded bursts): $p"
[ "$(jq '.ident_in_header' <<<"$p")" = false ] && ok || bad "ident_in_header: $p"
[ "$(jq '.tsc_hz > 0' <<<"$p")" = true ] && ok || bad "tsc_hz: $p"
[ "$(jq -r '.stages | keys_unsorted | join(",")' <<<"$p")" = "ident,linksel,header,device,other" ] && ok ||
  bad "stages: $p"
# shares are printed with 6 significant digits: their sum is 1 within that rounding
[ "$(jq '[.stages[].share] | add | . > 0.9999 and . < 1.0001' <<<"$p")" = true ] && ok ||
  bad "shares do not add up to 1: $p"
[ "$(jq '[.stages[] | .cycles_per_pkt >= 0 and .ns_per_pkt >= 0] | all' <<<"$p")" = true ] && ok ||
  bad "negative per-packet figures: $p"
[ "$(jq '.packets' <<<"$s")" = 100000 ] && ok || bad "packets sent: $s"

# --profile=N, two threads, per-thread bursts: 2 x 3000 packets = 2 x 94 bursts -> 2 x 24 samples
s=$(summary --profile=4 -n 6000 -P 2 --ident cas-loop)
[ "$(jq '.profile.samples + .profile.discarded' <<<"$s")" = 48 ] && ok || bad "--profile=4 -P 2 samples (want 48): $s"
[ "$(jq '.profile.sample_every' <<<"$s")" = 4 ] && ok || bad "--profile=4 sample_every: $s"

# sendmsg path: ident inside header, no ident/linksel stages
s=$(summary --profile=2 -n 2000 --unconnected)
[ "$(jq '.profile.ident_in_header' <<<"$s")" = true ] && ok || bad "--unconnected ident_in_header: $s"
[ "$(jq -r '.profile.stages | keys_unsorted | join(",")' <<<"$s")" = "header,device,other" ] && ok ||
  bad "--unconnected stages: $s"

# without --profile: no profile object
s=$(summary -n 1000)
[ "$(jq 'has("profile")' <<<"$s")" = false ] && ok || bad "profile object without --profile: $s"

# --summary-file gets it too; the text report prints one profile line
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
text=$("$TXS" send -i 0 --no-pin --profile=8 -n 10000 --summary-file "$tmp" 198.18.0.2)
[ "$(jq '.profile.sample_every' "$tmp")" = 8 ] && ok || bad "--summary-file lacks profile: $(cat "$tmp")"
grep -qE '^profile \(1 burst in 8, [0-9]+ packets sampled.*\): ident [0-9.]+% .* other [0-9.]+%' <<<"$text" && ok ||
  bad "text profile line: $text"

expect_err "'0'" --profile=0 -n 1000
expect_err "--profile" --profile=0 -n 1000
expect_err "'x'" --profile=x -n 1000
expect_err "'2000000'" --profile=2000000 -n 1000

echo "profile_cli: $pass passed, $fail failed"
[ $fail -eq 0 ]
