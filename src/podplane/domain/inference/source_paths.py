"""The path inside a model source (`s3://<bucket>/<key>`, `fsx:<path>`) descends: no `.` or
`..` segment.

What the path becomes: a download's volume `subPath` (downloads.py), which the Kubernetes API
server refuses with a `..` element (kubernetes pkg/apis/core/validation `ValidateVolumeMounts`
-> `validateLocalDescendingPath`: "must not contain '..'") and where `.` names the volume's
whole root (the whole bucket, not a model); the managed endpoint's `modelLocation`, read under
the role that may read `models/` only; and the S3 prefix an engine streams from, where S3 keeps
`.` and `..` as literal key characters (S3 User Guide, "Naming Amazon S3 objects": keys with
`.` or `..` segments are not normalised, and some tools refuse them). Refused on every face
before anything is planned, as a 422 naming the field.
"""

from __future__ import annotations

from collections.abc import Callable

S3, FSX = "s3://", "fsx:"
DOT_SEGMENTS = (".", "..")


def path_of(source: str) -> str | None:
    """The path part of a bucket or file-system source; None for any other source."""
    if source.startswith(S3):
        return source[len(S3):].partition("/")[2]
    if source.startswith(FSX):
        return source[len(FSX):]
    return None


def dot_segments(path: str) -> bool:
    return any(part in DOT_SEGMENTS for part in path.split("/"))


def refusal(source: str) -> str | None:
    """Why the source's path does not descend (None: it does, or it has no path)."""
    path = path_of(source)
    if path is None or not dot_segments(path):
        return None
    return ("a model source's path may not have . or .. segments (it becomes a volume "
            "subPath, which Kubernetes refuses with '..', and an S3 prefix or a directory "
            "that must name the model itself).")


def descending(field: str) -> Callable[[str | None], str | None]:
    """A pydantic after-validator for the source field `field`: ValueError, which the faces
    answer as a 422 naming the field (api/problems.py)."""
    def check(source: str | None) -> str | None:
        if source is not None and (why := refusal(source)) is not None:
            raise ValueError(why)
        return source
    return check
