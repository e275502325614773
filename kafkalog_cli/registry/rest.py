"""A live Schema Registry through its REST API, for use beside a cluster (``--schema-registry
URL``), with the lookups of the offline :class:`~.store.SchemaStore`:

    GET /schemas/ids/{id}                      {"schema", "schemaType", "references"}
    GET /schemas/ids/{id}/versions             [{"subject", "version"}]
    GET /subjects/{subject}/versions/{version} {"subject", "version", "id", "schema", ...}
    GET /subjects/{subject}/versions           [1, 2, ...]

Basic authentication as the registry clients configure it: ``basic.auth.credentials.source``
``URL`` (the URL's ``user:password@``) or ``USER_INFO`` (``basic.auth.user.info=user:password``;
``schema.registry.basic.auth.user.info`` too). Answers are cached per id and
subject-version; a 404 is "not found"; every other failure raises
:class:`~kafkalog_cli.errors.SchemaRegistryError` (one line naming the URL).
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request

from ..errors import InvalidArgumentError, SchemaRegistryError
from .records import SchemaReference, SchemaValue

#: seconds a request may take
TIMEOUT = 30
#: bytes of one answer read at most
MAX_RESPONSE_BYTES = 64 << 20
#: the properties taken (``--schema-registry-property``)
PROPERTIES = ("basic.auth.credentials.source", "basic.auth.user.info",
              "schema.registry.basic.auth.user.info")


def _auth_header(url: str, props: dict[str, str]) -> tuple[str, str | None]:
    """``(url without credentials, Authorization header or None)``."""
    unknown = set(props) - set(PROPERTIES)
    if unknown:
        raise InvalidArgumentError(f"unknown schema registry property "
                                   f"{', '.join(sorted(unknown))} (expected "
                                   f"{', '.join(PROPERTIES)})")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidArgumentError(f"--schema-registry {url!r}: expected an http:// or "
                                   "https:// URL")
    netloc = parts.hostname + (f":{parts.port}" if parts.port else "")
    bare = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
    source = props.get("basic.auth.credentials.source", "").upper()
    info = props.get("basic.auth.user.info") or props.get(
        "schema.registry.basic.auth.user.info")
    if source not in ("", "URL", "USER_INFO"):
        raise InvalidArgumentError(f"basic.auth.credentials.source {source!r}: expected "
                                   "URL or USER_INFO")
    if source == "USER_INFO" or (not source and info):
        if not info or ":" not in info:
            raise InvalidArgumentError("basic.auth.user.info must be user:password")
        cred = info
    elif parts.username is not None:
        cred = (urllib.parse.unquote(parts.username) + ":"
                + urllib.parse.unquote(parts.password or ""))
    else:
        return bare, None
    return bare, "Basic " + base64.b64encode(cred.encode()).decode()


class RestSchemaSource:
    """Schema lookups against a registry's REST API (see the module docstring)."""

    def __init__(self, url: str, properties: dict[str, str] | None = None):
        self.url, self._auth = _auth_header(url, properties or {})
        self.source = self.url
        self.problems: list[str] = []
        self._by_id: dict = {}
        self._versions: dict = {}
        self._subjects: dict = {}

    def _get(self, path: str):
        req = urllib.request.Request(self.url + path, headers={
            "Accept": "application/vnd.schemaregistry.v1+json, application/json"})
        if self._auth:
            req.add_header("Authorization", self._auth)
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:  # noqa: S310
                data = resp.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise SchemaRegistryError(f"{self.url}{path}: HTTP {e.code} {e.reason}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise SchemaRegistryError(f"{self.url}{path}: {reason}") from None
        if len(data) > MAX_RESPONSE_BYTES:
            raise SchemaRegistryError(f"{self.url}{path}: an answer over "
                                      f"{MAX_RESPONSE_BYTES} bytes")
        try:
            return json.loads(data)
        except ValueError:
            raise SchemaRegistryError(f"{self.url}{path}: the answer is not JSON") from None

    @staticmethod
    def _value(obj: dict, schema_id: int | None = None) -> SchemaValue:
        refs = tuple(SchemaReference(r.get("name", ""), r.get("subject", ""),
                                     r.get("version"))
                     for r in obj.get("references") or () if isinstance(r, dict))
        return SchemaValue(subject=obj.get("subject") or "", version=obj.get("version") or -1,
                           id=obj.get("id", schema_id), schema=obj.get("schema") or "",
                           schema_type=obj.get("schemaType") or "AVRO", references=refs)

    def by_id(self, schema_id: int, context: str = ".") -> SchemaValue | None:
        if schema_id not in self._by_id:
            obj = self._get(f"/schemas/ids/{schema_id}")
            self._by_id[schema_id] = (None if not isinstance(obj, dict)
                                      else self._value(obj, schema_id))
        return self._by_id[schema_id]

    def subjects_of(self, schema_id: int, context: str = ".") -> list[str]:
        if schema_id not in self._subjects:
            obj = self._get(f"/schemas/ids/{schema_id}/versions")
            self._subjects[schema_id] = sorted(
                x["subject"] for x in obj or () if isinstance(x, dict) and "subject" in x)
        return self._subjects[schema_id]

    def version(self, subject: str, version: int | None) -> SchemaValue | None:
        v = "latest" if version is None or version == -1 else str(version)
        key = (subject, v)
        if key not in self._versions:
            obj = self._get(f"/subjects/{urllib.parse.quote(subject, safe='')}/versions/{v}")
            self._versions[key] = None if not isinstance(obj, dict) else self._value(obj)
        return self._versions[key]

    def latest(self, subject: str) -> SchemaValue | None:
        return self.version(subject, None)


class ChainedSource:
    """Lookups in each source in turn (the offline store first, then a live registry):
    the first that knows the answer gives it."""

    def __init__(self, sources: list):
        self.sources = sources
        self.source = " + ".join(s.source for s in sources)

    @property
    def problems(self) -> list[str]:
        return [p for s in self.sources for p in s.problems]

    def _first(self, name, *args):
        for s in self.sources:
            found = getattr(s, name)(*args)
            if found:
                return found
        return None

    def by_id(self, schema_id: int, context: str = "."):
        return self._first("by_id", schema_id, context)

    def subjects_of(self, schema_id: int, context: str = "."):
        return self._first("subjects_of", schema_id, context) or []

    def version(self, subject: str, version: int | None):
        return self._first("version", subject, version)

    def latest(self, subject: str):
        return self._first("latest", subject)
