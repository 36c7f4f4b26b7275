#!/usr/bin/env python3
"""Measures what bench/pkg-import/pkg-import.sh prepared: each archive is extracted and
hashed (7z x + sha256sum) and imported by rocmd into a fresh store, three
rounds alternating, and the medians are printed as a Markdown table. Wall
time is what a user waits; CPU time (the baseline's processes, the daemon's
own) is what it costs, and does not move with other load on the machine.
Then a second package sharing files is imported, for the dedup figure.
Usage: pkg-import.py ROCMD ROCMCTL WORKDIR LZMA2-7Z STORED-7Z SECOND-7Z"""
import os, shutil, statistics, subprocess, sys, time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402
from measure import children_cpu, proc_cpu  # noqa: E402

rocmd, ctl, work, lzma2, stored, second = sys.argv[1:7]
state, sock = f"{work}/state", f"{work}/rocmd.sock"
cfg = f"{work}/rocmd.json"
with open(cfg, "w") as f:
    f.write('{"store": {"drop_folder": 0}}\n')
raw = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(f"{work}/a") for n in ns)


def ctl_json(*args):
    return measure.ctl_json(ctl, sock, *args)


def baseline(archive):
    shutil.rmtree(f"{work}/x", ignore_errors=True)
    subprocess.run(["sync"])
    c0, t0 = children_cpu(), time.monotonic()
    subprocess.run(["7z", "x", "-bd", "-bso0", f"-o{work}/x", archive], check=True)
    subprocess.run(f"find '{work}/x' -type f -exec sha256sum {{}} + >/dev/null", shell=True,
                   check=True)
    t1, c1 = time.monotonic(), children_cpu()
    shutil.rmtree(f"{work}/x")
    return t1 - t0, c1 - c0


def start():
    shutil.rmtree(state, ignore_errors=True)
    subprocess.run([rocmd, "--state-dir", state, "--socket", sock, "--config", cfg],
                   check=True, stderr=subprocess.DEVNULL)
    return int(ctl_json("status")["pid"])


def stop():
    subprocess.run([ctl, "--socket", sock, "shutdown"], capture_output=True)
    for _ in range(50):
        if not os.path.exists(sock):
            break
        time.sleep(0.1)


def imported(archive):
    pid = start()
    time.sleep(0.5)  # start-up collection done
    subprocess.run(["sync"])
    c0, t0 = proc_cpu(pid), time.monotonic()
    r = ctl_json("pkg", "import", archive)
    t1, c1 = time.monotonic(), proc_cpu(pid)
    return t1 - t0, c1 - c0, pid, r


print("| archive | size | content | 7z x + sha256sum | rocmctl pkg import | throughput ratio |")
print("|---|---|---|---|---|---|")
mb = raw / 1e6
for name, archive in (("7z LZMA2 solid (-mx=1)", lzma2), ("7z stored (-mx=0)", stored)):
    rows = []
    for _ in range(3):
        bw, bc = baseline(archive)
        iw, ic, _, _ = imported(archive)
        stop()
        rows.append((bw, bc, iw, ic))
    bw = statistics.median(r[0] for r in rows)
    bc = statistics.median(r[1] for r in rows)
    iw = statistics.median(r[2] for r in rows)
    ic = statistics.median(r[3] for r in rows)
    wall_ratio = statistics.median(r[0] / r[2] for r in rows)
    cpu_ratio = statistics.median(r[1] / r[3] for r in rows)
    print(f"| {name} | {os.path.getsize(archive)/1e6:.0f} MB | {mb:.0f} MB "
          f"| {bw:.2f} s wall ({mb/bw:.0f} MB/s), {bc:.2f} s CPU "
          f"| {iw:.2f} s wall ({mb/iw:.0f} MB/s), {ic:.2f} s CPU "
          f"| {wall_ratio:.2f}x wall, {cpu_ratio:.2f}x CPU |")

# Dedup: the first package, then a second sharing files with it.
start()
first = ctl_json("pkg", "import", lzma2)
b = ctl_json("pkg", "import", second)
s = ctl_json("pkg", "list")["store"]
stop()
print()
print(f"- second package: {b['bytes']/1e6:.0f} MB in {b['files']} files, of which "
      f"{b['new_bytes']/1e6:.0f} MB ({b['new_objects']} objects) were new to the store")
print(f"- store: the two packages hold {s['package_bytes']/1e6:.0f} MB; their objects take "
      f"{s['object_bytes']/1e6:.0f} MB (dedup saves {s['dedup_saved_bytes']/1e6:.0f} MB, "
      f"{100*s['dedup_saved_bytes']/s['package_bytes']:.0f}%)")
print(f"- identity of the first: archs {first['identity']['archs']}, SDK "
      f"{first['identity']['sdk']} ({first['identity']['sdk_source']}), "
      f"version {first['identity']['version_hint']}")
shutil.rmtree(state, ignore_errors=True)
