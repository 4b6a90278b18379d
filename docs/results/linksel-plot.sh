#!/bin/sh
# Plot `txscale bench linksel` text outputs: docs/results/linksel.png.
#   txscale bench linksel -n 2M -r 5 --threads 1,2 -A 0-1 > docs/results/linksel-threads.txt
#   txscale bench linksel -n 2M -r 3 --modes balance-rr --threads 8,16,64 --lockstep > docs/results/linksel-lockstep.txt
#   txscale bench linksel -n 2M -r 3 --modes balance-rr --threads 8,16,64 --lockstep \
#       --packets-per-slave 32 > docs/results/linksel-lockstep-pps32.txt
#   sh docs/results/linksel-plot.sh
set -e
cd "$(dirname "$0")"
# left: ns per selection of the balance-rr scopes, one column per thread count
awk '$1 == "balance-rr" { v[$2, $3] = $4; if (!($2 in s)) { s[$2] = 1; so[n++] = $2 } if (!($3 in t)) { t[$3] = 1; tl[m++] = $3 } }
     END { printf "scope"; for (j = 0; j < m; j++) printf " T=%s", tl[j]; printf "\n"
	   for (i = 0; i < n; i++) { printf "%s", so[i]; for (j = 0; j < m; j++) printf " %s", v[so[i], tl[j]]; printf "\n" } }' \
  linksel-threads.txt > linksel-ns.dat
# right: mean window max/min under lock-step, per scope, for each (N, T)
awk '$1 == "balance-rr" { f = FILENAME ~ /pps32/ ? "N=32" : "N=1"; k = f ",T=" $3; v[$2, k] = $5
	if (!($2 in s)) { s[$2] = 1; so[n++] = $2 } if (!(k in c)) { c[k] = 1; cl[m++] = k } }
     END { printf "scope"; for (j = 0; j < m; j++) printf " %s", cl[j]; printf "\n"
	   for (i = 0; i < n; i++) { printf "%s", so[i]; for (j = 0; j < m; j++) printf " %s", v[so[i], cl[j]]; printf "\n" } }' \
  linksel-lockstep.txt linksel-lockstep-pps32.txt > linksel-imbalance.dat
gnuplot <<'GP'
set terminal pngcairo size 1200,480 font ",10" noenhanced
set output 'linksel.png'
set multiplot layout 1,2 title "balance-rr counter scopes (bench linksel; see linksel.md for the machine)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set grid ytics
set key top right autotitle columnheader
set title "ns per selection, real pinned threads, 4 links"
set ylabel "ns per selection per thread"
plot for [c=2:*] 'linksel-ns.dat' using c:xtic(1)
set title "lock-step cores: mean over 1000-packet windows of max/min link count"
set ylabel "max/min (1 = even; log)"
set logscale y
set yrange [0.9:*]
set key top left
plot for [c=2:*] 'linksel-imbalance.dat' using c:xtic(1)
unset multiplot
GP
