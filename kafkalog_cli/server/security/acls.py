"""The ACL model, after ``org.apache.kafka.common.acl`` / ``org.apache.kafka.common.resource``
(``AclBinding``, ``AclBindingFilter``, ``ResourcePattern(Filter)``,
``AccessControlEntry(Filter)``, the enums with their wire codes), ``KafkaPrincipal``,
``StandardAcl`` (the authorizer's and the controller's form of a binding) and
``AclEntry.supportedOperations`` (which operations each resource type has: the
authorized-operations bitfields of Metadata, DescribeCluster and DescribeGroups).

Everything here is a value: tuples and enums, no state.
"""

from __future__ import annotations

import ipaddress
from enum import IntEnum
from typing import NamedTuple


class ResourceType(IntEnum):
    """``org.apache.kafka.common.resource.ResourceType`` (code = ordinal)."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    """``org.apache.kafka.common.resource.PatternType``."""

    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    """``org.apache.kafka.common.acl.AclOperation`` (4.4: TWO_PHASE_COMMIT is 15)."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(IntEnum):
    """``org.apache.kafka.common.acl.AclPermissionType``."""

    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


def _from_code(enum, code: int):
    """``X.fromCode``: an unknown code is UNKNOWN."""
    try:
        return enum(code)
    except ValueError:
        return enum.UNKNOWN


resource_type = lambda code: _from_code(ResourceType, code)  # noqa: E731
pattern_type = lambda code: _from_code(PatternType, code)  # noqa: E731
acl_operation = lambda code: _from_code(AclOperation, code)  # noqa: E731
permission_type = lambda code: _from_code(AclPermissionType, code)  # noqa: E731

#: ``Resource.CLUSTER_NAME``: the one CLUSTER resource
CLUSTER_NAME = "kafka-cluster"
#: ``ResourcePattern.WILDCARD_RESOURCE`` / ``AclEntry.WILDCARD_HOST``
WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"

#: ``AclEntry.supportedOperations`` (Kafka 4.4)
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE,
                         AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.ALTER,
                         AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS),
    ResourceType.GROUP: (AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE,
                         AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS),
    ResourceType.CLUSTER: (AclOperation.CREATE, AclOperation.CLUSTER_ACTION,
                           AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS,
                           AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER,
                           AclOperation.DESCRIBE),
    ResourceType.TRANSACTIONAL_ID: (AclOperation.DESCRIBE, AclOperation.WRITE,
                                    AclOperation.TWO_PHASE_COMMIT),
    ResourceType.DELEGATION_TOKEN: (AclOperation.DESCRIBE,),
    ResourceType.USER: (AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS),
}


def operations_bitfield(ops) -> int:
    """``Utils.to32BitField`` of operation codes: bit ``code`` set for each."""
    field = 0
    for op in ops:
        field |= 1 << int(op)
    return field


class KafkaPrincipal(NamedTuple):
    """``KafkaPrincipal``: a type (``User``) and a name; ``str()`` is ``User:alice``."""

    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"


ANONYMOUS = KafkaPrincipal("User", "ANONYMOUS")


def parse_principal(text: str) -> KafkaPrincipal:
    """``SecurityUtils.parseKafkaPrincipal``: ``type:name`` split at the first colon.

    Raises:
        ValueError: no colon, or an empty type or name (Kafka's message).
    """
    if text is None or not text:
        raise ValueError("principal must be non-null")
    kind, sep, name = text.partition(":")
    if not sep or not kind or not name:
        raise ValueError("expected a string in format principalType:principalName but got "
                         + text)
    return KafkaPrincipal(kind, name)


class ResourcePattern(NamedTuple):
    resource_type: ResourceType
    name: str
    pattern_type: PatternType


class AccessControlEntry(NamedTuple):
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType


class AclBinding(NamedTuple):
    """``AclBinding``: a pattern and an entry (the fields of an ACL)."""

    pattern: ResourcePattern
    entry: AccessControlEntry

    def is_unknown(self) -> bool:
        p, e = self.pattern, self.entry
        return (p.resource_type == ResourceType.UNKNOWN
                or p.pattern_type == PatternType.UNKNOWN
                or e.operation == AclOperation.UNKNOWN
                or e.permission_type == AclPermissionType.UNKNOWN)

    def sort_key(self):
        """``StandardAcl.compareTo``'s order, with the name compared in reverse by the
        caller (see :func:`sorted_bindings`)."""
        p, e = self.pattern, self.entry
        return (int(p.pattern_type), int(e.operation), e.principal, e.host,
                int(e.permission_type))


