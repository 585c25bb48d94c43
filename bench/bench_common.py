"""Helpers shared by the bench scripts."""
import json
import subprocess


def peak_rss_mb():
    """Peak resident memory of this process image (VmHWM). Not getrusage: its ru_maxrss carries
    the parent's peak across fork and exec."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return -1.0


def run_child(cmd, env):
    """Runs a measurement in its own process; its last stdout line is a JSON object."""
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_run(runs):
    """The run with the median time."""
    return sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2]
