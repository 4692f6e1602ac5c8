"""A tiny Hugging Face Hub: two small repositories, answered as the hub and its client do.

What it enforces, from the hub's documentation and huggingface_hub's client
(huggingface_hub docs: "Download files", "Command Line Interface" (`huggingface-cli download
REPO --revision R --local-dir D`), "Environment variables" (HF_TOKEN), "Gated models";
huggingface_hub `utils/_http.py` `hf_raise_for_status`, which maps the hub's answers to
exception classes):

- An unknown repository: RepositoryNotFoundError; the hub answers 401 to an anonymous caller
  (it does not tell whether a private repository exists) and 404 to an authenticated one.
- A gated repository: GatedRepoError 401 without a token. A token is a user access token
  (`hf_` then letters and digits); a malformed one is refused (401) for every repository. The
  sandbox's users who hold a well-formed token have accepted the gate's conditions.
- A revision (branch, tag or full commit) that the repository lacks: RevisionNotFoundError
  404. The default revision is `main`.
- With `--local-dir`, files land under that folder and the client keeps its bookkeeping under
  `<local-dir>/.cache/huggingface/`; each file is written under a temporary name and renamed.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from dataclasses import dataclass

HOST = "huggingface.co"
TOKEN = re.compile(r"^hf_[A-Za-z0-9]{30,}$")
PUBLIC, GATED = "sandbox-models/tiny-chat", "sandbox-models/tiny-chat-gated"


@dataclass(frozen=True)
class Repo:
    gated: bool
    files: dict[str, bytes]
    revisions: dict[str, str]  # branch or tag -> commit


class HubError(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(f"huggingface_hub.errors.{kind}: {status} Client Error. {message}")


def _safetensors(seed: str) -> bytes:
    """A valid safetensors file (8-byte little-endian header length, JSON header, data): one
    F32 tensor of 16 x 64 (4 KiB)."""
    data = hashlib.shake_256(seed.encode()).digest(16 * 64 * 4)
    header = json.dumps({"lm_head.weight": {"dtype": "F32", "shape": [16, 64],
                                            "data_offsets": [0, len(data)]}}).encode()
    return struct.pack("<Q", len(header)) + header + data


def model_files(name: str) -> dict[str, bytes]:
    """A tiny model in Hugging Face layout (also what the sandbox's JumpStart bucket holds)."""
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
              "num_hidden_layers": 1, "num_attention_heads": 4, "vocab_size": 16}
    tokenizer = {"version": "1.0", "model": {"type": "BPE", "vocab": {f"t{i}": i
                                                                       for i in range(16)}}}
    return {"config.json": json.dumps(config, indent=2).encode(),
            "tokenizer.json": json.dumps(tokenizer).encode(),
            "model.safetensors": _safetensors(name)}


def _repo(name: str, gated: bool) -> Repo:
    commit = hashlib.sha1(name.encode()).hexdigest()
    return Repo(gated, model_files(name), {"main": commit, "v1.0": commit})


REPOS = {PUBLIC: _repo(PUBLIC, False), GATED: _repo(GATED, True)}


def download(repo_id: str, revision: str | None, token: str | None) -> dict[str, bytes]:
    """The repository's files at that revision, or the HubError the client raises."""
    url = f"https://{HOST}/api/models/{repo_id}/revision/{revision or 'main'}"
    if token is not None and not TOKEN.match(token):
        raise HubError(401, "HfHubHTTPError", f"Invalid user token for url: {url}.")
    repo = REPOS.get(repo_id)
    if repo is None:
        raise HubError(401 if token is None else 404, "RepositoryNotFoundError",
                       f"Repository not found for url: {url}. Check the repo id; a private "
                       "or gated repo needs an authenticated user.")
    if repo.gated and token is None:
        raise HubError(401, "GatedRepoError", f"Cannot access gated repo for url: {url}. "
                       f"Access to {repo_id} is restricted: log in with a token of a user "
                       "who accepted its conditions.")
    wanted = revision or "main"
    if wanted not in repo.revisions and wanted not in repo.revisions.values():
        raise HubError(404, "RevisionNotFoundError", f"Invalid rev id: {wanted} for url: "
                       f"{url}.")
    return dict(repo.files)
