"""CreateAcls, DescribeAcls and DeleteAcls (v1-3), after ``AclApis`` (the handlers a broker
and, for the two writes a KRaft broker forwards, its controller run) and
``AclControlManager`` (validation, ids, the records):

* each first checks the principal's ALTER (Describe: DESCRIBE) on the CLUSTER; denied: every
  entry of the answer gets CLUSTER_AUTHORIZATION_FAILED;
* without an authorizer: SECURITY_DISABLED "No Authorizer is configured." (DescribeAcls:
  "... on the broker"), as a broker answers;
* CreateAcls: a CLUSTER pattern not named ``kafka-cluster`` or an empty name ->
  INVALID_REQUEST; then ``AclControlManager.validateNewAcl`` (resource type, pattern
  LITERAL or PREFIXED, operation, permission, a ``type:name`` principal, a host that is
  ``*``, an address or a CIDR range); a binding that exists already is a success that
  writes nothing (so is the second of two equal ones in one request); an ANY or MATCH in a
  creation fails the whole request with UNKNOWN_SERVER_ERROR (the broker's
  ``CreateAclsRequest.aclBinding`` throws);
* DeleteAcls: each filter removes every ACL it matches (answered with the ACLs); an
  UNKNOWN pattern or entry -> INVALID_REQUEST; all removals are one batch;
* DescribeAcls: the bindings the filter matches, grouped by resource pattern;
* a request naming an UNKNOWN (code 0) type, pattern, operation or permission does not
  parse as the broker parses it: the connection is closed.

New ACLs are ``AccessControlEntryRecord`` and removals ``RemoveAccessControlEntryRecord``
in ``__cluster_metadata`` (:mod:`.metadata_log`), written before the answer; the
authorizer applies them at once.
"""

from __future__ import annotations

from ...errors import AppendError, InvalidRequest
from ...protocol.apis import ApiKeys
from ...protocol.errors import Errors
from ...storage.dir_files import random_kafka_uuid
from .acls import (
    CLUSTER_NAME,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
    acl_operation,
    pattern_type,
    permission_type,
    resource_type,
    validate_host_pattern,
)
from .metadata_log import ACCESS_CONTROL_ENTRY, REMOVE_ACCESS_CONTROL_ENTRY, acl_record

#: QuorumController.MAX_RECORDS_PER_USER_OP
MAX_RECORDS_PER_USER_OP = 10_000
#: ApiError.fromThrowable of an exception that is no ApiException: UNKNOWN_SERVER_ERROR,
#: without a message (Kafka 4.4)
UNKNOWN_SERVER_ERROR_MESSAGE = None


def cluster_denied_message(req, op: AclOperation) -> str:
    """``AuthHelper.authorizeClusterOperation``'s ClusterAuthorizationException (Kafka 4.4:
    ``Request $request needs $op permission.``), ``Request.toString`` written with this
    connection's values (the broker's names its processor, session object and buffer)."""
    session = getattr(req, "session", None)
    if session is None:
        return f"Request Request(processor=0, connectionId=, session={req.client_host}) " \
               f"needs {op.name} permission."
    return (f"Request Request(processor=0, connectionId={session.connection_id}, "
            f"session={session.describe()}, listenerName=ListenerName({session.listener_name}),"
            f" securityProtocol={session.listener.security_protocol}, buffer=null, "
            f"envelope=Optional.empty) needs {op.name} permission.")


def _check_codes(req, items, keys) -> None:
    """``CreateAclsRequest`` / ``DeleteAclsRequest`` / ``DescribeAclsRequest.validate``:
    a code 0 (UNKNOWN) makes the request unparseable (InvalidRequestException: the
    connection is closed)."""
    for item in items:
        if any(item[k] == 0 for k in keys):
            raise InvalidRequest(f"{req.api_key.name} contains UNKNOWN elements")


def _filter_of(d: dict, prefix: bool = True) -> AclBindingFilter:
    rt = "resourceTypeFilter" if prefix else "resourceType"
    return AclBindingFilter(resource_type(d[rt]), d["resourceNameFilter"],
                            pattern_type(d.get("patternTypeFilter", 3)), d["principalFilter"],
                            d["hostFilter"], acl_operation(d["operation"]),
                            permission_type(d["permissionType"]))


