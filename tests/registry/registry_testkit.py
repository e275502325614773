"""Test helpers for Schema Registry decoding: a small Schema Registry stub (the REST calls
confluent-kafka's ``SchemaRegistryClient`` makes) that keeps its state as the records of a
``_schemas`` topic in the registry's own JSON format, and log directories written with
the hand-built batches of :mod:`kafkalog_testkit` (independent of kafkalog's builder).

The stub follows Schema Registry's rules by its own simple code: an id per distinct
(type, schema text, references), the next id = the largest + 1, the next version = the
subject's largest + 1, the same schema under a subject keeps its version."""

from __future__ import annotations

import base64
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from kafkalog_testkit import raw_batch, raw_record


def need(module: str):
    """Import ``module``, skipping the test when it is missing (failing under CI=true)."""
    if os.environ.get("CI") == "true":
        import importlib

        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} is not installed "
                               "(pip install 'kafkalog[test]')")


def write_topic(log_dir: Path, name: str, records: list, *, base_ts: int = 1_700_000_000_000,
                one_batch_each: bool = True) -> Path:
    """``log_dir/name`` holding ``records`` (``(key, value)`` bytes or None) in v2 batches
    built by hand: one batch per record (as the registry's producer writes), or one for
    all."""
    d = log_dir / name
    d.mkdir(parents=True, exist_ok=True)
    if one_batch_each:
        data = b"".join(raw_batch(i, [raw_record(0, 0, k, v)], base_ts=base_ts + i)
                        for i, (k, v) in enumerate(records))
    else:
        data = raw_batch(0, [raw_record(i, 0, k, v) for i, (k, v) in enumerate(records)],
                         base_ts=base_ts)
    (d / "00000000000000000000.log").write_bytes(data)
    return d


def schema_key(subject: str, version: int) -> bytes:
    return json.dumps({"keytype": "SCHEMA", "subject": subject, "version": version,
                       "magic": 1}, separators=(",", ":")).encode()


def schema_value(subject: str, version: int, sid: int, schema: str, schema_type: str = "AVRO",
                 references=(), deleted: bool = False) -> bytes:
    v = {"subject": subject, "version": version, "id": sid, "schemaType": schema_type}
    if references:
        v["references"] = list(references)
    v["schema"] = schema
    v["deleted"] = deleted
    return json.dumps(v, separators=(",", ":")).encode()


