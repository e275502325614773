"""The Kafka wire protocol as ``kafkalog serve`` speaks it: request/response declarations
(:mod:`.schemas`, with the message DSL), the served APIs and versions (:mod:`.apis`),
framing and headers (:mod:`.wire`) and error codes (:mod:`.errors`)."""

from .apis import APIS, ApiKeys
from .errors import Errors

__all__ = ["APIS", "ApiKeys", "Errors"]
