"""MCP rows for training jobs (included by mcp/tools.py). One REST call each.

An agent submits a job in at most five calls: job_recipes (choose, read the parameters),
job_submit with dry_run (the plan: GPUs free, Spot, outputs), job_submit, operation_wait,
job_get."""

from __future__ import annotations

from podplane.domain.jobs.requests import JOB_NAME_MAX, JobRequest
from podplane.domain.names import DNS_LABEL_PATTERN
from podplane.mcp.tool import Tool, fields_of, integer, text
from podplane.mcp.tools_nodes import CLUSTER, DRY_RUN
from podplane.services import pod_logs as logs_room
from podplane.services.jobs import service as jobs

JOB = text("The job's name.", required=True, pattern=DNS_LABEL_PATTERN, minLength=1,
           maxLength=JOB_NAME_MAX)
JOBS = "/api/v1/clusters/{cluster}/jobs"

TOOLS: tuple[Tool, ...] = (
    Tool("job_recipes", "GET", "/api/v1/recipes", jobs.list_recipes,
         "List training recipes (PyTorch DDP/FSDP, LLaMA-Factory SFT/LoRA, MS-Swift SFT): "
         "framework, image, job kind, parameters with defaults and bounds, and the shared "
         "data paths (/data, /models, /checkpoints, /outputs)."),
    Tool("job_list", "GET", JOBS, jobs.list_jobs,
         "List the cluster's training jobs (HyperPodPyTorchJob and PyTorchJob, also those "
         "submitted with `hyp` or kubectl) with their status.", {"cluster": CLUSTER}),
    Tool("job_submit", "POST", JOBS, jobs.submit_job,
         "Submit a training job from a recipe onto an instance group; its GPUs must fit the "
         "group's free GPUs (elastic: not on Spot). dry_run=true: the plan only.",
         {"cluster": CLUSTER, **fields_of(JobRequest)}),
    Tool("job_get", "GET", JOBS + "/{job}", jobs.get_job,
         "Get a job: status, restart budget and restarts spent, the last fault (which node, "
         "why), each pod with its node and that node's health verdict, output prefixes.",
         {"cluster": CLUSTER, "job": JOB}),
    Tool("job_logs", "GET", JOBS + "/{job}/logs", jobs.job_logs,
         "Read a job's logs: every pod or one, bounded and paged (pass next_cursor back).",
         {"cluster": CLUSTER, "job": JOB,
          "pod": text("Only this pod.", pattern=DNS_LABEL_PATTERN, maxLength=253),
          "container": text("Only this container.", pattern=DNS_LABEL_PATTERN, maxLength=63),
          "since_seconds": integer("Only lines newer than this.", minimum=1,
                                   maximum=30 * 86400),
          "tail": integer("Only the last N lines of each pod.", minimum=1,
                          maximum=logs_room.MAX_LINES_PER_POD),
          "cursor": integer("next_cursor from the previous page.", minimum=0, maximum=10**7),
          "limit": integer("Lines per page.", minimum=1, maximum=logs_room.MAX_PAGE,
                           default=logs_room.PAGE)}),
    Tool("job_events", "GET", JOBS + "/{job}/events", jobs.job_events,
         "Kubernetes events of a job and its pods: scheduling, restarts after faults, "
         "failures.", {"cluster": CLUSTER, "job": JOB}),
    Tool("job_cancel", "POST", JOBS + "/{job}/cancel", jobs.cancel_job,
         "Stop a running job (its pods are deleted; the job stays to be read).",
         {"cluster": CLUSTER, "job": JOB, "dry_run": DRY_RUN}),
    Tool("job_delete", "DELETE", JOBS + "/{job}", jobs.delete_job,
         "Delete a job with its pods and logs; checkpoints and outputs in the bucket stay.",
         {"cluster": CLUSTER, "job": JOB, "dry_run": DRY_RUN}),
)
