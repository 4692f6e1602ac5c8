"""`podplane model ...`: models in the cluster's bucket over REST (`cli/table.py`). The
Hugging Face token comes from $HF_TOKEN (or --hf-token), never echoed."""

from __future__ import annotations

from typing import Annotated

import typer

from podplane.cli.groups import CLUSTER, DRY_BODY, WAIT, show_change
from podplane.cli.table import Arg, Command, mount, table

MODELS = "clusters/{cluster}/models"

COMMANDS = (
    Command("list", "GET", MODELS, "Models under s3://<bucket>/models/.", (CLUSTER,),
            show=table(("model", lambda m: m["name"]), ("files", lambda m: m["files"]),
                       ("bytes", lambda m: m["bytes"]),
                       ("complete", lambda m: "yes" if m["complete"] else "no"),
                       ("uri", lambda m: m["uri"]))),
    Command("download", "POST", MODELS,
            "Download a model (Hugging Face id, or s3:// in the cluster's bucket) to "
            "s3://<bucket>/models/<name>/.", (
                CLUSTER,
                Arg("name", Annotated[str, typer.Argument(help="Folder under models/.")],
                    to="body"),
                Arg("source", Annotated[str, typer.Option(
                    "--source", help="Hugging Face id, or s3://<bucket>/<prefix>.")],
                    to="body"),
                Arg("revision", Annotated[str | None, typer.Option(
                    "--revision", help="Branch, tag or commit.")], None, to="body"),
                Arg("hf_token", Annotated[str | None, typer.Option(
                    "--hf-token", envvar="HF_TOKEN", show_default=False,
                    help="Hugging Face token (default: $HF_TOKEN).")], None, to="body"),
                DRY_BODY, WAIT), show=show_change),
)


def install(app: typer.Typer) -> None:
    app.add_typer(mount(typer.Typer(no_args_is_help=True, help="Download models to the "
                                    "cluster's bucket and list them."), COMMANDS), name="model")
