#!/bin/bash
cd /work/main
T=build/txscale
date > /tmp/bench/start
$T bench path -n 20M -r 7 --threads 1,2 > /tmp/bench/path.txt 2>&1
$T bench path -n 20M -r 7 --threads 1,2 -J > /tmp/bench/path.json 2>&1
$T bench ident --threads 1,2 --hot --runs 7 --json > /tmp/bench/ident_hot.json 2>&1
$T bench ident --threads 1,2 --spread --runs 5 --json > /tmp/bench/ident_spread.json 2>&1
$T bench ident --threads 1,2 --hot --runs 7 > /tmp/bench/ident_hot.txt 2>&1
$T bench linksel --threads 1,2 -r 7 --json > /tmp/bench/linksel.json 2>&1
$T bench linksel --threads 1,2 -r 7 > /tmp/bench/linksel.txt 2>&1
$T bench sendmsg --runs 7 -A 1 --json > /tmp/bench/sendmsg.json 2>&1
$T bench sendmsg --runs 7 -A 1 > /tmp/bench/sendmsg.txt 2>&1
$T bench recv -r 7 > /tmp/bench/recv.txt 2>&1
$T bench recv -r 7 -6 > /tmp/bench/recv6.txt 2>&1
bash bench/sendmsg-callgrind $T 200000 > /tmp/bench/sendmsg_cg.txt 2>&1
bash bench/peers --out /tmp/bench/peers.json > /tmp/bench/peers.txt 2>&1
bash bench/peers-ring --out /tmp/bench/peers-ring.json > /tmp/bench/peers-ring.txt 2>&1
date > /tmp/bench/end
bash bench/peers --sink xdp --rounds 5 --time 3 --out /tmp/bench/peers-xdp.json   # 21:29, after the lab