class RegistryStub:
    """A Schema Registry stub (see the module docstring); ``records`` are its
    ``_schemas`` records, ``url`` its address while :meth:`running`."""

    def __init__(self, user_info: str | None = None):
        self.records: list[tuple[bytes, bytes | None]] = []
        self.versions: dict[tuple[str, int], dict] = {}
        self.ids: dict[int, dict] = {}
        self.user_info = user_info
        self.requests: list[str] = []

    # -- state --
    def register(self, subject: str, schema: str, schema_type: str = "AVRO",
                 references=()) -> dict:
        refs = [dict(r) for r in references]
        for (s, _), v in sorted(self.versions.items()):
            if s == subject and v["schema"] == schema and v["schemaType"] == schema_type \
                    and v["references"] == refs:
                return v
        sid = next((i for i, v in self.ids.items() if v["schema"] == schema
                    and v["schemaType"] == schema_type and v["references"] == refs),
                   max(self.ids, default=0) + 1)
        version = max((ver for (s, ver) in self.versions if s == subject), default=0) + 1
        v = {"subject": subject, "version": version, "id": sid, "schema": schema,
             "schemaType": schema_type, "references": refs}
        self.versions[(subject, version)] = v
        self.ids.setdefault(sid, v)
        self.records.append((schema_key(subject, version),
                             schema_value(subject, version, sid, schema, schema_type, refs)))
        return v

    def write_schemas(self, log_dir: Path, extra: list = ()) -> Path:
        """The ``_schemas-0`` partition of the stub's records (a NOOP first, as the
        registry writes one at start-up), then ``extra``."""
        noop = (b'{"keytype":"NOOP","magic":0}', None)
        return write_topic(log_dir, "_schemas-0", [noop, *self.records, *extra])

    # -- REST --
    def running(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _auth_ok(self) -> bool:
                if stub.user_info is None:
                    return True
                want = "Basic " + base64.b64encode(stub.user_info.encode()).decode()
                if self.headers.get("Authorization") == want:
                    return True
                self._send(401, {"error_code": 401, "message": "Unauthorized"})
                return False

            def _send(self, code: int, obj) -> None:
                body = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                stub.requests.append("GET " + self.path)
                if not self._auth_ok():
                    return
                parts = self.path.split("?")[0].strip("/").split("/")
                if parts[:2] == ["schemas", "ids"] and len(parts) >= 3:
                    v = stub.ids.get(int(parts[2]))
                    if v is None:
                        return self._send(404, {"error_code": 40403,
                                                "message": "Schema not found"})
                    if len(parts) == 4 and parts[3] == "versions":
                        return self._send(200, [{"subject": s, "version": ver}
                                                for (s, ver), x in sorted(stub.versions.items())
                                                if x["id"] == v["id"]])
                    return self._send(200, {"schema": v["schema"],
                                            "schemaType": v["schemaType"],
                                            "references": v["references"]})
                if parts[0] == "subjects" and len(parts) == 4 and parts[2] == "versions":
                    from urllib.parse import unquote

                    subject = unquote(parts[1])
                    vs = sorted(ver for (s, ver) in stub.versions if s == subject)
                    if not vs:
                        return self._send(404, {"error_code": 40401,
                                                "message": "Subject not found"})
                    ver = vs[-1] if parts[3] in ("latest", "-1") else int(parts[3])
                    v = stub.versions.get((subject, ver))
                    if v is None:
                        return self._send(404, {"error_code": 40402,
                                                "message": "Version not found"})
                    return self._send(200, v)
                self._send(404, {"error_code": 404, "message": "not found"})

            def do_POST(self):
                stub.requests.append("POST " + self.path)
                if not self._auth_ok():
                    return
                n = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(n) or b"{}")
                parts = self.path.split("?")[0].strip("/").split("/")
                from urllib.parse import unquote

                if parts[0] == "subjects" and len(parts) == 3 and parts[2] == "versions":
                    v = stub.register(unquote(parts[1]), body["schema"],
                                      body.get("schemaType") or "AVRO",
                                      body.get("references") or [])
                    return self._send(200, v)
                self._send(404, {"error_code": 404, "message": "not found"})

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        return _Running(server, thread)


class _Running:
    def __init__(self, server, thread):
        self.server, self.thread = server, thread
        self.url = f"http://127.0.0.1:{server.server_address[1]}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def confluent_serializers(url: str):
    """``(AvroSerializer, ProtobufSerializer, JSONSerializer, client, SerializationContext,
    MessageField)`` of confluent-kafka, against the registry at ``url``."""
    import warnings

    need("authlib")
    import authlib.deprecate  # noqa: F401 - its module code sets "always" for its warning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        need("confluent_kafka.schema_registry")
        from confluent_kafka.schema_registry import SchemaRegistryClient
        from confluent_kafka.schema_registry.avro import AvroSerializer
        from confluent_kafka.schema_registry.json_schema import JSONSerializer
        from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
        from confluent_kafka.serialization import MessageField, SerializationContext
    client = SchemaRegistryClient({"url": url})
    return AvroSerializer, ProtobufSerializer, JSONSerializer, client, SerializationContext, \
        MessageField


def compile_proto(tmp_path: Path, name: str, text: str, extra: dict | None = None):
    """Python classes of a .proto (``{message name: class}``), compiled by grpc_tools'
    protoc into a descriptor set and loaded with protobuf's message factory."""
    need("grpc_tools")
    import subprocess
    import sys

    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    src = tmp_path / "proto-src"
    src.mkdir(exist_ok=True)
    for n, t in {**(extra or {}), name: text}.items():
        (src / n).write_text(t)
    out = tmp_path / f"{name}.pb"
    import grpc_tools

    inc = Path(grpc_tools.__file__).parent / "_proto"
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{src}", f"-I{inc}",
                    "--include_imports", f"--descriptor_set_out={out}", name], check=True)
    fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    f = pool.FindFileByName(name)
    return {n: message_factory.GetMessageClass(d) for n, d in f.message_types_by_name.items()}
