#!/bin/sh
# Plot `txscale bench ident` text outputs: docs/results/ident.png.
#   txscale bench ident --ops 10M --runs 5          > docs/results/ident-hot.txt
#   txscale bench ident --ops 10M --runs 3 --spread > docs/results/ident-spread.txt
#   sh docs/results/ident-plot.sh
set -e
cd "$(dirname "$0")"
# one row per strategy: Mops/s at each thread count, hot then spread
awk '!/^#/ && $1 != "strategy" { v[$1, FILENAME, $2] = $3; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 }
	if (!($2 in t)) { t[$2] = 1; tl[m++] = $2 } }
     END { printf "strategy"; for (f = 1; f <= 2; f++) for (j = 0; j < m; j++) printf " %s_T%s", f == 1 ? "hot" : "spread", tl[j]
	   printf "\n"
	   for (i = 0; i < n; i++) { s = order[i]; printf "%s", s
		for (f = 1; f <= 2; f++) for (j = 0; j < m; j++) printf " %s", v[s, f == 1 ? "ident-hot.txt" : "ident-spread.txt", tl[j]]
		printf "\n" } }' ident-hot.txt ident-spread.txt > ident.dat
gnuplot <<'GP'
set terminal pngcairo size 960,520 font ",10" noenhanced
set output 'ident.png'
set title "IP ID allocators: total Mops/s (bench ident; see ident.md for the machine)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set logscale y
set ylabel "Mops/s, all threads (log)"
set key top left autotitle columnheader
set grid ytics
plot for [c=2:*] 'ident.dat' using c:xtic(1)
GP
