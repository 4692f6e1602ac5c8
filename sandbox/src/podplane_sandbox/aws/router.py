"""The one HTTP endpoint: `/_sandbox` control, our EKS / HyperPod / Service Quotas emulators,
and moto for everything else. A WSGI app (moto is WSGI), served threaded by werkzeug."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any, cast
from urllib.parse import parse_qs

from podplane_sandbox.aws import iam_simulate, mlflow_tracking, protocol, s3_rules
from podplane_sandbox.aws.amp import SIGNING_NAME as AMP_SIGNING
from podplane_sandbox.aws.base import Emulator
from podplane_sandbox.aws.callers import access_key_of, caller_of, sts_get_caller_identity
from podplane_sandbox.aws.ec2_rules import Ec2Rules
from podplane_sandbox.aws.errors import AwsError
from podplane_sandbox.aws.fsx import TARGET_PREFIX as FSX_TARGET
from podplane_sandbox.aws.moto_faults import injected_error
from podplane_sandbox.aws.world import World
from podplane_sandbox.guard import Guard

log = logging.getLogger("podplane_sandbox")
SCOPE = re.compile(r"Credential=[^/]+/\d+/[^/]+/([^/]+)/aws4_request")
EKS_PATHS = ("/clusters", "/addons", "/access-policies", "/cluster-versions")
READ_PREFIXES = ("Describe", "List", "Get", "Search", "Head", "Lookup", "Check", "Validate")
Response = tuple[int, dict[str, str], bytes]
_XML_ID = re.compile(rb"<(\w*(?:Id|Arn|Name))>([^<]{1,256})</\1>")
_RESOURCE_ID = re.compile(r"^(arn:|[a-z]+(-[a-z]+)?-[0-9a-f]{8,}$)")


class AwsRouter:
    def __init__(self, world: World, eks: Emulator, sagemaker: Emulator, quotas: Emulator,
                 moto_app: Any, control: Any, on_mutation: Callable[[bool], None],
                 guard: Guard | None = None, fsx: Emulator | None = None,
                 amp: Emulator | None = None,
                 mlflow: Emulator | None = None) -> None:
        self.w, self.eks, self.sm, self.quotas = world, eks, sagemaker, quotas
        self.fsx = fsx  # FSx for Lustre file systems (aws/fsx.py); else moto's
        self.amp = amp  # Prometheus workspaces (aws/amp.py); else moto's
        self.mlflow = mlflow  # SageMaker MLflow tracking servers (aws/mlflow.py)
        self.control, self.on_mutation = control, on_mutation
        self.moto_app = Ec2Rules(world, moto_app)  # EC2 dependencies and slow deletes
        self.guard = guard

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        body = _read_body(environ)
        path = environ.get("PATH_INFO", "/")
        refused = self.guard.refuse(environ, path) if self.guard else None
        if refused is not None:  # foreign Host or Origin, or a control call without the secret
            start_response(_status_line(refused[0]), list(refused[1].items()))
            return [refused[2]]
        try:
            if path.startswith("/_sandbox"):
                status, headers, out = self.control.handle(
                    environ["REQUEST_METHOD"], path, environ.get("QUERY_STRING", ""), body)
            else:
                routed = self._ours(environ, path, body)
                if routed is None:
                    with self.w.lock:
                        routed = injected_error(self.w.faults, _scope_service(environ),
                                                environ, body)
                if routed is None and _scope_service(environ) in ("sts", None):
                    routed = sts_get_caller_identity(environ, body)  # moto: `user/moto`
                if routed is None:
                    return self._moto(environ, body, start_response)
                status, headers, out = routed
        except NotImplementedError as e:  # moto lacks it: say so, and 501 is not retried
            status, headers, out = protocol.json_error(AwsError(
                "NotImplemented", f"{e} in the podplane sandbox (moto)", 501), False)
        except Exception:  # never a traceback to a client
            log.exception("sandbox request failed: %s %s", environ["REQUEST_METHOD"], path)
            status, headers, out = protocol.json_error(
                AwsError("InternalFailure", "The sandbox hit an internal error.", 500), True)
        start_response(_status_line(status), list(headers.items()))
        return [out]

    # our emulators -------------------------------------------------------------------------
    def _ours(self, environ: dict[str, Any], path: str, body: bytes) -> Response | None:
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        if mlflow_tracking.handles(path):  # a tracking server's MLflow REST API
            return mlflow_tracking.serve(self.w, environ, body)
        for prefix, service, emu in (("SageMaker.", "sagemaker", self.mlflow),
                                     ("SageMaker.", "sagemaker", self.sm),
                                     ("ServiceQuotasV20190624.", "service-quotas", self.quotas),
                                     (FSX_TARGET, "fsx", self.fsx)):
            if emu is not None and target.startswith(prefix):
                action = target.split(".", 1)[1]
                with self.w.lock:
                    mine = emu.accepts(action, _json_or_empty(body))
                if mine:
                    return self._json11(service, emu, action, body)
                if emu is not self.mlflow:  # a SageMaker call MLflow's emulator passed on
                    return None
        scope_service = _scope_service(environ)
        if scope_service is None and not path.startswith(EKS_PATHS):
            with self.w.lock:
                refused = s3_rules.refuse_anonymous(environ)
            if refused is not None:
                return refused
        if scope_service == "s3":
            with self.w.lock:
                s3_rules.prepare(environ)
                s3_rules.short_pages(environ, self.w.faults)
                return s3_rules.refuse_wrong_owner(environ)
        if scope_service == "iam" and iam_simulate.handles(_form(body)):  # moto has none
            with self.w.lock:
                return iam_simulate.simulate(body)
        if scope_service == "eks" or (scope_service is None and path.startswith(EKS_PATHS)):
            return self._rest_eks(environ, path, body)
        if scope_service == AMP_SIGNING and self.amp is not None:
            return self._rest_eks(environ, path, body, "amp", self.amp, "ValidationException")
        return None

    def _json11(self, service: str, emu: Emulator, action: str, body: bytes) -> Response:
        op = protocol.service_model(service).operation_model(action)
        try:
            params = json.loads(body or b"{}")
            protocol.validate(op, params, "ValidationException")
            result = self._run(emu, action, params)
            return protocol.json_ok(result, rest=False)
        except AwsError as err:
            return protocol.json_error(err, rest=False)
        except json.JSONDecodeError:
            return protocol.json_error(AwsError("SerializationException", "Invalid JSON body"),
                                       rest=False)

    def _rest_eks(self, environ: dict[str, Any], path: str, body: bytes, service: str = "eks",
                  emu: Emulator | None = None,
                  invalid: str = "InvalidParameterException") -> Response:
        """A rest-json request for EKS (or another rest-json emulator: `service`, `emu`)."""
        emu = emu or self.eks
        # match on the raw path: ARNs in the path carry %2F, which PATH_INFO has decoded
        raw = environ.get("RAW_URI") or environ.get("REQUEST_URI") or path
        matched = protocol.match_rest(service, environ["REQUEST_METHOD"], raw.split("?")[0])
        if matched is None or not emu.handles(matched[0]):
            what = matched[0] if matched else path
            return protocol.json_error(AwsError(
                "InvalidRequestException", f"{what} is not emulated by the podplane sandbox.",
                400), rest=True)
        action, uri = matched
        op = protocol.service_model(service).operation_model(action)
        try:
            params = protocol.parse_rest(op, uri, environ.get("QUERY_STRING", ""), body)
            protocol.validate(op, params, invalid)
            params["_caller"] = _caller_arn(environ)  # EKS acts on behalf of the signer
            return protocol.json_ok(self._run(emu, action, params), rest=True)
        except AwsError as err:
            return protocol.json_error(err, rest=True)
        except json.JSONDecodeError:
            return protocol.json_error(AwsError("SerializationException", "Invalid JSON body"),
                                       rest=True)

    def _run(self, emu: Emulator, action: str, params: dict[str, Any]) -> dict[str, Any]:
        with self.w.lock:
            self.w.tick()
            before = len(self.w.ledger.entries)
            try:
                return emu.call(action, params)
            finally:
                if len(self.w.ledger.entries) != before:
                    self.on_mutation(False)

    # moto ----------------------------------------------------------------------------------
    def _moto(self, environ: dict[str, Any], body: bytes, start_response: Any) -> Iterable[bytes]:
        captured: dict[str, Any] = {}

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            captured["status"] = int(status.split()[0])
            return start_response(status, headers, exc_info)

        with self.w.lock:  # moto's backends are plain dicts; persistence pickles them
            chunks = list(self.moto_app(environ, capture))
        action = _moto_action(environ, body)
        if action and captured.get("status", 500) < 400:
            service = _scope_service(environ) or "unknown"
            with self.w.lock:
                self.w.record(service, action, _moto_target(environ, b"".join(chunks)),
                              _client_token(environ, body))
            self.on_mutation(True)
        return chunks


def _caller_arn(environ: dict[str, Any]) -> str | None:
    key = access_key_of(environ.get("HTTP_AUTHORIZATION"))
    caller = caller_of(key) if key else None
    return caller.principal_arn if caller else None


def _json_or_empty(body: bytes) -> dict[str, Any]:
    try:
        value = json.loads(body or b"{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _form(body: bytes) -> dict[str, list[str]]:
    return parse_qs(body.decode("utf-8", "replace")) if body else {}


def _read_body(environ: dict[str, Any]) -> bytes:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    stream = environ["wsgi.input"]
    if length:
        body = stream.read(length)
    elif environ.get("HTTP_TRANSFER_ENCODING", "").lower() == "chunked":
        body = stream.read()
    else:
        body = b""
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    return bytes(body)


def _scope_service(environ: dict[str, Any]) -> str | None:
    m = SCOPE.search(environ.get("HTTP_AUTHORIZATION", ""))
    return m.group(1) if m else None


def _moto_action(environ: dict[str, Any], body: bytes) -> str | None:
    """The mutating action of a moto-bound request, or None for reads."""
    target = environ.get("HTTP_X_AMZ_TARGET", "")
    method = environ["REQUEST_METHOD"]
    if target:
        action = target.split(".", 1)[-1]
    elif _scope_service(environ) == "s3" or method in ("PUT", "DELETE"):
        return _s3_action(method, environ.get("PATH_INFO", "/"))
    else:
        form = parse_qs(body.decode("utf-8", "replace")) if body else {}
        form.update(parse_qs(environ.get("QUERY_STRING", "")))
        action = (form.get("Action") or [""])[0]
    if not action or action.startswith(READ_PREFIXES):
        return None
    return cast("str", action)


def _s3_action(method: str, path: str) -> str | None:
    if method in ("GET", "HEAD"):
        return None
    on_object = "/" in path.strip("/")
    names = {("PUT", False): "CreateBucket", ("PUT", True): "PutObject",
             ("DELETE", False): "DeleteBucket", ("DELETE", True): "DeleteObject"}
    return names.get((method, on_object), "PostObject" if on_object else "DeleteObjects")


def _moto_target(environ: dict[str, Any], response: bytes) -> str | None:
    """What a moto mutation acted on: the S3 path, else the first id/ARN/name it returned."""
    if _scope_service(environ) == "s3":
        return str(environ.get("PATH_INFO"))
    found = [(m.group(1).lower(), m.group(2).decode("utf-8", "replace"))
             for m in _XML_ID.finditer(response)]
    found = [(k, v) for k, v in found if k not in (b"requestid", b"ownerid")]
    for _, value in found:  # a resource id (vpc-..., subnet-...) or an ARN first
        if _RESOURCE_ID.match(value):
            return value
    if found:
        return found[0][1]
    try:
        data = json.loads(response) if response.strip().startswith(b"{") else {}
    except json.JSONDecodeError:
        return None
    return _json_id(data, depth=2)


def _json_id(data: Any, depth: int) -> str | None:
    if not isinstance(data, dict) or depth == 0:
        return None
    for key, value in data.items():
        if isinstance(value, str) and key.endswith(("Arn", "Id", "Name")):
            return value
    for value in data.values():
        found = _json_id(value, depth - 1)
        if found:
            return found
    return None


def _client_token(environ: dict[str, Any], body: bytes) -> str | None:
    text = body.decode("utf-8", "replace") if body else ""
    tokens = parse_qs(text).get("ClientToken")
    return tokens[0] if tokens else None


def _status_line(status: int) -> str:
    reasons = {200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request",
               401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 409: "Conflict",
               429: "Too Many Requests",
               500: "Internal Server Error", 501: "Not Implemented"}
    return f"{status} {reasons.get(status, 'Status')}"
