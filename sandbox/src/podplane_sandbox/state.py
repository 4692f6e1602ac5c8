"""Sandbox state on disk under PODPLANE_HOME/sandbox/: our emulators' JSON and moto's pickle.

Writes go to a temporary file first and are renamed, so a crash never leaves half a file.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from podplane_sandbox.aws import moto_side
from podplane_sandbox.aws.world import World
from podplane_sandbox.guard import write_private

STATE_FILE = "aws-state.json"
MOTO_FILE = "moto-state.pickle"


class StateStore:
    def __init__(self, folder: Path, world: World) -> None:
        self.folder = folder
        self.world = world
        self._moto_dirty = False
        self._stop = threading.Event()
        folder.mkdir(parents=True, exist_ok=True)

    def load(self) -> bool:
        path = self.folder / STATE_FILE
        loaded = False
        if path.exists():
            self.world.load(json.loads(path.read_text()))
            loaded = True
        return moto_side.load(self.folder / MOTO_FILE) or loaded

    def save(self, moto: bool = False) -> None:
        """Our state is written at once; moto's (large) pickle is marked dirty and written by
        `flush_moto` (a background tick and on stop), so a burst of EC2 calls costs one write."""
        with self.world.lock:  # the one lock: requests, moto calls and saves never interleave
            _atomic_write(self.folder / STATE_FILE, json.dumps(self.world.dump()))
            self._moto_dirty = self._moto_dirty or moto

    def flush_moto(self) -> None:
        with self.world.lock:
            if self._moto_dirty:
                self._moto_dirty = False
                moto_side.save(self.folder / MOTO_FILE)

    def save_all(self) -> None:
        self.save()
        self.flush_moto()

    def start_autosave(self, interval: float = 1.0) -> None:
        def loop() -> None:
            while not self._stop.wait(interval):
                self.flush_moto()

        self._stop.clear()
        threading.Thread(target=loop, daemon=True, name="sandbox-autosave").start()

    def stop_autosave(self) -> None:
        self._stop.set()


def _atomic_write(path: Path, text: str) -> None:
    write_private(path, text)   # 0600 from the first byte
