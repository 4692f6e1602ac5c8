"""MCP rows for dev spaces (included by mcp/tools.py). One REST call each.

An agent makes a space for a user in three calls: space_create, operation_wait, space_get
(its console_path is the link to hand over)."""

from __future__ import annotations

from podplane.domain.names import DNS_LABEL_PATTERN
from podplane.domain.spaces.requests import SPACE_NAME_MAX, SpaceRequest
from podplane.domain.spaces.templates import TemplateRequest
from podplane.mcp.tool import CLUSTER, DRY_RUN, NEXT_CURSOR, Tool, boolean, fields_of, integer, text
from podplane.services import pod_logs
from podplane.services.spaces import access, logs, templates
from podplane.services.spaces import service as spaces

NAME = text("Space.", required=True, pattern=DNS_LABEL_PATTERN, minLength=1,
            maxLength=SPACE_NAME_MAX)
SPACES = "/api/v1/clusters/{cluster}/spaces"
TEMPLATES = "/api/v1/clusters/{cluster}/space-templates"

TOOLS: tuple[Tool, ...] = (
    Tool("space_create", "POST", SPACES, spaces.create_space,
         "Create a JupyterLab space: home volume, bucket at /data /models /outputs as jobs "
         "see it. Done when Running.",
         {"cluster": CLUSTER, **fields_of(SpaceRequest)}),
    Tool("space_list", "GET", SPACES, spaces.list_spaces,
         "List spaces (also hyp's): state, resources, mounts, console_path.",
         {"cluster": CLUSTER}),
    Tool("space_get", "GET", SPACES + "/{name}", spaces.get_space,
         "Get a space: state and why, mounts, pods.", {"cluster": CLUSTER, "name": NAME}),
    Tool("space_set", "PATCH", SPACES + "/{name}", spaces.set_state,
         "Start or stop a space; stopping keeps its home.",
         {"cluster": CLUSTER, "name": NAME,
          "desired": text("Running or Stopped.", required=True,
                          enum=["Running", "Stopped"]), "dry_run": DRY_RUN}),
    Tool("space_delete", "DELETE", SPACES + "/{name}", spaces.delete_space,
         "Delete a space; its home is kept unless delete_home (admin, confirm).",
         {"cluster": CLUSTER, "name": NAME, "delete_home": boolean("Also its home."),
          "confirm": boolean("With delete_home, once the user agreed."),
          "dry_run": DRY_RUN}),
    Tool("space_files", "GET", SPACES + "/{name}/files", access.list_files,
         "List a directory as a running space sees it (e.g. data).",
         {"cluster": CLUSTER, "name": NAME, "path": text("Directory.", maxLength=512)}),
    Tool("space_logs", "GET", SPACES + "/{name}/logs", logs.space_logs,
         "Read a space's server logs, paged like job_logs.",
         {"cluster": CLUSTER, "name": NAME,
          "tail": integer("Last N lines.", minimum=1, maximum=pod_logs.MAX_LINES_PER_POD),
          "cursor": integer(NEXT_CURSOR, minimum=0, maximum=10**7)}),
    Tool("space_template_list", "GET", TEMPLATES, templates.list_templates,
         "List space templates: images, defaults, bounds.", {"cluster": CLUSTER}),
    Tool("space_template_set", "PUT", TEMPLATES + "/{name}", templates.set_template,
         "Create, update or delete a space template (admin).",
         {"cluster": CLUSTER, **fields_of(TemplateRequest)}, returns_operation=False),
)
