"""What ``data_manifest.yaml`` may say: one validated entry per dataset, and the errors of data not there or damaged.

:class:`Manifest` holds one :class:`DatasetEntry` per dataset, each listing its :class:`DataFile` s with their
published checksums; the access kind (:data:`ACCESS_KINDS`) says where the files come from. Reading the manifest is
:mod:`medeval.data.manifest_loading`'s; :mod:`medeval.data.manifest` names the whole data-manifest interface.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ACCESS_KINDS = ("shipped", "bundled", "auto", "manual", "private")


class DatasetUnavailableError(FileNotFoundError):
    """A dataset (or one of its files) is not available locally; the message says how to get it."""


class DatasetCorruptError(DatasetUnavailableError, ValueError):
    """A dataset file is missing, truncated or altered; the message names the dataset, the file(s), what was
    expected and the remedy.

    A :class:`DatasetUnavailableError` (so ``require`` callers and the pre-flight check catch it as before) and a
    ``ValueError`` (so callers of the readers, which raise ValueError for malformed files, catch it too).
    """


class ChecksumError(ValueError):
    """A file's checksum differs from the manifest's; the message names the file and both checksums."""


class DataFile(BaseModel):
    """One file of a dataset."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="repo-relative (shipped) or relative to the dataset directory")
    url: str | None = Field(None, description="download URL (auto datasets)")
    size: int | None = Field(None, ge=0, description="size in bytes, where known")
    sha256: str | None = Field(None, description="sha256 hex digest, where public")
    md5: str | None = Field(None, description="md5 hex digest, where the publisher gives only md5")
    origin: str | None = Field(None, description="where a shipped file was taken from")
    unpack: Literal["untar", "unzip", "gunzip"] | None = Field(None, description="post-download processing")
    unpack_to: str | None = Field(None, description="extraction folder, relative to the dataset directory")
    note: str | None = None

    @field_validator("sha256")
    @classmethod
    def _sha256_hex(cls, v):
        if v is not None and (len(v) != 64 or any(c not in "0123456789abcdef" for c in v)):
            raise ValueError(f"sha256 must be 64 lower-case hex digits, got {v!r}")
        return v

    @field_validator("md5")
    @classmethod
    def _md5_hex(cls, v):
        if v is not None and (len(v) != 32 or any(c not in "0123456789abcdef" for c in v)):
            raise ValueError(f"md5 must be 32 lower-case hex digits, got {v!r}")
        return v

    @property
    def known_hash(self) -> str | None:
        """The strongest published checksum in pooch's ``"algo:hex"`` form, or None."""
        if self.sha256:
            return f"sha256:{self.sha256}"
        if self.md5:
            return f"md5:{self.md5}"
        return None


class DatasetEntry(BaseModel):
    """One dataset of the manifest."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    description: str = ""
    citation: str
    licence: str
    access: Literal["shipped", "bundled", "auto", "manual", "private"]
    homepage: str | None = None
    files: list[DataFile] = Field(default_factory=list)
    layout: str | None = Field(None, description="expected folder layout once obtained")
    instructions: str | None = Field(None, description="how to obtain a manual/private dataset")
    reader: str = Field(description="dotted path of the function/class that reads it")
    stand_in: str = Field(description="what the default profile uses instead")
    notes: str | None = None

    @model_validator(mode="after")
    def _consistent(self):
        if self.access == "shipped":
            if not self.files:
                raise ValueError(f"dataset {self.id!r}: shipped datasets must list their files")
            for f in self.files:
                if not f.sha256 or f.size is None or not f.origin:
                    raise ValueError(
                        f"dataset {self.id!r}: shipped file {f.path!r} needs sha256, size and origin"
                    )
        if self.access == "auto":
            if not self.files:
                raise ValueError(f"dataset {self.id!r}: auto datasets must list their files")
            for f in self.files:
                if not f.url:
                    raise ValueError(f"dataset {self.id!r}: auto file {f.path!r} needs a url")
        if self.access in ("manual", "private") and not self.instructions:
            raise ValueError(f"dataset {self.id!r}: {self.access} datasets need instructions")
        if "." not in self.reader:
            raise ValueError(f"dataset {self.id!r}: reader must be a dotted path, got {self.reader!r}")
        return self


class Manifest(BaseModel):
    """The whole ``data_manifest.yaml``."""

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    datasets: list[DatasetEntry]

    @model_validator(mode="after")
    def _unique_ids(self):
        ids = [d.id for d in self.datasets]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate dataset ids in the manifest: {dupes}")
        return self

    def ids(self) -> list[str]:
        return [d.id for d in self.datasets]
