"""The authorizer, after Kafka's ``StandardAuthorizer`` / ``StandardAuthorizerData`` (what
``authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer`` runs on a
KRaft broker), ``Authorizer.authorizeByResourceType`` and ``AuthHelper`` (how
``KafkaApis`` asks it).

The decision for one action (an operation on a LITERAL resource) by a principal from a host:

1. a principal named in ``super.users`` (``User:admin;User:ops``) is allowed everything;
2. the ACLs that apply to the resource are those of its type whose pattern is LITERAL with
   its name, LITERAL ``*``, or PREFIXED with a prefix of its name;
3. of those, the ones whose principal is the caller's or ``User:*``, whose host is ``*``,
   the caller's address or a CIDR range holding it, and whose operation is the action's,
   ``ALL``, or - for an ALLOW ACL only - one implying it (READ, WRITE, DELETE, ALTER imply
   DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS) decide: any DENY denies, else any
   ALLOW allows;
4. no ACL of step 3 but some of step 2: denied; no ACL of step 2 at all:
   ``allow.everyone.if.no.acl.found`` (default false: denied).

Denials of explicitly requested resources are logged at INFO as Kafka's
``kafka.authorizer.logger`` words them (``Principal = User:bob is Denied operation = READ
from host = 127.0.0.1 on resource = Topic:LITERAL:orders for request = Fetch with
resourceRefCount = 1 based on rule DefaultDeny``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .acls import (
    CLUSTER_NAME,
    SUPPORTED_OPERATIONS,
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    KafkaPrincipal,
    PatternType,
    ResourceType,
    host_matches,
    operations_bitfield,
    parse_principal,
    sorted_bindings,
)

audit_log = logging.getLogger("kafkalog.serve.authorizer")

#: the value of ``authorizer.class.name`` that switches the authorizer on
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
SUPER_USERS_CONFIG = "super.users"
ALLOW_EVERYONE_CONFIG = "allow.everyone.if.no.acl.found"

_IMPLIES_DESCRIBE = frozenset({AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE,
                               AclOperation.DELETE, AclOperation.ALTER})
_IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS,
                                       AclOperation.ALTER_CONFIGS})
#: ``SecurityUtils.resourceTypeName`` for the audit line
_RESOURCE_TYPE_NAMES = {ResourceType.TOPIC: "Topic", ResourceType.GROUP: "Group",
                        ResourceType.CLUSTER: "Cluster",
                        ResourceType.TRANSACTIONAL_ID: "TransactionalId",
                        ResourceType.DELEGATION_TOKEN: "DelegationToken",
                        ResourceType.USER: "User"}


@dataclass(frozen=True)
class RequestContext:
    """What the authorizer knows of a request (``AuthorizableRequestContext``): the
    session's principal, the client's address as Java prints it (``127.0.0.1``,
    ``0:0:0:0:0:0:0:1``) and the request's API name (for the audit line)."""

    principal: KafkaPrincipal
    client_host: str
    api_name: str = ""


def configured_super_users(value: str | None) -> frozenset[str]:
    """``StandardAuthorizer.getConfiguredSuperUsers``: ``;``-separated principals.

    Raises:
        ValueError: an entry that is not ``type:name``.
    """
    out = set()
    for v in (value or "").split(";"):
        v = v.strip()
        if v:
            parse_principal(v)
            out.add(v)
    return frozenset(out)


def _acl_principal(text: str) -> KafkaPrincipal | None:
    kind, sep, name = text.partition(":")
    return KafkaPrincipal(kind, name) if sep else None


