"""Who made the request being served: kube-apiserver passes the authenticated user to
admission (`admission.Attributes.GetUserInfo`), which mutating webhooks read from the
AdmissionReview's `request.userInfo`. The gate sets it per request (gate.py); admission
hooks of the sandbox read it here. Empty for the sandbox's own controllers' writes."""

from __future__ import annotations

from contextvars import ContextVar

USER: ContextVar[str] = ContextVar("kube_requester", default="")


def current() -> str:
    return USER.get()
