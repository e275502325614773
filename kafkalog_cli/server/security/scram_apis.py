"""DescribeUserScramCredentials and AlterUserScramCredentials (v0), after ``KafkaApis`` /
``ControllerApis`` (the CLUSTER DESCRIBE / ALTER checks), ``ScramImage.describe`` and
``ScramControlManager.alterCredentials``:

* Describe: every user (no or an empty list) or the ones named, each with its mechanisms
  and iterations (never a salt or key); a user without credentials -> RESOURCE_NOT_FOUND
  "Attempt to describe a user credential that does not exist: <user>", a user named twice
  -> DUPLICATE_RESOURCE; denied -> CLUSTER_AUTHORIZATION_FAILED on the response and on
  one entry per user asked;
* Alter: deletions and upsertions (salt and salted password, as the admin client computes
  them; the server derives StoredKey and ServerKey, so no password ever travels); a user
  named twice -> DUPLICATE_RESOURCE "A user credential cannot be altered twice in the same
  request", an empty name or unknown iterations bounds -> UNACCEPTABLE_CREDENTIAL, an
  unknown mechanism -> UNSUPPORTED_SASL_MECHANISM, deleting what does not exist ->
  RESOURCE_NOT_FOUND; the results listed as the controller lists them (deletions, then
  upsertions, then errors, each in Java HashMap order). The changes are
  ``UserScramCredentialRecord`` / ``RemoveUserScramCredentialRecord`` in
  ``__cluster_metadata``, written (one batch) before the answer; new connections
  authenticate against them at once.

The credentials are served whether or not a listener enables SCRAM, as a broker does.
"""

from __future__ import annotations

from ...errors import AppendError
from ...protocol.apis import ApiKeys
from ...protocol.errors import Errors
from .acl_apis import UNKNOWN_SERVER_ERROR_MESSAGE
from .acls import AclOperation
from .java_order import java_order
from .metadata_log import REMOVE_USER_SCRAM_CREDENTIAL, USER_SCRAM_CREDENTIAL
from .scram import MAX_ITERATIONS, MIN_ITERATIONS, ScramMechanism, credential_from_salted


