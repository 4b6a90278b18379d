#!/usr/bin/env bash
# libtxscale exports exactly what lib/txscale.map lists, name by name
# (docs/abi.md):
#  - the map has stable nodes TXSCALE_<MAJOR>.<MINOR> (none newer than
#    include/txscale/version.h) and one unstable node, the last one, named
#    TXSCALE_UNSTABLE_<MAJOR>.<MINOR>.<PATCH> of version.h (renamed at every
#    version bump), explicit names only (no wildcard but the one `local: *`),
#    each name in one node;
#  - every dynamic symbol the library defines is listed, under the node that
#    lists it, and every listed name is defined (GNU ld drops a listed name
#    it does not find without a word);
#  - every export is a function: no data objects (a program copies an
#    exported object at its size, which then could never change);
#  - every function a public header declares with TXS_API is exported.
#   exports.sh LIBTXSCALE_SO SRCDIR
set -euo pipefail
export LC_ALL=C
so=$1 src=$2
map=$src/lib/txscale.map
for c in nm perl; do
  command -v $c >/dev/null || { echo "SKIP: needs $c" >&2; exit 77; }
done
[ -f "$so" ] || { echo "FAIL: no library at $so" >&2; exit 1; }
bad=0
fail() { echo "FAIL: $*" >&2; bad=1; }

ver=$(awk '/^#define TXS_VERSION_(MAJOR|MINOR|PATCH) / { v = v (v == "" ? "" : ".") $3 } END { print v }' \
  "$src/include/txscale/version.h")
major=${ver%%.*} minor=${ver#*.}; minor=${minor%%.*}
unstable_node=TXSCALE_UNSTABLE_$ver

# The map as "NODE NAME" lines (comments dropped), and its node names in order.
listed=$(perl -0777 -ne '
  s{/\*.*?\*/}{}gs; s{#[^\n]*}{}g;
  while (/([A-Za-z0-9_.]+)\s*\{(.*?)\}\s*([A-Za-z0-9_.]*)\s*;/gs) {
    my ($node, $body) = ($1, $2);
    print "NODE $node\n";
    my $scope = "global";
    for my $tok (split /;/, $body) {
      $tok =~ s/^\s+|\s+$//g;
      next if $tok eq "";
      if ($tok =~ /^(global|local)\s*:\s*(.*)$/s) { $scope = $1; $tok = $2; next if $tok eq ""; }
      print "$scope $node $tok\n";
    }
  }' "$map")
nodes=$(awk '$1 == "NODE" { print $2 }' <<<"$listed")
[ -n "$nodes" ] || { echo "FAIL: no version node in $map" >&2; exit 1; }
last=$(tail -n 1 <<<"$nodes")
[ "$last" = "$unstable_node" ] ||
  fail "the last node of lib/txscale.map is '$last', not $unstable_node (version.h says $ver: rename the unstable node at every version bump)"
while read -r node; do
  case "$node" in
    "$unstable_node") ;;
    TXSCALE_UNSTABLE_*) fail "a second unstable node '$node' (only $unstable_node)" ;;
    TXSCALE_[0-9]*.[0-9]*)
      nv=${node#TXSCALE_} nM=${nv%%.*} nm_=${nv#*.}
      [[ "$nM" =~ ^[0-9]+$ && "$nm_" =~ ^[0-9]+$ ]] || { fail "stable node '$node' is not TXSCALE_<MAJOR>.<MINOR>"; continue; }
      [ "$nM" -eq "$major" ] || fail "stable node '$node' is not of major $major (a new SONAME starts its nodes again)"
      [ "$nm_" -le "$minor" ] || fail "stable node '$node' is newer than version.h's $ver"
      ;;
    *) fail "node '$node' is neither TXSCALE_<MAJOR>.<MINOR> nor $unstable_node" ;;
  esac
done <<<"$nodes"
# debian's symbols file names the same unstable node (it changes with it)
for sf in "$src"/debian/libtxscale*.symbols; do
  [ -f "$sf" ] || continue
  grep -q "(symver)$unstable_node " "$sf" ||
    fail "${sf#$src/} does not name the unstable node $unstable_node ((symver)$unstable_node $ver)"
done
locals=$(awk '$1 == "local" { print $3 }' <<<"$listed")
[ "$locals" = "*" ] || fail "lib/txscale.map's local list is '$(echo $locals)', not the one '*'"
globals=$(awk '$1 == "global" { print $3, $2 }' <<<"$listed" | sort)
wild=$(awk '$1 ~ /[*?\[]/ { print $1 }' <<<"$globals")
[ -z "$wild" ] || fail "wildcards in lib/txscale.map's global lists (every name is listed):" $wild
dup=$(awk '{ print $1 }' <<<"$globals" | uniq -d)
[ -z "$dup" ] || fail "listed in more than one node:" $dup

# What the library exports: "NAME NODE TYPE".
exported=$(nm -D --defined-only --with-symbol-versions "$so" | awk '$2 != "A" {
  n = $3; v = n; sub(/@.*/, "", n); sub(/^[^@]*@@?/, "", v); print n, v, $2 }' | sort)
n=$(grep -c . <<<"$exported" || true)
[ "$n" -ge 100 ] || { echo "FAIL: only $n symbols exported from $so" >&2; exit 1; }
while read -r name node type; do
  case "$type" in
    T | t | i) ;;
    *) fail "'$name' is exported as a data object (nm type $type): export a function that returns it" ;;
  esac
done <<<"$exported"
# exported but not listed (or under another node), and listed but not exported
diff_out=$(join -a1 -a2 -e '-' -o 0,1.2,2.2 <(awk '{ print $1, $2 }' <<<"$exported") <(printf '%s\n' "$globals") |
  awk '$2 != $3')
while read -r name got want; do
  [ -n "$name" ] || continue
  if [ "$want" = - ]; then
    fail "$so exports '$name' ($got), which lib/txscale.map does not list"
  elif [ "$got" = - ]; then
    fail "lib/txscale.map lists '$name' under $want, but $so does not define it"
  else
    fail "'$name' has version $got, lib/txscale.map lists it under $want"
  fi
done <<<"$diff_out"

decl=$(grep -ho 'TXS_API[^(;]*\btxs_[a-z0-9_]*[[:space:]]*(' "$src"/include/txscale/*.h |
  grep -o 'txs_[a-z0-9_]*[[:space:]]*($' | tr -d ' (' | sort -u)
missing=$(comm -23 <(printf '%s\n' "$decl") <(awk '{ print $1 }' <<<"$exported"))
if [ -n "$missing" ]; then
  fail "declared TXS_API in include/txscale but not exported (list each in lib/txscale.map:" \
    "TXSCALE_<MAJOR>.<MINOR> if stable, else $unstable_node):" $missing
fi
[ $bad -eq 0 ] || exit 1
counts=$(awk '{ c[$2]++ } END { for (k in c) printf "%s %d, ", k, c[k] }' <<<"$exported")
echo "exports: $n functions, each under the node lib/txscale.map lists it in (${counts%, }); no data objects;" \
  "$(grep -c . <<<"$decl") TXS_API functions all exported"
