"""Protobuf payloads, with the ``protobuf`` package: schemas compiled by the ``protoc``
shipped in ``grpcio-tools`` (a .proto text as Schema Registry keeps it) or read as the
base64 ``FileDescriptorProto`` some clients register; payloads decoded to Protobuf's
canonical JSON mapping as kafka-protobuf-console-consumer prints them
(``ProtobufMessageFormatter``: ``JsonFormat.printer().includingDefaultValueFields()
.omittingInsignificantWhitespace()``: lowerCamelCase names, fields without presence
printed at their defaults, 64-bit integers as strings, enums by name).

References are the schema's imports, each under its reference name (the import path);
``google/protobuf/*.proto`` come with protoc, as the registry's serializers leave them
unreferenced.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import tempfile
from pathlib import PurePosixPath

from ..errors import SchemaDecodeError

#: the name the registered schema is compiled under
MAIN_FILE = "kafkalog_registered_schema.proto"
#: seconds protoc may take for one schema
PROTOC_TIMEOUT = 60




def _descriptor_from_base64(text: str):
    from google.protobuf import descriptor_pb2

    s = text.strip()
    if not s or any(c in s for c in " \n\t;{}"):
        return None
    try:
        raw = base64.b64decode(s, validate=True)
        fd = descriptor_pb2.FileDescriptorProto.FromString(raw)
    except Exception:  # noqa: BLE001 - binascii.Error, protobuf's DecodeError
        return None
    return fd if fd.name or fd.message_type else None


def _safe_name(name: str) -> str:
    p = PurePosixPath(name)
    if p.is_absolute() or ".." in p.parts or not name or "\\" in name or "\0" in name:
        raise SchemaDecodeError(f"reference name {name!r} is not a relative .proto path")
    return str(p)


def _include_dirs() -> list[str]:
    import grpc_tools

    dirs = [os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")]
    try:  # google/type/*.proto etc., when googleapis-common-protos is installed
        import google.type as gt

        for d in getattr(gt, "__path__", ()):
            if os.path.exists(os.path.join(d, "date.proto")):
                dirs.append(os.path.dirname(os.path.dirname(d)))
                break
    except ImportError:
        pass
    return dirs


def compile_files(main: str, references: dict[str, str]):
    """The ``FileDescriptorProto`` list (dependencies first) of the .proto text ``main``
    importing ``references`` (``{import path: .proto text}``), compiled by protoc.

    Raises:
        SchemaDecodeError: protoc's first error line.
    """
    from google.protobuf import descriptor_pb2

    with tempfile.TemporaryDirectory(prefix="kafkalog-proto-") as tmp:
        for name, text in {**references, MAIN_FILE: main}.items():
            path = os.path.join(tmp, _safe_name(name))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        out = os.path.join(tmp, "out.pb")
        cmd = [sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp}",
               *(f"-I{d}" for d in _include_dirs()), "--include_imports",
               f"--descriptor_set_out={out}", MAIN_FILE]
        try:
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True,
                                  timeout=PROTOC_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise SchemaDecodeError(f"protoc did not run: {e}") from None
        if proc.returncode != 0 or not os.path.exists(out):
            lines = [ln for ln in (proc.stderr or "").splitlines() if ln.strip()]
            msg = lines[0] if lines else f"exit status {proc.returncode}"
            raise SchemaDecodeError(f"the .proto schema does not compile: "
                                      f"{msg.replace(tmp + os.sep, '')}")
        with open(out, "rb") as f:
            fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    return list(fds.file)


def _wellknown(name: str):
    """The FileDescriptorProto of a ``google/protobuf/*.proto`` from the protobuf
    package, or None."""
    import importlib

    from google.protobuf import descriptor_pb2, descriptor_pool

    if not name.startswith("google/protobuf/"):
        return None
    mod = "google.protobuf." + name[len("google/protobuf/"):-len(".proto")] + "_pb2"
    try:
        importlib.import_module(mod)
        fd = descriptor_pool.Default().FindFileByName(name)
    except (ImportError, KeyError):
        return None
    out = descriptor_pb2.FileDescriptorProto()
    fd.CopyToProto(out)
    return out


class ProtobufCodec:
    """One registered Protobuf schema: its messages, by message-index path."""

    kind = "protobuf"

    def __init__(self, schema_text: str, references: dict[str, str] | None = None):
        from google.protobuf import descriptor_pool

        references = references or {}
        main = _descriptor_from_base64(schema_text)
        if main is not None:
            files = []
            for name, text in references.items():
                fd = _descriptor_from_base64(text)
                if fd is None:
                    fd = compile_files(text, {})[-1]
                fd.name = name
                files.append(fd)
            if not main.name:
                main.name = MAIN_FILE
            files.append(main)
            have = {f.name for f in files}
            for dep in {d for f in files for d in f.dependency} - have:
                wk = _wellknown(dep)
                if wk is None:
                    raise SchemaDecodeError(f"import {dep} is not among the references")
                files.insert(0, wk)
        else:
            files = compile_files(schema_text, references)
            main = files[-1]
        self.pool = descriptor_pool.DescriptorPool()
        try:
            for fd in _dependency_order(files):
                self.pool.Add(fd)
            self.file = self.pool.FindFileByName(main.name)
        except Exception as e:  # noqa: BLE001 - TypeError/KeyError of the pool
            raise SchemaDecodeError(f"the .proto schema does not load: {e}") from None
        self._classes: dict = {}

    def message_descriptor(self, indexes: list[int]):
        """The message type at ``indexes`` (``[i]``: the file's i-th message; ``[i, j]``:
        its j-th nested type, ...).

        Raises:
            SchemaDecodeError: no such message.
        """
        types = self.file.message_types_by_name
        seq = list(self.file.message_types_by_name.values()) if types else []
        desc = None
        for depth, i in enumerate(indexes):
            if i >= len(seq):
                raise SchemaDecodeError(f"message index {indexes} is not in the schema "
                                          f"(level {depth} has {len(seq)} types)")
            desc = seq[i]
            seq = list(desc.nested_types)
        if desc is None:
            raise SchemaDecodeError("the schema defines no message")
        return desc

    def message_class(self, indexes: list[int]):
        key = tuple(indexes)
        cls = self._classes.get(key)
        if cls is None:
            from google.protobuf import message_factory

            cls = self._classes[key] = message_factory.GetMessageClass(
                self.message_descriptor(indexes))
        return cls

    def decode(self, payload: bytes, indexes: list[int]):
        """The message of ``payload`` (a protobuf Message).

        Raises:
            SchemaDecodeError / DecodeError: the caller turns it into a warning.
        """
        msg = self.message_class(indexes)()
        msg.ParseFromString(payload)
        return msg

    @staticmethod
    def to_json_value(msg):
        """The canonical JSON mapping, as the console consumer prints it."""
        from google.protobuf import json_format

        return json_format.MessageToDict(msg, always_print_fields_with_no_presence=True)

    def encode_json(self, text: str, indexes: list[int] | None = None) -> bytes:
        """The Protobuf binary of a message given in the canonical JSON mapping (the
        first message of the schema unless ``indexes``).

        Raises:
            ValueError: the JSON does not fit the message (protobuf's message).
        """
        from google.protobuf import json_format

        msg = self.message_class(indexes or [0])()
        try:
            json_format.Parse(text, msg)
        except json_format.ParseError as e:
            raise ValueError(f"does not match the Protobuf schema: {e}") from None
        return msg.SerializeToString()


def _dependency_order(files):
    by_name = {f.name: f for f in files}
    done: list = []
    seen: set = set()

    def visit(f, depth=0):
        if f.name in seen or depth > 100:
            return
        seen.add(f.name)
        for d in f.dependency:
            if d in by_name:
                visit(by_name[d], depth + 1)
        done.append(f)
    for f in files:
        visit(f)
    return done
