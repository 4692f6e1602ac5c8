"""`podplane deploy ...`: helpers for the AWS deployment of deploy/cloudformation (docs/deploy.md).

These run on the operator's machine with the operator's AWS identity, not the control plane's:
the CloudFormation read here is not part of docs/aws-permissions.md (that policy is the control
plane role's), and docs/deploy.md lists what the operator needs instead.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer
from rich.console import Console

deploy_app = typer.Typer(no_args_is_help=True,
                         help="The AWS deployment: a CloudFormation stack (docs/deploy.md).")
err = Console(stderr=True)

# Output keys of deploy/cloudformation/podplane.yaml
COMMAND_OUTPUT = "SsmPortForwardCommand"
SECOND_COMMAND_OUTPUT = "SsmPortForwardCommandB"
CONSOLE_OUTPUT = "ConsoleUrl"


class DeployError(Exception):
    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


def stack_outputs(stack: str, region: str | None) -> dict[str, str]:
    """The stack's outputs through CloudFormation DescribeStacks (its response's
    Stacks[].Outputs[].OutputKey/OutputValue, AWS CloudFormation API Reference)."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

    region = region or os.environ.get("AWS_REGION")
    try:
        client = boto3.client("cloudformation", region_name=region)
        found = client.describe_stacks(StackName=stack)["Stacks"]
    except NoRegionError:
        raise DeployError("no AWS region is configured",
                          "pass --region, or set AWS_REGION or a region in your profile") from None
    except NoCredentialsError:
        raise DeployError("no AWS credentials found",
                          "set AWS_PROFILE or sign in (aws sso login / aws configure)") from None
    except ClientError as e:
        raise _client_error(e, stack, region) from None
    except BotoCoreError as e:
        raise DeployError(f"cannot read the stack: {e}") from None
    if not found:
        raise DeployError(f"no stack named {stack} in {client.meta.region_name}")
    return _outputs(found[0], stack)


def _client_error(e: Any, stack: str, region: str | None) -> DeployError:
    error = e.response.get("Error", {})
    message = str(error.get("Message", e))
    # DescribeStacks answers ValidationError "Stack with id NAME does not exist" for a stack
    # that is missing (or deleted, asked by name).
    if error.get("Code") == "ValidationError" and "does not exist" in message:
        where = region or "the configured region"
        return DeployError(f"no stack named {stack} in {where}",
                           "check the name and --region (aws cloudformation list-stacks)")
    return DeployError(f"{error.get('Code', 'error')}: {message}")


def _outputs(found: dict[str, Any], stack: str) -> dict[str, str]:
    outputs = {o["OutputKey"]: o["OutputValue"] for o in found.get("Outputs", [])}
    if COMMAND_OUTPUT not in outputs:
        status = found.get("StackStatus", "")
        hint = (f"the stack is {status}: wait for CREATE_COMPLETE or UPDATE_COMPLETE"
                if status.endswith("IN_PROGRESS") else
                "is it a podplane stack (deploy/cloudformation/podplane.yaml)?")
        raise DeployError(f"stack {stack} has no {COMMAND_OUTPUT} output ({status})", hint)
    return outputs


@deploy_app.command("print-ssm-command")
def print_ssm_command(
    stack: Annotated[str, typer.Option("--stack", help="The CloudFormation stack's name.")],
    region: Annotated[str | None, typer.Option("--region", help="Its AWS Region.")] = None,
) -> None:
    """Print the `aws ssm start-session` command that forwards the console to localhost:3099."""
    try:
        outputs = stack_outputs(stack, region)
    except DeployError as e:
        err.print(f"[red]error[/red]: {e.message}")
        if e.hint:
            err.print(f"hint: {e.hint}")
        raise typer.Exit(1) from None
    typer.echo(outputs[COMMAND_OUTPUT])
    if SECOND_COMMAND_OUTPUT in outputs:
        err.print(f"or through the second instance: {outputs[SECOND_COMMAND_OUTPUT]}",
                  soft_wrap=True, highlight=False)
    err.print(f"then open {outputs.get(CONSOLE_OUTPUT, 'http://localhost:3099/')}",
              highlight=False)
