"""A small generic encoder of Kafka's generated messages, driven by Kafka's own JSON message
definitions, written for the tests and independent of kafkalog's decoder (it imports
nothing from ``kafkalog_cli``).

It follows Kafka's ``generator`` module: ``MessageDataGenerator`` for the bytes (a field is
present at version v when v is in its ``versions``; in a flexible version strings, bytes
and arrays are compact and every struct ends with its tagged fields, written in tag order
when they differ from their default; a nullable struct has an int8 marker) and
``JsonConverterGenerator`` for the JSON Kafka's tools print (camelCase names, bytes in
base64, uuids as ``Uuid.toString``, tagged fields only when they differ from their
default).

Definitions are read from ``../shared/research/kafka-messages`` (Apache Kafka's files,
``//`` comments stripped); :func:`definition` also takes a definition written inline in
the same JSON shape.
"""

from __future__ import annotations

import base64
import json
import re
import struct
from pathlib import Path

RESEARCH = (Path(__file__).parents[2] / "../shared/research/kafka-messages").resolve()

MAX = 0x7FFF


# -- definitions ------------------------------------------------------------------------------

def load(path: Path) -> dict:
    """A JSON definition file, its ``//`` comment lines stripped."""
    text = re.sub(r"^\s*//.*$", "", path.read_text(encoding="utf-8"), flags=re.M)
    return definition(json.loads(text))


def research_files() -> list[Path]:
    """Every definition in the research folder ([] when it is absent)."""
    if not RESEARCH.is_dir():
        return []
    return sorted(RESEARCH.glob("*/*.json"))


def versions(text) -> tuple[int, int]:
    """A version range (``"0+"``, ``"1-3"``, ``"2"``, ``"none"``) as (low, high); empty
    when low > high."""
    text = (text or "none").strip() if isinstance(text, str) or text is None else str(text)
    if text == "none":
        return (1, 0)
    if text.endswith("+"):
        return (int(text[:-1]), MAX)
    if "-" in text:
        lo, hi = text.split("-")
        return (int(lo), int(hi))
    return (int(text), int(text))


def has(rng: tuple[int, int], v: int) -> bool:
    return rng[0] <= v <= rng[1]


def camel(name: str) -> str:
    """FieldSpec.camelCaseName."""
    return name[:1].lower() + name[1:]


