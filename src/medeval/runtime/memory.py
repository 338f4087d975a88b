"""The peak memory of a chapter kernel and its grid workers, sampled while the page runs (:class:`PeakMemory`).

:func:`medeval.runtime.notebook.setup` starts the sampler, :func:`medeval.runtime.notebook.provenance` records its
peak beside the resource estimate the pre-flight checked.
"""

from __future__ import annotations

import os

_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class PeakMemory:
    """The peak memory of this process and all its descendants together (grid workers included), sampled every
    ``interval`` seconds in a daemon thread; what the resource estimate is checked against.

    This process counts its resident set (RSS, shared libraries included: what it needs when it runs alone), each
    descendant only its private pages (a forked grid worker shares the kernel's pages, which are counted once, in
    the kernel). Neither depends on unrelated processes: the proportional set size (PSS) used before shrank when
    other programs mapped the same libraries (a kernel with torch: 354 MB alone, 264 MB beside five similar
    processes), so a run measured in a busy test suite looked smaller than it is. On Linux the kernel's own sums
    (``/proc/<pid>/smaps_rollup``, a walk of the page tables: 3 ms a process) are read for the descendants, and
    the resident count in ``/proc/<pid>/statm`` (0.05 ms, the same figure) for this process, which is sampled
    whether or not it has workers; elsewhere psutil's RSS and USS.
    """

    def __init__(self, interval: float = 0.2):
        self.interval = interval
        self.peak = 0
        self._stop = None

    @staticmethod
    def _footprint(proc, root: bool) -> int:
        """Bytes ``proc`` adds to the total: its RSS for the root process, its private pages for a descendant."""
        try:
            if root:
                with open(f"/proc/{proc.pid}/statm", "rb") as f:
                    return int(f.read().split()[1]) * _PAGE_BYTES
            private = 0
            with open(f"/proc/{proc.pid}/smaps_rollup", "rb") as f:
                for line in f:
                    name, _, rest = line.partition(b":")
                    if name in (b"Private_Clean", b"Private_Dirty"):
                        private += int(rest.split()[0]) * 1024
            return private
        except OSError:
            pass
        info = proc.memory_full_info()
        return info.rss if root else getattr(info, "uss", info.rss)

    def sample(self) -> int:
        import psutil

        me = psutil.Process()
        total = 0
        for proc in [me, *me.children(recursive=True)]:
            try:
                total += self._footprint(proc, root=proc is me)
            except psutil.Error:  # a worker that just exited
                pass
        self.peak = max(self.peak, total)
        return total

    def start(self) -> PeakMemory:
        import threading

        self._stop = threading.Event()
        self.sample()

        def loop():
            while not self._stop.wait(self.interval):
                self.sample()

        threading.Thread(target=loop, name="medeval-peak-memory", daemon=True).start()
        return self

    def stop(self) -> int:
        if self._stop is not None:
            self._stop.set()
        return self.sample()
