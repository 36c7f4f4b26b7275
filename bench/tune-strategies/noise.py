#!/usr/bin/env python3
"""How much of a recorded landscape is noise (docs/PERF.md, "Tuner").

  bench/tune-strategies/noise.py pair A.csv B.csv
      two recordings of the same space (replicates): per-point agreement,
      rank correlation, where each one's best lands in the other, and how
      many points each level (90/95/99% of the best) holds.
  bench/tune-strategies/noise.py remeasure REMEASURE.csv
      the output of bench-tune-remeasure (config,rank,recorded_ms,roundN_ms):
      the recorded times against the re-measured rounds.
"""
import math
import statistics as st
import sys


def load_landscape(path):
    d = {}
    for line in open(path):
        if line.startswith("#") or line.startswith("config"):
            continue
        f = line.strip().split(",")
        if len(f) >= 5 and f[1] == "ok":
            d[f[0]] = (float(f[2]), float(f[3]), float(f[4]))
    return d


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0] * len(v)
    for k, i in enumerate(order):
        r[i] = k
    return r


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    n = len(x)
    mx, my = (n - 1) / 2, (n - 1) / 2
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    return sxy / sxx


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def levels(d, best):
    return [sum(1 for t in d.values() if best / t[0] >= lv) for lv in (0.90, 0.95, 0.99)]


def pair(pa, pb):
    a, b = load_landscape(pa), load_landscape(pb)
    keys = sorted(set(a) & set(b))
    ta = [a[k][0] for k in keys]
    tb = [b[k][0] for k in keys]
    lr = [abs(math.log(x / y)) for x, y in zip(ta, tb)]
    print(f"{len(keys)} common points")
    for name, d in (("A", a), ("B", b)):
        spread = [(t[2] - t[1]) / t[0] for t in d.values()]
        best = min(t[0] for t in d.values())
        print(f"{name}: best {best:.4f} ms, median (p80-p20)/median {st.median(spread):.3f}, "
              f"points within 90/95/99%: {levels(d, best)}")
    print(f"|log(A/B)|: median {st.median(lr):.3f}, p90 {pct(lr, 0.9):.3f}, "
          f"p99 {pct(lr, 0.99):.3f}, max {max(lr):.3f}")
    print(f"Spearman A vs B: all {spearman(ta, tb):.3f}")
    top = sorted(keys, key=lambda k: a[k][0])[:100]
    print(f"Spearman A vs B over A's top 100: "
          f"{spearman([a[k][0] for k in top], [b[k][0] for k in top]):.3f}")
    ra = {k: i + 1 for i, k in enumerate(sorted(keys, key=lambda k: a[k][0]))}
    rb = {k: i + 1 for i, k in enumerate(sorted(keys, key=lambda k: b[k][0]))}
    besta, bestb = min(ta), min(tb)
    for name, d, r, other, ob, orank in (("A", a, ra, b, bestb, rb), ("B", b, rb, a, besta, ra)):
        kb = min(d, key=lambda k: d[k][0])
        print(f"{name}'s best {kb}: rank {orank[kb]} in the other, "
              f"{ob / other[kb][0]:.3f} of its best")
    for n in (10, 50):
        ta_top = set(sorted(keys, key=lambda k: a[k][0])[:n])
        tb_top = set(sorted(keys, key=lambda k: b[k][0])[:n])
        print(f"top {n} overlap: {len(ta_top & tb_top)}")
    # Geometric mean of the two: a landscape with half the noise variance.
    g = {k: math.sqrt(a[k][0] * b[k][0]) for k in keys}
    bg = min(g.values())
    print(f"geometric mean of A and B: best {bg:.4f} ms ({min(g, key=g.get)}), "
          f"points within 90/95/99%: "
          f"{[sum(1 for t in g.values() if bg / t >= lv) for lv in (0.9, 0.95, 0.99)]}")
    for name, d in (("A", a), ("B", b)):
        band = [k for k in keys if min(t[0] for t in d.values()) / d[k][0] >= 0.95]
        print(f"{name}'s 95% band ({len(band)} points) in the mean: "
              f"{min(bg / g[k] for k in band):.3f}-{max(bg / g[k] for k in band):.3f}")


def remeasure(path):
    rows = []
    for line in open(path):
        if line.startswith("config"):
            continue
        f = line.strip().split(",")
        rows.append((f[0], int(f[1]), float(f[2]), [float(x) for x in f[3:]]))
    nr = len(rows[0][3])
    med = [st.median(r[3]) for r in rows]
    rec = [r[2] for r in rows]
    print(f"{len(rows)} points, {nr} rounds")
    print(f"Spearman recorded vs median of rounds: {spearman(rec, med):.3f}")
    for i in range(nr):
        print(f"  round {i + 1} vs recorded: "
              f"{spearman(rec, [r[3][i] for r in rows]):.3f}", end="")
        if i:
            print(f", vs round 1: {spearman([r[3][0] for r in rows], [r[3][i] for r in rows]):.3f}",
                  end="")
        print()
    lr = [abs(math.log(a / b)) for a, b in zip(rec, med)]
    print(f"|log(recorded/re-measured)|: median {st.median(lr):.3f}, p90 {pct(lr, 0.9):.3f}")
    rr = [abs(math.log(r[3][i] / r[3][j])) for r in rows for i in range(nr)
          for j in range(i + 1, nr)]
    print(f"|log(round i/round j)|: median {st.median(rr):.3f}, p90 {pct(rr, 0.9):.3f}")
    top = [i for i, r in enumerate(rows) if r[1] <= 100]
    print(f"top 100: Spearman recorded vs re-measured "
          f"{spearman([rec[i] for i in top], [med[i] for i in top]):.3f}")
    bm = min(med)
    order = sorted(range(len(rows)), key=lambda i: med[i])
    print("re-measured best 10 (recorded rank, recorded ms, re-measured ms, of re-measured best):")
    for i in order[:10]:
        print(f"  {rows[i][1]:5d} {rec[i]:.4f} {med[i]:.4f} {bm / med[i]:.3f}  {rows[i][0]}")
    b = [i for i, r in enumerate(rows) if r[1] == 1][0]
    print(f"recorded best re-measured: {med[b]:.4f} ms, rank {order.index(b) + 1} of {len(rows)}, "
          f"{bm / med[b]:.3f} of the re-measured best")
    print(f"within 95% of the re-measured best: {sum(1 for m in med if bm / m >= 0.95)} of "
          f"{len(rows)} (recorded ranks {sorted(rows[i][1] for i in order if bm / med[i] >= 0.95)})")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "pair":
        pair(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "remeasure":
        remeasure(sys.argv[2])
    else:
        sys.exit(__doc__)
