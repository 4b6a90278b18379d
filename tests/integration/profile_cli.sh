#!/usr/bin/env bash
# txscale send --profile[=N] on the dummy device: the JSON summary carries a
# "profile" object (docs/json-schema.md) whose shares add up to 1 and whose
# sample count is the bursts' (one in N, the first included); the text report
# has the profile line; bad N exits 2 with one line naming the value. Needs
# no root; x86-64 only (elsewhere --profile must be refused cleanly).
set -uo pipefail
SRC=${TXS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/common.bash"
need_cmd jq "jq not installed"

expect_err() { txs_refuses --one-line "$1" send "${@:2}" 198.18.0.2; } # NEEDLE ARGS...

case $(uname -m) in
  x86_64) ;;
  *) echo "not x86-64: only the refusal is checked"
     run_case refused expect_err "--profile" --profile -n 1000
     exit ;;
esac

summary() { "$TXS" send -J -i 0 --no-pin "$@" 198.18.0.2 | grep '"type":"summary"'; }

# default N = 64; 100000 packets in bursts of 32 = 3125 bursts -> 49 samples,
# bursts 0, 64, ..., 3072 all full: 1568 packets
default_every_64() {
  local s p text
  s=$(summary --profile -n 100000)
  p=$(jq -c '.profile' <<<"$s")
  [ "$(jq '.sample_every' <<<"$p")" = 64 ] || fail_later "sample_every: $p"
  # a sample dropped as preempted is counted as discarded, and its packets are not sampled
  [ "$(jq '.samples + .discarded' <<<"$p")" = 49 ] || fail_later "samples + discarded (want 49): $p"
  [ "$(jq 'if .discarded == 0 then .packets == 1568 else .packets < 1568 end' <<<"$p")" = true ] ||
    fail_later "packets (want 1568 less discarded bursts): $p"
  [ "$(jq '.ident_in_header' <<<"$p")" = false ] || fail_later "ident_in_header: $p"
  [ "$(jq '.tsc_hz > 0' <<<"$p")" = true ] || fail_later "tsc_hz: $p"
  [ "$(jq -r '.stages | keys_unsorted | join(",")' <<<"$p")" = "ident,linksel,header,device,other" ] ||
    fail_later "stages: $p"
  # shares are printed with 6 significant digits: their sum is 1 within that rounding
  [ "$(jq '[.stages[].share] | add | . > 0.9999 and . < 1.0001' <<<"$p")" = true ] ||
    fail_later "shares do not add up to 1: $p"
  [ "$(jq '[.stages[] | .cycles_per_pkt >= 0 and .ns_per_pkt >= 0] | all' <<<"$p")" = true ] ||
    fail_later "negative per-packet figures: $p"
  [ "$(jq '.packets' <<<"$s")" = 100000 ] || fail_later "packets sent: $s"
}
run_case default_every_64

# --profile=N, two threads, per-thread bursts: 2 x 3000 packets = 2 x 94 bursts -> 2 x 24 samples
every_4_two_threads() {
  local s p text
  s=$(summary --profile=4 -n 6000 -P 2 --ident cas-loop)
  [ "$(jq '.profile.samples + .profile.discarded' <<<"$s")" = 48 ] || fail_later "--profile=4 -P 2 samples (want 48): $s"
  [ "$(jq '.profile.sample_every' <<<"$s")" = 4 ] || fail_later "--profile=4 sample_every: $s"
}
run_case every_4_two_threads

# sendmsg path: ident inside header, no ident/linksel stages
sendmsg_path() {
  local s p text
  s=$(summary --profile=2 -n 2000 --unconnected)
  [ "$(jq '.profile.ident_in_header' <<<"$s")" = true ] || fail_later "--unconnected ident_in_header: $s"
  [ "$(jq -r '.profile.stages | keys_unsorted | join(",")' <<<"$s")" = "header,device,other" ] ||
    fail_later "--unconnected stages: $s"
}
run_case sendmsg_path

# without --profile: no profile object
no_profile() {
  local s p text
  s=$(summary -n 1000)
  [ "$(jq 'has("profile")' <<<"$s")" = false ] || fail_later "profile object without --profile: $s"
}
run_case no_profile

# --summary-file gets it too; the text report prints one profile line
summary_file_and_text() {
  local s p text
  txs_tmp
  text=$("$TXS" send -i 0 --no-pin --profile=8 -n 10000 --summary-file "$tmp/s.json" 198.18.0.2)
  [ "$(jq '.profile.sample_every' "$tmp/s.json")" = 8 ] || fail_later "--summary-file lacks profile: $(cat "$tmp/s.json")"
  grep -qE '^profile \(1 burst in 8, [0-9]+ packets sampled.*\): ident [0-9.]+% .* other [0-9.]+%' <<<"$text" ||
    fail_later "text profile line: $text"
}
run_case summary_file_and_text

run_case err_profile_0_n_1000 expect_err "'0'" --profile=0 -n 1000
run_case err_profile_0_n_1000_2 expect_err "--profile" --profile=0 -n 1000
run_case err_profile_x_n_1000 expect_err "'x'" --profile=x -n 1000
run_case err_profile_2000000_n_1000 expect_err "'2000000'" --profile=2000000 -n 1000