def sorted_bindings(bindings) -> list[AclBinding]:
    """``StandardAcl``'s order (AclCache's ``aclsByResource``): resource type, then
    resource name in REVERSE, then pattern type, operation, principal, host, permission."""
    out = sorted(bindings, key=AclBinding.sort_key)
    out.sort(key=lambda b: b.pattern.name, reverse=True)
    out.sort(key=lambda b: int(b.pattern.resource_type))
    return out


class AclBindingFilter(NamedTuple):
    """``AclBindingFilter``: None name / principal / host match any."""

    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    def is_unknown(self) -> bool:
        """``patternFilter().isUnknown() || entryFilter().isUnknown()``."""
        return (self.resource_type == ResourceType.UNKNOWN
                or self.pattern_type == PatternType.UNKNOWN
                or self.operation == AclOperation.UNKNOWN
                or self.permission_type == AclPermissionType.UNKNOWN)

    def matches(self, b: AclBinding) -> bool:
        """``ResourcePatternFilter.matches`` and ``AccessControlEntryFilter.matches``."""
        p, e = b.pattern, b.entry
        if self.resource_type != ResourceType.ANY and self.resource_type != p.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and \
                self.pattern_type != p.pattern_type:
            return False
        if self.name is not None:
            if self.pattern_type in (PatternType.ANY, p.pattern_type):
                if self.name != p.name:
                    return False
            elif p.pattern_type == PatternType.LITERAL:
                if not (self.name == p.name or p.name == WILDCARD):
                    return False
            elif p.pattern_type == PatternType.PREFIXED:
                if not self.name.startswith(p.name):
                    return False
            else:
                return False
        if self.principal is not None and self.principal != e.principal:
            return False
        if self.host is not None and self.host != e.host:
            return False
        if self.operation != AclOperation.ANY and self.operation != e.operation:
            return False
        return self.permission_type == AclPermissionType.ANY or \
            self.permission_type == e.permission_type


def validate_host_pattern(host: str) -> None:
    """``AclControlManager.validateHostPattern`` (Kafka 4.4, CIDR hosts supported): a host
    is ``*``, an address, or a CIDR range (``10.0.0.0/8``, ``fd00::/8``).

    Raises:
        ValueError: empty, or a ``/`` range that does not parse (Kafka's messages).
    """
    if not host:
        raise ValueError("Host pattern cannot be null or empty")
    if host == WILDCARD or "/" not in host:
        return
    try:
        ipaddress.ip_network(host, strict=False)
    except ValueError:
        raise ValueError(f"Invalid CIDR notation '{host}': {_cidr_problem(host)}") from None


def _cidr_problem(host: str) -> str:
    """commons-net ``SubnetUtils``' message for an IPv4 range (``Value [40] not in range
    [0,32]``, ``Could not parse [...]``)."""
    address, _, bits = host.rpartition("/")
    if ":" not in host and bits.isdigit() and len(bits) <= 3 and address.count(".") == 3:
        try:
            ipaddress.IPv4Address(address)
        except ValueError:
            return f"Could not parse [{host}]"
        return f"Value [{int(bits)}] not in range [0,32]"
    return f"Could not parse [{host}]"


def host_matches(acl_host: str, client_host: str) -> bool:
    """``StandardAuthorizerData.findResult``'s host test: ``*``, the client's address as
    Java prints it, or a CIDR range holding it (``CidrUtils.isInRange``)."""
    if acl_host == WILDCARD or acl_host == client_host:
        return True
    if "/" not in acl_host:
        return False
    try:
        return ipaddress.ip_address(client_host.split("%")[0]) in \
            ipaddress.ip_network(acl_host, strict=False)
    except ValueError:
        return False


def java_host_address(host: str) -> str:
    """``InetAddress.getHostAddress``: IPv4 as is, IPv6 in full, each group in hex without
    leading zeros (``0:0:0:0:0:0:0:1``), an IPv4-mapped IPv6 address as its IPv4 form (Java
    gives such a socket's peer as an ``Inet4Address``)."""
    try:
        addr = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return host
    if addr.version == 4:
        return str(addr)
    if addr.ipv4_mapped is not None:
        return str(addr.ipv4_mapped)
    return ":".join(f"{int(g, 16):x}" for g in addr.exploded.split(":"))
