"""What bench/pkg-import's programs measure with: the CPU time of the
baseline's processes (this process's children) and of the daemon (its
/proc/PID/stat), and rocmctl's --json output."""
import json, os, resource, subprocess

TICK = os.sysconf("SC_CLK_TCK")


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def ctl_json(ctl, sock, *args):
    out = subprocess.run([ctl, "--socket", sock, "--json", *args], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)