class StandardAuthorizer:
    """The ACLs of the node and the decisions over them (see the module docstring).

    ``super_users``: principals as strings (``User:admin``); ``allow_everyone``: the result
    when no ACL applies to a resource. :meth:`add_acl` / :meth:`remove_acl` are the
    replay of ``AccessControlEntryRecord`` / ``RemoveAccessControlEntryRecord`` (ids are
    Kafka Uuid strings).
    """

    def __init__(self, super_users=frozenset(), allow_everyone: bool = False):
        self.super_users = frozenset(super_users)
        self.allow_everyone = allow_everyone
        self._by_id: dict[str, AclBinding] = {}
        #: (resource type, pattern type, resource name) -> {id: binding}
        self._by_resource: dict[tuple, dict[str, AclBinding]] = {}
        #: resource type -> {prefix: count} of its PREFIXED patterns
        self._prefixes: dict[ResourceType, dict[str, int]] = {}

    @classmethod
    def from_configs(cls, configs: dict) -> StandardAuthorizer:
        """``StandardAuthorizer.configure``: ``super.users`` and
        ``allow.everyone.if.no.acl.found`` (``Boolean.parseBoolean``).

        Raises:
            ValueError: a super user that is not ``type:name``.
        """
        allow = str(configs.get(ALLOW_EVERYONE_CONFIG, "false")).strip().lower() == "true"
        return cls(configured_super_users(configs.get(SUPER_USERS_CONFIG)), allow)

    # -- the ACLs -----------------------------------------------------------------------

    def add_acl(self, acl_id: str, binding: AclBinding) -> None:
        self.remove_acl(acl_id)
        self._by_id[acl_id] = binding
        p = binding.pattern
        self._by_resource.setdefault((p.resource_type, p.pattern_type, p.name), {})[
            acl_id] = binding
        if p.pattern_type == PatternType.PREFIXED:
            prefixes = self._prefixes.setdefault(p.resource_type, {})
            prefixes[p.name] = prefixes.get(p.name, 0) + 1

    def remove_acl(self, acl_id: str) -> AclBinding | None:
        binding = self._by_id.pop(acl_id, None)
        if binding is None:
            return None
        p = binding.pattern
        key = (p.resource_type, p.pattern_type, p.name)
        entries = self._by_resource[key]
        del entries[acl_id]
        if not entries:
            del self._by_resource[key]
        if p.pattern_type == PatternType.PREFIXED:
            prefixes = self._prefixes[p.resource_type]
            prefixes[p.name] -= 1
            if not prefixes[p.name]:
                del prefixes[p.name]
        return binding

    def acl_count(self) -> int:
        return len(self._by_id)

    def items(self) -> list[tuple[str, AclBinding]]:
        """``(id, binding)`` of every ACL, in the order they were added."""
        return list(self._by_id.items())

    def acls(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        """``StandardAuthorizer.acls``: the bindings the filter matches, in
        ``StandardAcl`` order."""
        return [b for b in sorted_bindings(self._by_id.values()) if acl_filter.matches(b)]

    # -- decisions ----------------------------------------------------------------------

    def _applicable(self, rtype: ResourceType, name: str):
        """The ACLs whose pattern covers the LITERAL resource ``rtype:name``."""
        for key in ((rtype, PatternType.LITERAL, name), (rtype, PatternType.LITERAL, WILDCARD)):
            entries = self._by_resource.get(key)
            if entries:
                yield from entries.values()
            if name == WILDCARD:
                break
        prefixes = self._prefixes.get(rtype)
        if prefixes:
            for i in range(1, len(name) + 1):
                if name[:i] in prefixes:
                    yield from self._by_resource[(rtype, PatternType.PREFIXED, name[:i])].values()

    def _rule(self, ctx: RequestContext, op: AclOperation, rtype: ResourceType,
              name: str) -> tuple[bool, str]:
        """(allowed, the rule's description for the audit line)."""
        principal = ctx.principal
        if str(principal) in self.super_users:
            return True, "SuperUser"
        found = False
        allow = None
        for b in self._applicable(rtype, name):
            found = True
            result = _find_result(op, principal, ctx.client_host, b)
            if result is AclPermissionType.DENY:
                return False, f"MatchingAcl(acl={_describe(b)})"
            if result is AclPermissionType.ALLOW:
                allow = b
        if allow is not None:
            return True, f"MatchingAcl(acl={_describe(allow)})"
        if found:
            return False, "DefaultDeny"
        return self.allow_everyone, "DefaultAllow" if self.allow_everyone else "DefaultDeny"

    def authorize(self, ctx: RequestContext, op: AclOperation, rtype: ResourceType,
                  name: str, *, log_if_allowed: bool = True, log_if_denied: bool = True,
                  ref_count: int = 1) -> bool:
        """``StandardAuthorizerData.authorize`` for one action on the LITERAL resource
        ``rtype:name``; a denial with ``log_if_denied`` is logged at INFO, an allowance
        with ``log_if_allowed`` at DEBUG."""
        allowed, rule = self._rule(ctx, op, rtype, name)
        if (log_if_denied and not allowed and audit_log.isEnabledFor(logging.INFO)) or (
                allowed and log_if_allowed and audit_log.isEnabledFor(logging.DEBUG)):
            audit_log.log(logging.DEBUG if allowed else logging.INFO,
                          "Principal = %s is %s operation = %s from host = %s on resource "
                          "= %s:LITERAL:%s for request = %s with resourceRefCount = %d "
                          "based on rule %s", ctx.principal,
                          "Allowed" if allowed else "Denied", op.name, ctx.client_host,
                          _RESOURCE_TYPE_NAMES.get(rtype, rtype.name), name, ctx.api_name,
                          ref_count, rule)
        return allowed

    def authorize_by_resource_type(self, ctx: RequestContext, op: AclOperation,
                                   rtype: ResourceType) -> bool:
        """``Authorizer.authorizeByResourceType`` (the interface's default method, which
        StandardAuthorizer keeps): may the principal do ``op`` on SOME resource of the
        type - a super user, an ALLOW on ``*``, or an ALLOW pattern not covered by a DENY
        of the same literal name or of a prefix of it."""
        if self.authorize(ctx, op, rtype, "hardcode", log_if_denied=False, ref_count=0):
            return True
        deny_literal, deny_prefixed = set(), set()
        allow_literal, allow_prefixed = [], []
        for b in self._by_id.values():
            p, e = b.pattern, b.entry
            if p.resource_type != rtype:
                continue
            if not host_matches(e.host, ctx.client_host):  # Kafka 4.4: CIDR ranges too
                continue
            if e.principal != WILDCARD_PRINCIPAL and _acl_principal(e.principal) != \
                    ctx.principal:
                continue
            if e.operation != op and e.operation != AclOperation.ALL:
                continue
            if e.permission_type == AclPermissionType.DENY:
                if p.pattern_type == PatternType.LITERAL:
                    if p.name == WILDCARD:
                        return False
                    deny_literal.add(p.name)
                elif p.pattern_type == PatternType.PREFIXED:
                    deny_prefixed.add(p.name)
                continue
            if e.permission_type != AclPermissionType.ALLOW:
                continue
            if p.pattern_type == PatternType.LITERAL:
                if p.name == WILDCARD:
                    return True
                allow_literal.append(p.name)
            elif p.pattern_type == PatternType.PREFIXED:
                allow_prefixed.append(p.name)
        for literal, names in ((True, allow_literal), (False, allow_prefixed)):
            for allowed in names:
                if literal and allowed in deny_literal:
                    continue
                if not any(allowed[:i] in deny_prefixed for i in range(1, len(allowed) + 1)):
                    return True
        return False


def _find_result(op: AclOperation, principal: KafkaPrincipal, host: str,
                 b: AclBinding) -> AclPermissionType | None:
    """``StandardAuthorizerData.findResult``: the binding's permission when it applies to
    the principal, host and operation, else None."""
    e = b.entry
    acl_principal = _acl_principal(e.principal)
    if acl_principal != principal and e.principal != WILDCARD_PRINCIPAL:
        return None
    if not host_matches(e.host, host):
        return None
    if e.operation != AclOperation.ALL:
        if e.permission_type == AclPermissionType.ALLOW:
            if op == AclOperation.DESCRIBE:
                if e.operation not in _IMPLIES_DESCRIBE:
                    return None
            elif op == AclOperation.DESCRIBE_CONFIGS:
                if e.operation not in _IMPLIES_DESCRIBE_CONFIGS:
                    return None
            elif op != e.operation:
                return None
        elif op != e.operation:
            return None
    if e.permission_type == AclPermissionType.ALLOW:
        return AclPermissionType.ALLOW
    if e.permission_type == AclPermissionType.DENY:
        return AclPermissionType.DENY
    return None


def _describe(b: AclBinding) -> str:
    """``StandardAcl.toString``."""
    p, e = b.pattern, b.entry
    return (f"StandardAcl(resourceType={p.resource_type.name}, resourceName={p.name}, "
            f"patternType={p.pattern_type.name}, principal={e.principal}, host={e.host}, "
            f"operation={e.operation.name}, permissionType={e.permission_type.name})")


class AuthHelper:
    """``AuthHelper``: how the request handlers ask the authorizer. Without one (None)
    everything is allowed and every supported operation is authorized, as a broker with no
    ``authorizer.class.name``. ``ctx(request)`` gives a request's :class:`RequestContext`
    (the session's principal and address)."""

    def __init__(self, authorizer: StandardAuthorizer | None):
        self.authorizer = authorizer

    @property
    def enabled(self) -> bool:
        return self.authorizer is not None

    @staticmethod
    def ctx(req) -> RequestContext:
        session = getattr(req, "session", None)
        if session is None:
            from .acls import ANONYMOUS
            return RequestContext(ANONYMOUS, req.client_host.lstrip("/"), req.api_key.name)
        return RequestContext(session.principal, session.client_address,
                              _api_name(req.api_key))

    def authorize(self, req, op: AclOperation, rtype: ResourceType, name: str, *,
                  log_if_allowed: bool = True, log_if_denied: bool = True,
                  ref_count: int = 1) -> bool:
        if self.authorizer is None:
            return True
        return self.authorizer.authorize(self.ctx(req), op, rtype, name,
                                         log_if_allowed=log_if_allowed,
                                         log_if_denied=log_if_denied, ref_count=ref_count)

    def authorize_cluster(self, req, op: AclOperation, *, log_if_denied: bool = True) -> bool:
        return self.authorize(req, op, ResourceType.CLUSTER, CLUSTER_NAME,
                              log_if_denied=log_if_denied)

    def filter_by_authorized(self, req, op: AclOperation, rtype: ResourceType, names, *,
                             log_if_allowed: bool = True,
                             log_if_denied: bool = True) -> set[str]:
        """``AuthHelper.filterByAuthorized``: the distinct names the principal may ``op``
        (each asked once, with the count of its occurrences as reference count)."""
        names = list(names)
        if self.authorizer is None:
            return set(names)
        counts: dict[str, int] = {}
        for n in names:
            counts[n] = counts.get(n, 0) + 1
        ctx = self.ctx(req)
        return {n for n, c in counts.items() if self.authorizer.authorize(
            ctx, op, rtype, n, log_if_allowed=log_if_allowed, log_if_denied=log_if_denied,
            ref_count=c)}

    def authorized_operations(self, req, rtype: ResourceType, name: str) -> int:
        """``AuthHelper.authorizedOperations``: the supported operations of the resource
        the principal may do, as a 32-bit field (all of them without an authorizer)."""
        ops = SUPPORTED_OPERATIONS[rtype]
        if self.authorizer is not None:
            ctx = self.ctx(req)
            ops = [op for op in ops if self.authorizer.authorize(
                ctx, op, rtype, name, log_if_allowed=False, log_if_denied=False)]
        return operations_bitfield(ops)

    def authorize_by_resource_type(self, req, op: AclOperation, rtype: ResourceType) -> bool:
        if self.authorizer is None:
            return True
        return self.authorizer.authorize_by_resource_type(self.ctx(req), op, rtype)


def _api_name(key) -> str:
    """``ApiKeys.name`` (``Fetch``, ``CreateTopics``) from the enum member's name."""
    return "".join(w.capitalize() for w in key.name.split("_"))
