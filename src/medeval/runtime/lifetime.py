"""A run's processes die with the process that started them.

``medeval run`` starts a Jupyter kernel, and the kernel a pool of grid workers. When the runner is killed with
SIGKILL (or by the out-of-memory killer), it cannot stop them: before this module the kernel and its workers went
on computing, orphaned, and their staging and kernel folders stayed behind. :func:`watch_parent` starts a daemon
thread that checks every :data:`INTERVAL` seconds whether this process's parent is still the one it started with;
once it is not (the parent died and the process was re-parented), it kills this process's own children and
exits. The chapter kernel calls it in its set-up, every local grid worker when it starts, so a SIGKILL of the
runner ends the kernel within ``INTERVAL`` and the workers within ``2 x INTERVAL``.

Linux's ``prctl(PR_SET_PDEATHSIG)`` would do it without a thread, but it fires when the *thread* that started
the child exits, not its process, and the kernel is started from a thread of the Jupyter client, so it could
kill a healthy kernel; a parent check cannot.
"""

from __future__ import annotations

import os
import signal
import threading

#: seconds between two checks of the parent
INTERVAL = 0.25

#: pid of the process that watches -> the parent it watches (a forked child inherits the dict, not the thread)
_watching: dict[int, int] = {}


def watch_parent(interval: float = INTERVAL) -> bool:
    """Exit this process (status 137, as a SIGKILL) once its parent has died, after killing its own children.
    Returns True when the watch started (False: already watching, or no parent to watch)."""
    parent = os.getppid()
    if parent <= 1 or os.getpid() in _watching:
        return False
    _watching[os.getpid()] = parent

    def watch() -> None:
        stop = threading.Event()
        while not stop.wait(interval):
            if os.getppid() != parent:
                _kill_children()
                os._exit(137)

    threading.Thread(target=watch, name="medeval-parent-watch", daemon=True).start()
    return True


def _kill_children() -> None:
    try:
        import psutil

        children = psutil.Process().children(recursive=True)
    except Exception:  # noqa: BLE001 - exiting matters more than the children's listing
        return
    for child in children:
        try:
            child.send_signal(signal.SIGKILL)
        except Exception:  # noqa: BLE001, S110 - already gone
            pass


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (a zombie counts as dead)."""
    if pid <= 0:
        return False
    try:
        import psutil

        return psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except Exception:  # noqa: BLE001 - psutil.NoSuchProcess between the two calls
        return False