def snake_upper(name: str) -> str:
    """MessageGenerator.toSnakeCase, upper-cased (MetadataRecordType's constant names)."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0 and not name[i - 1].isupper():
            out.append("_")
        out.append(ch.upper())
    return "".join(out)


def definition(d: dict) -> dict:
    """Normalise a JSON definition: every field gets ``_versions``, ``_nullable``,
    ``_tagged`` ranges, ``_name`` (camelCase), ``_elem`` (element type), ``_array``,
    ``_fields`` (a struct's fields, common structs resolved)."""
    common = {cs["name"]: cs["fields"] for cs in d.get("commonStructs", [])}

    def norm(fields):
        out = []
        for f in fields:
            f = dict(f)
            tagged = versions(f.get("taggedVersions"))
            f["_versions"] = versions(f.get("versions") or f.get("taggedVersions"))
            f["_nullable"] = versions(f.get("nullableVersions"))
            f["_tagged"] = tagged
            f["_name"] = camel(f["name"])
            t = f["type"]
            f["_array"] = t.startswith("[]")
            f["_elem"] = t[2:] if f["_array"] else t
            sub = f.get("fields") or common.get(f["_elem"])
            f["_fields"] = norm(sub) if sub is not None else None
            if f["_fields"] is None and f["_elem"] not in SCALARS and \
                    f["_elem"] not in ("string", "bytes", "records"):
                raise ValueError(f"{d['name']}.{f['name']}: unknown type {t}")
            out.append(f)
        return out

    d = dict(d)
    d["_valid"] = versions(d["validVersions"])
    d["_flexible"] = versions(d.get("flexibleVersions"))
    d["_fields"] = norm(d.get("fields", []))
    return d


SCALARS = {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "uuid"}


def default(f: dict):
    """The field's default (FieldSpec.fieldDefault): its ``default`` or the type's zero;
    null where the JSON says "null"; a fresh empty list for arrays; None for a struct (the
    tests compare structs field by field)."""
    d = f.get("default")
    if d == "null" or (d is None and "default" in f):
        return None
    if f["_array"]:
        return []
    if f["_fields"] is not None:
        return None
    t = f["_elem"]
    if d is None:
        return {"bool": False, "float64": 0.0, "uuid": "AAAAAAAAAAAAAAAAAAAAAA", "string": "",
                "bytes": b"", "records": b""}.get(t, 0)
    if t == "bool":
        return d if isinstance(d, bool) else str(d).lower() == "true"
    if t == "float64":
        return float(d)
    if t in ("string",):
        return d
    return int(d, 0) if isinstance(d, str) else int(d)


# -- encoding (MessageDataGenerator's write) -----------------------------------------------------

def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_FIXED = {"bool": ">?", "int8": ">b", "int16": ">h", "uint16": ">H", "int32": ">i",
          "uint32": ">I", "int64": ">q", "float64": ">d"}


def _uuid(text: str) -> bytes:
    raw = base64.urlsafe_b64decode(text + "==")
    assert len(raw) == 16
    return raw


def _scalar(t: str, v) -> bytes:
    if t == "uuid":
        return _uuid(v)
    return struct.pack(_FIXED[t], v)


def _var(t: str, v, flexible: bool, nullable: bool) -> bytes:
    if v is None:
        assert nullable
        return b"\x00" if flexible else (b"\xff\xff" if t == "string" else b"\xff\xff\xff\xff")
    data = v.encode("utf-8") if t == "string" else bytes(v)
    if flexible:
        return uvarint(len(data) + 1) + data
    return struct.pack(">h" if t == "string" else ">i", len(data)) + data


def _value(f: dict, v, version: int, flexible: bool) -> bytes:
    nullable = has(f["_nullable"], version)
    if f["_array"]:
        if v is None:
            assert nullable
            return b"\x00" if flexible else b"\xff\xff\xff\xff"
        out = uvarint(len(v) + 1) if flexible else struct.pack(">i", len(v))
        for item in v:
            out += _element(f, item, version, flexible)
        return out
    if f["_fields"] is not None:
        if nullable:
            if v is None:
                return b"\xff"
            return b"\x01" + encode_struct(f["_fields"], v, version, flexible)
        return encode_struct(f["_fields"], v, version, flexible)
    return _element(f, v, version, flexible, nullable=nullable)


def _element(f, v, version, flexible, nullable=False) -> bytes:
    if f["_fields"] is not None:
        return encode_struct(f["_fields"], v, version, flexible)
    t = f["_elem"]
    if t in SCALARS:
        return _scalar(t, v)
    return _var(t, v, flexible, nullable)


def encode_struct(fields: list, values: dict, version: int, flexible: bool) -> bytes:
    """One struct (or the message) at ``version``: its fields in order, then (flexible)
    its tagged fields that differ from their default, by tag."""
    out = b""
    tagged = []
    for f in fields:
        if not has(f["_versions"], version):
            continue
        v = values[f["_name"]]
        if flexible and has(f["_tagged"], version):
            if v != default(f) or (f["_fields"] is not None and v is not None
                                   and not f["_array"]):
                tagged.append((int(f["tag"]), _value(f, v, version, True)))
            continue
        out += _value(f, v, version, flexible)
    if flexible:
        tagged.sort()
        out += uvarint(len(tagged))
        for tag, data in tagged:
            out += uvarint(tag) + uvarint(len(data)) + data
    return out


def encode(d: dict, values: dict, version: int) -> bytes:
    """The message ``d`` at ``version`` (no version prefix)."""
    return encode_struct(d["_fields"], values, version, has(d["_flexible"], version))


# -- JSON (JsonConverterGenerator's write) ----------------------------------------------------------

def to_json(fields: list, values: dict, version: int) -> dict:
    out = {}
    for f in fields:
        if not has(f["_versions"], version):
            continue
        v = values[f["_name"]]
        if has(f["_tagged"], version) and v == default(f) and not (
                f["_fields"] is not None and not f["_array"] and v is not None):
            continue
        out[f["_name"]] = _json_value(f, v, version)
    return out


def _json_value(f, v, version):
    if v is None:
        return None
    if f["_array"]:
        return [_json_element(f, x, version) for x in v]
    return _json_element(f, v, version)


def _json_element(f, v, version):
    if f["_fields"] is not None:
        return to_json(f["_fields"], v, version)
    if f["_elem"] in ("bytes", "records"):
        return base64.b64encode(bytes(v)).decode("ascii")
    return v


# -- sample values ----------------------------------------------------------------------------------

def _seed(path: str) -> int:
    return sum((i + 1) * ord(c) for i, c in enumerate(path)) % 9973 + 3


def _scalar_sample(t: str, path: str):
    s = _seed(path)
    return {"bool": True,
            "int8": s % 100 + 2,
            "int16": s % 20000 + 2,
            "uint16": 40000 + s % 20000,
            "int32": 100_000 + s,
            "uint32": 3_000_000_000 + s,
            "int64": 1_700_000_000_000 + s,
            "float64": s + 0.25,
            "uuid": base64.urlsafe_b64encode(bytes((s + i) % 256 for i in range(16)))
            .rstrip(b"=").decode(),
            "string": f"{path.rsplit('.', 1)[-1]}-\u00e9{s}",
            "bytes": bytes([s % 256, 0, 255]),
            "records": bytes([s % 256])}[t]


def sample(fields: list, version: int, variant: str, path: str = "") -> dict:
    """Values for every field present at ``version``.

    ``variant``: ``"values"`` (a value different from the default everywhere, tagged
    fields included, two elements per array), ``"nulls"`` (null for every nullable field),
    ``"empty"`` (empty strings, bytes and arrays; tagged fields at their default).
    """
    out = {}
    for f in fields:
        if not has(f["_versions"], version):
            continue
        p = f"{path}.{f['_name']}"
        if variant == "nulls" and has(f["_nullable"], version):
            out[f["_name"]] = None
            continue
        if variant == "empty" and has(f["_tagged"], version):
            d = default(f)
            out[f["_name"]] = (d if f["_fields"] is None or f["_array"] else
                               sample(f["_fields"], version, variant, p))
            continue
        out[f["_name"]] = _sample_value(f, version, variant, p)
    return out


def _sample_value(f: dict, version: int, variant: str, path: str):
    if f["_array"]:
        if variant == "empty":
            return []
        return [_sample_element(f, version, variant, f"{path}[{i}]") for i in range(2)]
    return _sample_element(f, version, variant, path)


def _sample_element(f, version, variant, path):
    if f["_fields"] is not None:
        return sample(f["_fields"], version, variant, path)
    t = f["_elem"]
    if variant == "empty" and t in ("string", "bytes", "records"):
        return "" if t == "string" else b""
    return _scalar_sample(t, path)
