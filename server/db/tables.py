"""The database schema: SQLModel tables, grouped by domain. Alembic migrations under
server/db/migrations must follow every change here (see docs/architecture.md)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


# ---------------------------------------------------------------- users and auth


class User(SQLModel, table=True):
    __tablename__ = "users"

    id: str = Field(primary_key=True, max_length=32)
    name: str = Field(index=True, unique=True)
    password_hash: str | None = None
    policy_json: str = "{}"
    configuration_json: str = "{}"
    date_created: datetime = Field(default_factory=utcnow)
    last_login_date: datetime | None = None
    last_activity_date: datetime | None = None
    invalid_login_attempts: int = 0
    primary_image_path: str | None = None
    primary_image_tag: str | None = None


class Device(SQLModel, table=True):
    """A signed-in device: one access token per (user, device id)."""

    __tablename__ = "devices"

    id: int | None = Field(default=None, primary_key=True)
    access_token: str = Field(index=True, unique=True)
    user_id: str = Field(index=True, foreign_key="users.id", ondelete="CASCADE")
    device_id: str = Field(index=True)
    device_name: str = ""
    app_name: str = ""
    app_version: str = ""
    date_created: datetime = Field(default_factory=utcnow)
    date_last_activity: datetime = Field(default_factory=utcnow)


class DeviceOptions(SQLModel, table=True):
    __tablename__ = "device_options"

    device_id: str = Field(primary_key=True)
    custom_name: str | None = None


class ApiKey(SQLModel, table=True):
    __tablename__ = "api_keys"

    id: int | None = Field(default=None, primary_key=True)
    access_token: str = Field(index=True, unique=True)
    name: str
    date_created: datetime = Field(default_factory=utcnow)
    date_last_activity: datetime = Field(default_factory=utcnow)


class DisplayPreferences(SQLModel, table=True):
    __tablename__ = "display_preferences"

    user_id: str = Field(primary_key=True)
    preferences_id: str = Field(primary_key=True)
    client: str = Field(primary_key=True)
    data_json: str = "{}"


# ---------------------------------------------------------------- system


class ActivityLogEntry(SQLModel, table=True):
    __tablename__ = "activity_log"

    id: int | None = Field(default=None, primary_key=True)
    name: str
    overview: str | None = None
    short_overview: str | None = None
    type: str
    item_id: str | None = None
    user_id: str | None = Field(default=None, index=True)
    date: datetime = Field(default_factory=utcnow, index=True)
    severity: str = "Information"


class TaskResult(SQLModel, table=True):
    """The last run of each scheduled task, and its triggers."""

    __tablename__ = "task_results"

    task_key: str = Field(primary_key=True)
    last_result_json: str | None = None
    triggers_json: str | None = None
