"""inputs.read_chunks splits like bytes.split on \\n (a trailing \\r stripped, an empty
final segment dropped) for every chunk size, and numbers each chunk's first line."""

import io
import random

from kafkalog_cli.inputs import read_chunks


def _ref(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return [p[:-1] if p.endswith(b"\r") else p for p in parts]


def test_random_inputs_every_chunk_size():
    rng = random.Random(5)
    for _ in range(1500):
        data = bytes(rng.choice(b"ab\r\n") for _ in range(rng.randrange(0, 60)))
        for cs in (1, 2, 3, 7, 100):
            got: list = []
            for first, lines in read_chunks(io.BytesIO(data), cs):
                assert first == len(got) + 1 and lines
                got.extend(lines)
            assert got == _ref(data)
