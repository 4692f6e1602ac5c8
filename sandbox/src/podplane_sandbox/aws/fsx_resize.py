"""FSx for Lustre storage capacity increases (UpdateFileSystem `StorageCapacity`).

Rules, from the botocore `fsx` model (UpdateFileSystemRequest.StorageCapacity,
AdministrativeAction, AdministrativeActionType, Status) and the FSx for Lustre User Guide,
"Managing storage capacity":

- capacity only grows: the target must be greater than the current capacity (no decrease);
- SCRATCH_2 / PERSISTENT_1 / PERSISTENT_2 SSD targets are multiples of 2400 GiB, so the
  smallest increase is to the next multiple; SCRATCH_1 cannot be increased at all;
- one storage update at a time: no request while an earlier increase is in progress (its
  FILE_SYSTEM_UPDATE not yet COMPLETED), and none within 6 hours of the last request
  (User Guide, "Time between increases");
- progress shows in DescribeFileSystems `AdministrativeActions`: FILE_SYSTEM_UPDATE
  (`TargetFileSystemValues.StorageCapacity`) IN_PROGRESS while the file system is UPDATING;
  once the new servers are added the capacity is the target, the file system AVAILABLE, the
  update UPDATED_OPTIMIZING, and a STORAGE_OPTIMIZATION action rebalances data with a
  `ProgressPercent`; when that completes, both are COMPLETED.

The durations are the sandbox's (AWS gives none): SCALE_SECONDS to add servers, then
OPTIMIZE_SECONDS_PER_STEP per 2400 GiB added.
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws.errors import AwsError

SCALE_SECONDS = 10 * 60.0
OPTIMIZE_SECONDS_PER_STEP = 10 * 60.0
SPACING_SECONDS = 6 * 3600.0
SSD_INCREMENT = 2400
UPDATE = "FILE_SYSTEM_UPDATE"
OPTIMIZE = "STORAGE_OPTIMIZATION"
EMULATED = {"FileSystemId", "ClientRequestToken", "StorageCapacity"}


def bad_request(message: str) -> AwsError:
    return AwsError("BadRequest", message)


def start_update(fs: dict[str, Any], p: dict[str, Any], now: float) -> None:
    """Check an increase against FSx's rules and start it; refused requests change nothing."""
    others = sorted(set(p) - EMULATED)
    if others:
        raise AwsError("UnsupportedOperation", "The podplane sandbox emulates storage "
                       f"capacity increases only, not {', '.join(others)}.")
    target = p.get("StorageCapacity")
    if target is None:
        raise bad_request("No update was requested: StorageCapacity is missing.")
    if fs["Lifecycle"] != "AVAILABLE" or _in_progress(fs):
        raise bad_request("Unable to perform the storage capacity update. There is an "
                          "existing storage capacity update in progress." if _in_progress(fs)
                          else f"File system {fs['FileSystemId']} is {fs['Lifecycle']}, not "
                          "AVAILABLE.")
    last = fs.get("_last_update_request")
    if last is not None and now < last + SPACING_SECONDS:
        raise bad_request("A storage capacity increase was requested less than 6 hours ago; "
                          "try again after 6 hours have passed since the last increase.")
    _check_target(fs, int(target))
    fs["AdministrativeActions"] = [{
        "AdministrativeActionType": UPDATE, "RequestTime": now, "Status": "IN_PROGRESS",
        "TargetFileSystemValues": {"StorageCapacity": int(target)}}]
    fs.update(Lifecycle="UPDATING", _last_update_request=now, _scaled_at=now + SCALE_SECONDS)


def _check_target(fs: dict[str, Any], target: int) -> None:
    deployment = (fs.get("LustreConfiguration") or {}).get("DeploymentType")
    current = int(fs["StorageCapacity"])
    if deployment == "SCRATCH_1":
        raise bad_request("Storage capacity of SCRATCH_1 file systems can't be increased.")
    if target <= current:
        raise bad_request(f"The new storage capacity {target} GiB must be greater than the "
                          f"current storage capacity {current} GiB; storage capacity can "
                          "only be increased.")
    if target % SSD_INCREMENT:
        raise bad_request(f"Invalid StorageCapacity {target} GiB for {deployment} SSD: the "
                          f"value must be a multiple of {SSD_INCREMENT} GiB.")


def _in_progress(fs: dict[str, Any]) -> bool:
    return any(a["AdministrativeActionType"] == UPDATE and a["Status"] not in
               ("COMPLETED", "FAILED") for a in fs.get("AdministrativeActions") or [])


def advance_update(fs: dict[str, Any], now: float) -> None:
    """Move a running increase along the virtual clock (scale, then optimize)."""
    actions = fs.get("AdministrativeActions") or []
    update = next((a for a in actions if a["AdministrativeActionType"] == UPDATE), None)
    if update is None or update["Status"] in ("COMPLETED", "FAILED"):
        return
    if update["Status"] == "IN_PROGRESS" and now >= fs["_scaled_at"]:
        target = update["TargetFileSystemValues"]["StorageCapacity"]
        added = max(1, (target - int(fs["StorageCapacity"])) // SSD_INCREMENT)
        scaled = fs["_scaled_at"]   # the clock may pass several transitions in one tick
        fs.update(StorageCapacity=target, Lifecycle="AVAILABLE", _optimize_from=scaled,
                  _optimized_at=scaled + added * OPTIMIZE_SECONDS_PER_STEP)
        update["Status"] = "UPDATED_OPTIMIZING"
        actions.append({"AdministrativeActionType": OPTIMIZE, "RequestTime": scaled,
                        "Status": "IN_PROGRESS", "ProgressPercent": 0})
    optimize = next((a for a in actions if a["AdministrativeActionType"] == OPTIMIZE), None)
    if optimize is None:
        return
    start, end = fs["_optimize_from"], fs["_optimized_at"]
    if now >= end:
        optimize.update(Status="COMPLETED", ProgressPercent=100)
        update["Status"] = "COMPLETED"
    else:
        optimize["ProgressPercent"] = int(100 * (now - start) / (end - start))