def validate_new_acl(b: AclBinding) -> str | None:
    """``AclControlManager.validateNewAcl`` (Kafka 4.4): None, or the INVALID_REQUEST
    message."""
    p, e = b.pattern, b.entry
    if p.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        return f"Invalid resourceType {p.resource_type.name}"
    if p.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return f"Invalid patternType {p.pattern_type.name}"
    if e.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        return f"Invalid operation {e.operation.name}"
    if e.permission_type not in (AclPermissionType.DENY, AclPermissionType.ALLOW):
        return f"Invalid permissionType {e.permission_type.name}"
    if not p.name:
        return "Resource name should not be empty"
    if ":" not in e.principal:
        return (f"Could not parse principal from `{e.principal}` (no colon is present "
                "separating the principal type from the principal name)")
    try:
        validate_host_pattern(e.host)
    except ValueError as err:
        return str(err)
    return None


class AclApis:
    """The ACL handlers over the server's :class:`~.server_security.ServerSecurity`."""

    def __init__(self, security):
        self.security = security

    def handlers(self) -> dict:
        return {ApiKeys.DESCRIBE_ACLS: self.handle_describe_acls,
                ApiKeys.CREATE_ACLS: self.handle_create_acls,
                ApiKeys.DELETE_ACLS: self.handle_delete_acls}

    def _alter_refused(self, req) -> tuple[Errors, str] | None:
        """CreateAcls' and DeleteAcls' first checks (``AclApis``): ALTER on the cluster,
        then an authorizer at all; the error and message for every entry, or None."""
        auth = self.security.auth
        if not auth.authorize_cluster(req, AclOperation.ALTER):
            return (Errors.CLUSTER_AUTHORIZATION_FAILED,
                    cluster_denied_message(req, AclOperation.ALTER))
        if auth.authorizer is None:
            return Errors.SECURITY_DISABLED, "No Authorizer is configured."
        return None

    # -- DescribeAcls ---------------------------------------------------------------------

    def handle_describe_acls(self, req) -> dict:
        body = req.body
        _check_codes(req, [body], ("resourceTypeFilter", "patternTypeFilter", "operation",
                                   "permissionType"))
        auth = self.security.auth
        # an unset nullable string is "" (the generated message's default), null only
        # where Kafka sets it so
        out = {"throttleTimeMs": 0, "errorCode": 0, "errorMessage": "", "resources": []}
        if not auth.authorize_cluster(req, AclOperation.DESCRIBE):
            out.update(errorCode=int(Errors.CLUSTER_AUTHORIZATION_FAILED),
                       errorMessage=cluster_denied_message(req, AclOperation.DESCRIBE))
            return out
        if auth.authorizer is None:
            out.update(errorCode=int(Errors.SECURITY_DISABLED),
                       errorMessage="No Authorizer is configured on the broker")
            return out
        groups: dict[ResourcePattern, list[AccessControlEntry]] = {}
        for b in auth.authorizer.acls(_filter_of(body)):
            entries = groups.setdefault(b.pattern, [])
            if b.entry not in entries:
                entries.append(b.entry)
        out["resources"] = [
            {"resourceType": int(p.resource_type), "resourceName": p.name,
             "patternType": int(p.pattern_type),
             "acls": [{"principal": e.principal, "host": e.host, "operation": int(e.operation),
                       "permissionType": int(e.permission_type)} for e in entries]}
            for p, entries in groups.items()]
        return out

    # -- CreateAcls -----------------------------------------------------------------------

    def handle_create_acls(self, req) -> dict:
        creations = req.body["creations"]
        _check_codes(req, creations, ("resourcePatternType", "resourceType", "permissionType",
                                      "operation"))

        def all_failed(error: Errors, message: str | None) -> dict:
            return {"throttleTimeMs": 0, "results": [
                {"errorCode": int(error), "errorMessage": message} for _ in creations]}

        if (refused := self._alter_refused(req)) is not None:
            return all_failed(*refused)
        bindings = []
        for c in creations:
            b = AclBinding(
                ResourcePattern(resource_type(c["resourceType"]), c["resourceName"],
                                pattern_type(c["resourcePatternType"])),
                AccessControlEntry(c["principal"], c["host"], acl_operation(c["operation"]),
                                   permission_type(c["permissionType"])))
            if b.pattern.resource_type == ResourceType.ANY or b.pattern.pattern_type in (
                    PatternType.ANY, PatternType.MATCH) or b.entry.operation == AclOperation.ANY \
                    or b.entry.permission_type == AclPermissionType.ANY:
                # new ResourcePattern / AccessControlEntry throw IllegalArgumentException
                return all_failed(Errors.UNKNOWN_SERVER_ERROR, UNKNOWN_SERVER_ERROR_MESSAGE)
            bindings.append(b)
        results = []
        records = []
        existing = set(self.security.image.acls.values())
        for b in bindings:
            message = None
            if b.pattern.resource_type == ResourceType.CLUSTER and b.pattern.name != CLUSTER_NAME:
                message = f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
            elif not b.pattern.name:
                message = "Invalid empty resource name"
            else:
                message = validate_new_acl(b)
            if message is not None:
                results.append({"errorCode": int(Errors.INVALID_REQUEST), "errorMessage": message})
                continue
            if b not in existing:
                existing.add(b)
                acl_id = self._new_id()
                records.append((ACCESS_CONTROL_ENTRY, acl_record(acl_id, b)))
            results.append({"errorCode": 0, "errorMessage": ""})
        try:
            self.security.metadata.append(records)
        except AppendError as e:
            return all_failed(e.error, e.message)
        return {"throttleTimeMs": 0, "results": results}

    def _new_id(self) -> str:
        acls = self.security.image.acls
        while True:
            acl_id = random_kafka_uuid()
            if acl_id not in acls:
                return acl_id

    # -- DeleteAcls -----------------------------------------------------------------------

    def handle_delete_acls(self, req) -> dict:
        filters = req.body["filters"]
        _check_codes(req, filters, ("patternTypeFilter", "resourceTypeFilter", "operation",
                                    "permissionType"))

        def all_failed(error: Errors, message: str | None) -> dict:
            return {"throttleTimeMs": 0, "filterResults": [
                {"errorCode": int(error), "errorMessage": message, "matchingAcls": []}
                for _ in filters]}

        if (refused := self._alter_refused(req)) is not None:
            return all_failed(*refused)
        acls = list(self.security.image.acls.items())
        removed: dict[str, None] = {}
        results = []
        for f in filters:
            flt = _filter_of(f)
            if flt.resource_type == ResourceType.UNKNOWN or \
                    flt.pattern_type == PatternType.UNKNOWN:
                results.append({"errorCode": int(Errors.INVALID_REQUEST),
                                "errorMessage": "Unknown patternFilter.", "matchingAcls": []})
                continue
            if flt.operation == AclOperation.UNKNOWN or \
                    flt.permission_type == AclPermissionType.UNKNOWN:
                results.append({"errorCode": int(Errors.INVALID_REQUEST),
                                "errorMessage": "Unknown entryFilter.", "matchingAcls": []})
                continue
            matching = []
            for acl_id, b in acls:
                if flt.matches(b):
                    removed[acl_id] = None
                    if len(removed) > MAX_RECORDS_PER_USER_OP:
                        # BoundedListTooLongException: this filter fails (ApiError of a
                        # non-Kafka exception); what it matched so far is still removed
                        matching = None
                        break
                    p, e = b.pattern, b.entry
                    matching.append({"errorCode": 0, "errorMessage": None,
                                     "resourceType": int(p.resource_type), "resourceName": p.name,
                                     "patternType": int(p.pattern_type), "principal": e.principal,
                                     "host": e.host, "operation": int(e.operation),
                                     "permissionType": int(e.permission_type)})
            if matching is None:
                results.append({"errorCode": int(Errors.UNKNOWN_SERVER_ERROR),
                                "errorMessage": UNKNOWN_SERVER_ERROR_MESSAGE,
                                "matchingAcls": []})
                continue
            results.append({"errorCode": 0, "errorMessage": None, "matchingAcls": matching})
        try:
            self.security.metadata.append([(REMOVE_ACCESS_CONTROL_ENTRY, {"id": i})
                                           for i in removed])
        except AppendError as e:
            return all_failed(e.error, e.message)
        return {"throttleTimeMs": 0, "filterResults": results}
