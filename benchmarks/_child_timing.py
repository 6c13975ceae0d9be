"""Timing helpers the benchmarks' child processes start with (their source is prepended to
each child's script): `out` collects the figures, `step(name, fn)` runs fn and records its
wall and CPU seconds (user + sys, all threads) as `<name>_wall_s` / `<name>_cpu_s`."""
import resource
import time

out = {}


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def step(name, fn):
    w, c = time.perf_counter(), cpu()
    r = fn()
    out[name + "_wall_s"] = round(time.perf_counter() - w, 2)
    out[name + "_cpu_s"] = round(cpu() - c, 2)
    return r
