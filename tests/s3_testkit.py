"""A local S3-compatible server for the object-storage tests: moto's ThreadedMotoServer on
127.0.0.1 (an ephemeral port), reached with pyarrow's real S3 client (the AWS SDK for
C++) through the standard variables, as a user's environment would configure it:
``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_DEFAULT_REGION``."""

from __future__ import annotations

import os
from pathlib import Path


class S3Server:
    """``with S3Server() as s3: s3.upload(local_dir, "bucket/prefix")``; :attr:`env` holds
    the variables a client needs (set in ``os.environ`` while the server runs, so that
    child processes inherit them)."""

    def __init__(self):
        from moto.server import ThreadedMotoServer

        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.endpoint = ""
        self.env: dict[str, str] = {}
        self._saved: dict[str, str | None] = {}

    def __enter__(self) -> S3Server:
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        self.env = {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": "testing",
                    "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                    "AWS_EC2_METADATA_DISABLED": "true"}
        for k, v in self.env.items():
            self._saved[k] = os.environ.get(k)
            os.environ[k] = v
        return self

    def __exit__(self, *exc) -> None:
        self._server.stop()
        for k, v in self._saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def filesystem(self):
        """pyarrow's S3FileSystem on this server (bucket creation allowed)."""
        import pyarrow.fs as pafs

        return pafs.S3FileSystem(endpoint_override=self.endpoint, access_key="testing",
                                 secret_key="testing", region="us-east-1",
                                 allow_bucket_creation=True)

    def upload(self, local: Path, dest: str) -> str:
        """Copy the directory ``local`` to ``dest`` (``bucket/prefix``) with pyarrow's S3
        client; returns ``s3://dest``."""
        import pyarrow.fs as pafs

        fs = self.filesystem()
        bucket = dest.split("/", 1)[0]
        fs.create_dir(bucket)
        pafs.copy_files(str(local), dest, source_filesystem=pafs.LocalFileSystem(),
                        destination_filesystem=fs)
        return f"s3://{dest}"


try:
    import pytest
except ImportError:  # pragma: no cover
    pytest = None

if pytest is not None:
    @pytest.fixture(scope="session")
    def s3_server():
        """One local S3 server for the session (skips without moto or pyarrow). Its
        variables are in ``os.environ`` from the start of the first test that uses it,
        so processes started afterwards (a Spark session's JVM and Python workers)
        inherit them, as executors configured the standard way would."""
        pytest.importorskip("pyarrow.fs")
        pytest.importorskip("moto.server")
        with S3Server() as s3:
            yield s3
