"""MCP rows for training jobs (included by mcp/tools.py). One REST call each.

An agent submits a job in at most five calls: job_recipes (choose, read the parameters),
job_submit with dry_run (the plan: GPUs free, Spot, outputs), job_submit, operation_wait,
job_get."""

from __future__ import annotations

from podplane.domain.jobs.requests import JOB_NAME_MAX, JobRequest
from podplane.domain.names import DNS_LABEL_PATTERN
from podplane.mcp.tool import CLUSTER, DRY_RUN, NEXT_CURSOR, Tool, fields_of, integer, text
from podplane.services import pod_logs as logs_room
from podplane.services.jobs import service as jobs

JOB = text("Job.", required=True, pattern=DNS_LABEL_PATTERN, minLength=1,
           maxLength=JOB_NAME_MAX)
JOBS = "/api/v1/clusters/{cluster}/jobs"

TOOLS: tuple[Tool, ...] = (
    Tool("job_recipes", "GET", "/api/v1/recipes", jobs.list_recipes,
         "Training recipes (PyTorch DDP/FSDP, LLaMA-Factory SFT/LoRA, MS-Swift SFT): "
         "framework, image, job kind, parameters with defaults and bounds, shared data paths."),
    Tool("job_list", "GET", JOBS, jobs.list_jobs,
         "The cluster's training jobs with their status, also those submitted with `hyp` or "
         "kubectl.", {"cluster": CLUSTER}),
    Tool("job_submit", "POST", JOBS, jobs.submit_job,
         "Submit a training job from a recipe, or your own `container`, onto an instance "
         "group; its GPUs must fit the group's free GPUs.",
         {"cluster": CLUSTER, **fields_of(JobRequest)}),
    Tool("job_get", "GET", JOBS + "/{job}", jobs.get_job,
         "A job: status, restarts spent of its budget, the last fault (node, why), each pod "
         "with its node and that node's health, output prefixes.",
         {"cluster": CLUSTER, "job": JOB}),
    Tool("job_logs", "GET", JOBS + "/{job}/logs", jobs.job_logs,
         "A job's logs, every pod or one, bounded and paged.",
         {"cluster": CLUSTER, "job": JOB,
          "pod": text("Only this pod.", pattern=DNS_LABEL_PATTERN, maxLength=253),
          "container": text("Only this container.", pattern=DNS_LABEL_PATTERN, maxLength=63),
          "since_seconds": integer("Only the last N seconds.", minimum=1,
                                   maximum=30 * 86400),
          "tail": integer("Last N lines per pod.", minimum=1,
                          maximum=logs_room.MAX_LINES_PER_POD),
          "cursor": integer(NEXT_CURSOR, minimum=0, maximum=10**7),
          "limit": integer("Lines per page.", minimum=1, maximum=logs_room.MAX_PAGE,
                           default=logs_room.PAGE)}),
    Tool("job_events", "GET", JOBS + "/{job}/events", jobs.job_events,
         "Kubernetes events of a job and its pods: scheduling, restarts, failures.",
         {"cluster": CLUSTER, "job": JOB}),
    Tool("job_cancel", "POST", JOBS + "/{job}/cancel", jobs.cancel_job,
         "Stop a running job: its pods go, the job stays to be read.",
         {"cluster": CLUSTER, "job": JOB, "dry_run": DRY_RUN}),
    Tool("job_delete", "DELETE", JOBS + "/{job}", jobs.delete_job,
         "Delete a job with its pods and logs; its checkpoints and outputs in the bucket stay.",
         {"cluster": CLUSTER, "job": JOB, "dry_run": DRY_RUN}),
)
