#!/usr/bin/env python3
"""Helper of tests/integration/replay_*.sh: make test captures, compare them.

  replay_tool.py make OUT.pcap N [kind]   kind: ok (default), trunc, pcapng, linktype, big
  replay_tool.py same IN.pcap OUT.pcap M  OUT holds M frames: IN's frames in order, looping, byte for byte
  replay_tool.py timing IN.pcap OUT.pcap SPEED   OUT's times follow IN's / SPEED (never ahead, median close)
"""
import random
import struct
import sys


def read(path):
    with open(path, 'rb') as f:
        d = f.read()
    magic = struct.unpack('<I', d[:4])[0]
    end = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    nano = struct.unpack(end + 'I', d[:4])[0] == 0xa1b23c4d
    off, out = 24, []
    while off + 16 <= len(d):
        s, frac, incl, _ = struct.unpack(end + 'IIII', d[off:off + 16])
        out.append((s + frac / (1e9 if nano else 1e6), d[off + 16:off + 16 + incl]))
        off += 16 + incl
    return out


def make(path, n, kind):
    rnd = random.Random(14)
    linktype = 101 if kind == 'linktype' else 1
    with open(path, 'wb') as f:
        if kind == 'pcapng':
            f.write(struct.pack('<IIIHHq', 0x0a0d0d0a, 28, 0x1a2b3c4d, 1, 0, -1) + struct.pack('<I', 28))
            return
        f.write(struct.pack('<IHHiIII', 0xa1b23c4d, 2, 4, 0, 0, 65535, linktype))
        t = 1700000000 * 10**9
        for i in range(n):
            size = rnd.choice([60, 64, 128, 594, 1000, 1514])
            if kind == 'big' and i == n // 2:
                size = 1600
            # locally administered MACs, ethertype 0x88b5 (local experimental):
            # no stack on the path acts on these frames
            frame = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb5]) + struct.pack('>I', i) + \
                bytes(rnd.getrandbits(8) for _ in range(size - 18))
            orig = size + 10 if kind == 'trunc' and i == 3 else size
            f.write(struct.pack('<IIII', t // 10**9, t % 10**9, size, orig))
            f.write(frame)
            t += rnd.randint(100000, 3000000)  # 0.1 .. 3 ms


def main():
    mode = sys.argv[1]
    if mode == 'make':
        make(sys.argv[2], int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else 'ok')
        return 0
    a, b = read(sys.argv[2]), read(sys.argv[3])
    if mode == 'same':
        m = int(sys.argv[4])
        if len(b) != m:
            idx = [struct.unpack('>I', fr[14:18])[0] if len(fr) >= 18 else -1 for _, fr in b]
            gaps = [(i, x, y) for i, (x, y) in enumerate(zip(idx, idx[1:])) if (x + 1) % len(a) != y]
            print('FAIL: %d frames out, want %d (first %s, last %s, breaks at %s)'
                  % (len(b), m, idx[:1], idx[-1:], gaps[:5]))
            return 1
        for i, (_, fr) in enumerate(b):
            want = a[i % len(a)][1]
            if fr != want:
                print('FAIL: frame %d differs from the capture\'s frame %d (%d vs %d bytes)' % (i, i % len(a), len(fr), len(want)))
                return 1
        print('%d frames identical to the capture\'s (looping over %d)' % (m, len(a)))
        return 0
    if mode == 'timing':
        speed = float(sys.argv[4])
        n = len(a)
        span = a[-1][0] - a[0][0]
        period = (span + span / (n - 1)) / speed
        sched = [(i // n) * period + (a[i % n][0] - a[0][0]) / speed for i in range(len(b))]
        rel = [t - b[0][0] for t, _ in b]
        d = sorted(r - s for r, s in zip(rel, sched))
        print('timing: %d frames, lateness vs the first: min %.0f us, median %.0f us, max %.0f us'
              % (len(d), d[0] * 1e6, d[len(d) // 2] * 1e6, d[-1] * 1e6))
        # never ahead (the first frame may itself be late: 2 ms of slack), and
        # mostly on time (a loaded machine may hold a frame back now and then)
        if d[0] < -2e-3 or abs(d[len(d) // 2]) > 1e-3:
            print('FAIL: the replay does not follow the capture\'s timing')
            return 1
        return 0
    print('unknown mode', mode)
    return 2


sys.exit(main())
