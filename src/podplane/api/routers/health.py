"""Liveness without auth: the only public API route."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from podplane import __version__

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: str
    version: str


@router.get("/health", response_model=Health)
async def health() -> Health:
    return Health(status="ok", version=__version__)