class ScramApis:
    """The SCRAM credential handlers over the server's
    :class:`~.server_security.ServerSecurity`."""

    def __init__(self, security):
        self.security = security

    def handlers(self) -> dict:
        return {ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS: self.handle_describe_user_scram_credentials,
                ApiKeys.ALTER_USER_SCRAM_CREDENTIALS: self.handle_alter_user_scram_credentials}

    def handle_describe_user_scram_credentials(self, req) -> dict:
        users = req.body["users"]
        if not self.security.auth.authorize_cluster(req, AclOperation.DESCRIBE):
            # getErrorResponse(Errors.X.exception): ApiError.fromThrowable leaves out a
            # message equal to the error's default one
            code = int(Errors.CLUSTER_AUTHORIZATION_FAILED)
            return {"throttleTimeMs": 0, "errorCode": code, "errorMessage": None,
                    "results": [{"user": "", "errorCode": code, "errorMessage": None,
                                 "credentialInfos": []} for _ in users or ()]}
        scram = self.security.image.scram
        duplicate: dict[str, bool] = {}
        if not users:
            for name, _ in scram:
                duplicate[name] = False
        else:
            for u in users:
                duplicate[u["name"]] = u["name"] in duplicate
        results = []
        for name in java_order(duplicate):
            result = {"user": name, "errorCode": 0, "errorMessage": "", "credentialInfos": []}
            if duplicate[name]:
                result.update(errorCode=int(Errors.DUPLICATE_RESOURCE), errorMessage=(
                    "Cannot describe SCRAM credentials for the same user twice in a single "
                    f"request: {name}"))
            else:
                infos = [{"mechanism": m.type, "iterations": scram[(name, m.type)].iterations}
                         for m in ScramMechanism if (name, m.type) in scram]
                if infos:
                    result["credentialInfos"] = infos
                else:
                    result.update(errorCode=int(Errors.RESOURCE_NOT_FOUND), errorMessage=(
                        f"Attempt to describe a user credential that does not exist: {name}"))
            results.append(result)
        return {"throttleTimeMs": 0, "errorCode": 0, "errorMessage": "", "results": results}

    def handle_alter_user_scram_credentials(self, req) -> dict:
        body = req.body
        if not self.security.auth.authorize_cluster(req, AclOperation.ALTER):
            from .acl_apis import cluster_denied_message

            return _all_failed(body, Errors.CLUSTER_AUTHORIZATION_FAILED,
                               cluster_denied_message(req, AclOperation.ALTER))
        scram = self.security.image.scram
        to_delete: dict[str, dict] = {}
        to_upsert: dict[str, dict] = {}
        errors: dict[str, tuple[Errors, str]] = {}
        for d in body["deletions"]:
            name = d["name"]
            if name in errors:
                continue
            if to_delete.pop(name, None) is not None:
                errors[name] = (Errors.DUPLICATE_RESOURCE,
                                "A user credential cannot be altered twice in the same request")
                continue
            error = _validate_name_and_mechanism(name, d["mechanism"])
            if error is None and (name, d["mechanism"]) not in scram:
                error = (Errors.RESOURCE_NOT_FOUND,
                         "Attempt to delete a user credential that does not exist")
            if error is not None:
                errors[name] = error
            else:
                to_delete[name] = d
        for u in body["upsertions"]:
            name = u["name"]
            if name in errors:
                continue
            if to_delete.pop(name, None) is not None or to_upsert.pop(name, None) is not None:
                errors[name] = (Errors.DUPLICATE_RESOURCE,
                                "A user credential cannot be altered twice in the same request")
                continue
            error = _validate_name_and_mechanism(name, u["mechanism"])
            if error is None and u["iterations"] < MIN_ITERATIONS:
                error = (Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
            elif error is None and u["iterations"] > MAX_ITERATIONS:
                error = (Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
            if error is not None:
                errors[name] = error
            else:
                to_upsert[name] = u
        records = []
        results = []
        for name in java_order(to_delete):
            d = to_delete[name]
            results.append({"user": name, "errorCode": 0, "errorMessage": None})
            records.append((REMOVE_USER_SCRAM_CREDENTIAL,
                            {"name": name, "mechanism": d["mechanism"]}))
        for name in java_order(to_upsert):
            u = to_upsert[name]
            mech = ScramMechanism.for_type(u["mechanism"])
            cred = credential_from_salted(mech, bytes(u["salt"]), bytes(u["saltedPassword"]),
                                          u["iterations"])
            results.append({"user": name, "errorCode": 0, "errorMessage": None})
            records.append((USER_SCRAM_CREDENTIAL, {
                "name": name, "mechanism": mech.type, "salt": cred.salt,
                "storedKey": cred.stored_key, "serverKey": cred.server_key,
                "iterations": cred.iterations}))
        for name in java_order(errors):
            error, message = errors[name]
            results.append({"user": name, "errorCode": int(error), "errorMessage": message})
        try:
            self.security.metadata.append(records)
        except AppendError as e:
            return _all_failed(body, e.error, e.message)
        return {"throttleTimeMs": 0, "results": results}


def _validate_name_and_mechanism(name: str, mechanism: int):
    """``ScramControlManager.validateScramUsernameAndMechanism``."""
    if not name:
        return Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if ScramMechanism.for_type(mechanism) is None:
        return Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    return None


def _all_failed(body: dict, error: Errors, message: str | None) -> dict:
    """``AlterUserScramCredentialsRequest.getErrorResponse``: every user named, sorted."""
    users = sorted({d["name"] for d in body["deletions"]} | {u["name"] for u in body["upsertions"]})
    if error == Errors.UNKNOWN_SERVER_ERROR:
        message = UNKNOWN_SERVER_ERROR_MESSAGE
    return {"throttleTimeMs": 0, "results": [
        {"user": u, "errorCode": int(error), "errorMessage": message} for u in users]}
