"""Sandbox state on disk under PODPLANE_HOME/sandbox/: our emulators' JSON and moto's pickle.

Writes go to a temporary file first and are renamed, so a crash never leaves half a file.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from podplane.sandbox.aws import moto_side
from podplane.sandbox.aws.world import World

STATE_FILE = "aws-state.json"
MOTO_FILE = "moto-state.pickle"


class StateStore:
    def __init__(self, folder: Path, world: World) -> None:
        self.folder = folder
        self.world = world
        self._lock = threading.Lock()
        folder.mkdir(parents=True, exist_ok=True)

    def load(self) -> bool:
        path = self.folder / STATE_FILE
        loaded = False
        if path.exists():
            self.world.load(json.loads(path.read_text()))
            loaded = True
        return moto_side.load(self.folder / MOTO_FILE) or loaded

    def save(self, moto: bool = False) -> None:
        with self._lock:
            with self.world.lock:
                text = json.dumps(self.world.dump())
            _atomic_write(self.folder / STATE_FILE, text)
            if moto:
                moto_side.save(self.folder / MOTO_FILE)

    def save_all(self) -> None:
        self.save(moto=True)


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)
