"""Table models. Times are timezone-aware UTC."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class TokenModel(Base):
    __tablename__ = "tokens"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class SessionModel(Base):
    __tablename__ = "sessions"
    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    token_id: Mapped[str] = mapped_column(ForeignKey("tokens.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class AuditModel(Base):
    __tablename__ = "audit"
    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    principal: Mapped[str] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(16))
    face: Mapped[str] = mapped_column(String(8))
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(String(256))
    result: Mapped[str] = mapped_column(String(32))
    operation_id: Mapped[str | None] = mapped_column(String(40))
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class OperationModel(Base):
    __tablename__ = "operations"
    # One mutating operation per target: `active_target` holds the target while the operation
    # is pending or running and is NULL otherwise; the unique index is the lock.
    __table_args__ = (Index("ux_operations_active_target", "active_target", unique=True),)
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    kind: Mapped[str] = mapped_column(String(64), index=True)
    target: Mapped[str] = mapped_column(String(256), index=True)
    status: Mapped[str] = mapped_column(String(16), index=True)
    requested_face: Mapped[str] = mapped_column(String(8))
    requested_by: Mapped[str] = mapped_column(String(64))
    idempotency_key: Mapped[str | None] = mapped_column(String(256), unique=True)
    request_hash: Mapped[str] = mapped_column(String(64))
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    mutating: Mapped[bool] = mapped_column(Boolean, default=True)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    active_target: Mapped[str | None] = mapped_column(String(256))
    # Bumped on every change: watchers compare it to know something moved.
    revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class StepModel(Base):
    __tablename__ = "operation_steps"
    operation_id: Mapped[str] = mapped_column(
        ForeignKey("operations.id", ondelete="CASCADE"), primary_key=True
    )
    idx: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    phase: Mapped[str | None] = mapped_column(String(32))
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # What a resumed step needs to inspect instead of re-calling: client token, names, ids.
    checkpoint: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class StepEventModel(Base):
    """Append-only history of every step transition, shown as the step's history."""

    __tablename__ = "operation_step_events"
    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )
    operation_id: Mapped[str] = mapped_column(
        ForeignKey("operations.id", ondelete="CASCADE"), index=True
    )
    step: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    status: Mapped[str] = mapped_column(String(16))
    phase: Mapped[str | None] = mapped_column(String(32))
    attempt: Mapped[int] = mapped_column(Integer)
    message: Mapped[str | None] = mapped_column(Text)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class WriteFenceModel(Base):
    """One row: a counter every step end moves in its own transaction (ADR 0013). Its row lock
    orders the marks as their transactions commit, so a reader on any replica that reads mark
    M has seen every step end up to M."""

    __tablename__ = "write_fence"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    mark: Mapped[int] = mapped_column(BigInteger)


class PreferenceModel(Base):
    """Per-principal preferences such as the current cluster (never process-global)."""

    __tablename__ = "preferences"
    principal: Mapped[str] = mapped_column(String(64), primary_key=True)
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class ClusterModel(Base):
    """A cluster podplane manages (created or imported). The cloud stays the source of truth
    for state; this row holds identity, origin and the facts needed to reach the cluster."""

    __tablename__ = "clusters"
    name: Mapped[str] = mapped_column(String(63), primary_key=True)
    region: Mapped[str] = mapped_column(String(32))
    eks_cluster_name: Mapped[str] = mapped_column(String(100))
    hyperpod_cluster_name: Mapped[str | None] = mapped_column(String(63))
    origin: Mapped[str] = mapped_column(String(16))      # created | imported
    state: Mapped[str] = mapped_column(String(16))       # creating | active | failed | deleting
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    facts: Mapped[dict[str, Any]] = mapped_column(JSON)  # vpc, subnets, security group, bucket
    operation_id: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class FeatureModel(Base):
    """A managed feature's desired state on one cluster (services/features)."""

    __tablename__ = "features"
    cluster: Mapped[str] = mapped_column(String(63), primary_key=True)
    feature: Mapped[str] = mapped_column(String(64), primary_key=True)
    enabled: Mapped[bool] = mapped_column(Boolean)
    settings: Mapped[dict[str, Any]] = mapped_column(JSON)
    updated_by: Mapped[str] = mapped_column(String(128))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
