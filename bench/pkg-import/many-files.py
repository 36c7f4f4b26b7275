#!/usr/bin/env python3
"""Import of a package of many small files (docs/PERF.md, "Package store"): a
stored zip of FILES entries (default 100,000: code objects named for gfx1030
and gfx1100 in library/, their two lazy indexes, and a TensileManifest.txt
naming every code object), written by pkg-mkarchive, imported by rocmd through
rocmctl into a fresh store, against `unzip -q` + `sha256sum` of the same zip
in the same run (extraction and hashing: the work an import cannot avoid).
Wall time is what a user waits; CPU time (the baseline's processes, the
daemon's own) what it costs. The import's identification is what was
quadratic in the number of files (issue 16: 649 s of CPU for 100,000).
Usage: many-files.py ROCMD ROCMCTL PKG-MKARCHIVE [FILES]   (needs unzip)"""
import os, shutil, subprocess, sys, time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import children_cpu, ctl_json, proc_cpu  # noqa: E402

rocmd, ctl, mk = (os.path.abspath(a) for a in sys.argv[1:4])
files = int(sys.argv[4]) if len(sys.argv) > 4 else 100000
work = os.environ.get("ROCMD_BENCH_DIR", "/var/tmp/rocmd-bench-many")
state, sock, cfg = f"{work}/state", f"{work}/rocmd.sock", f"{work}/rocmd.json"

shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
with open(cfg, "w") as f:
    f.write('{"store": {"drop_folder": 0, "max_files": %d}, "tune": {"enabled": 0}}\n'
            % (files + 10))
cos = [f"library/TensileLibrary_Type_HH_Contraction_{i:06d}_{'gfx1100' if i % 2 else 'gfx1030'}.co"
       for i in range(files - 3)]
with open(f"{work}/manifest", "w") as f:
    f.writelines(f"/build/rocblas/{n}\n" for n in cos)
with open(f"{work}/specs", "w") as f:
    f.write("z:library/TensileLibrary_lazy_gfx1030.dat=64\n")
    f.write("z:library/TensileLibrary_lazy_gfx1100.dat=64\n")
    f.write(f"f:library/TensileManifest.txt={work}/manifest\n")
    f.writelines(f"z:{n}=64\n" for n in cos)
archive = f"{work}/rocm.gfx1030.gfx1100.many.V1.for.hip.sdk.6.2.4.zip"
subprocess.run([mk, "zip-store", archive, f"@{work}/specs"], check=True)


subprocess.run(["sync"])
c0, t0 = children_cpu(), time.monotonic()
subprocess.run(["unzip", "-q", "-d", f"{work}/x", archive], check=True)
subprocess.run(f"find '{work}/x' -type f -exec sha256sum {{}} + >/dev/null", shell=True,
               check=True)
bw, bc = time.monotonic() - t0, children_cpu() - c0
shutil.rmtree(f"{work}/x")

subprocess.run([rocmd, "--state-dir", state, "--socket", sock, "--config", cfg], check=True,
               stderr=subprocess.DEVNULL)
pid = int(ctl_json(ctl, sock, "status")["pid"])
time.sleep(0.5)  # the start-up collection done
subprocess.run(["sync"])
c0, t0 = proc_cpu(pid), time.monotonic()
r = ctl_json(ctl, sock, "pkg", "import", archive)
iw, ic = time.monotonic() - t0, proc_cpu(pid) - c0
subprocess.run([ctl, "--socket", sock, "shutdown"], capture_output=True)
for _ in range(100):
    if not os.path.exists(sock):
        break
    time.sleep(0.1)

ident = r["identity"]
print("| files | zip (stored) | unzip -q + sha256sum | rocmctl pkg import | identified |")
print("|---|---|---|---|---|")
print(f"| {r['files']:,} | {os.path.getsize(archive)/1e6:.1f} MB "
      f"| {bw:.2f} s wall, {bc:.2f} s CPU | {iw:.2f} s wall, {ic:.2f} s daemon CPU "
      f"| {ident['library_files']:,} library files, archs {','.join(ident['archs'])}, "
      f"manifest {ident['tensile_manifest']['entries']:,} lines, "
      f"{ident['tensile_manifest']['missing']} missing |")
shutil.rmtree(work, ignore_errors=True)
