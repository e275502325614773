"""Declarative construct schemas, one module per on-disk structure.

These are the declared source of truth of the format. The hot paths in
:mod:`kafkalog_cli.format` are struct/memoryview twins of them, and tests assert that both
give identical results on every batch of the fixtures and of the real corpus.
"""
