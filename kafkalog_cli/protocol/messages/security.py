"""The security requests: SASL (Kafka's ``SaslServerAuthenticator``: SaslHandshake,
SaslAuthenticate), ACLs (``AclApis``: DescribeAcls, CreateAcls, DeleteAcls) and SCRAM
credentials (``ScramControlManager``: DescribeUserScramCredentials,
AlterUserScramCredentials) - Kafka's generated ``SaslHandshakeRequestData``,
``DescribeAclsRequestData``, ``AlterUserScramCredentialsRequestData``, ... and their
responses.

Declared with the DSL of :mod:`kafkalog_cli.schema.messages` as
:mod:`kafkalog_cli.protocol.messages` says.
"""

from __future__ import annotations

from ...schema.messages import Message, fields

# -- SaslHandshake (key 17) -------------------------------------------------------------------

SaslHandshakeRequest = Message("SaslHandshakeRequest", valid="0-1", flexible="none",
                               fields=fields("""
    mechanism  string  0+
"""))

SaslHandshakeResponse = Message("SaslHandshakeResponse", valid="0-1", flexible="none",
                                fields=fields("""
    errorCode   int16     0+
    mechanisms  []string  0+
"""))

# -- SaslAuthenticate (key 36) ----------------------------------------------------------------

SaslAuthenticateRequest = Message("SaslAuthenticateRequest", valid="0-2", flexible="2+",
                                  fields=fields("""
    authBytes  bytes  0+
"""))

SaslAuthenticateResponse = Message("SaslAuthenticateResponse", valid="0-2", flexible="2+",
                                   fields=fields("""
    errorCode          int16   0+
    errorMessage       string  0+  nullable=0+
    authBytes          bytes   0+
    sessionLifetimeMs  int64   1+  default=0
"""))

# -- DescribeAcls (key 29) --------------------------------------------------------------------

DescribeAclsRequest = Message("DescribeAclsRequest", valid="0-3", flexible="2+", fields=fields("""
    resourceTypeFilter  int8    0+
    resourceNameFilter  string  0+  nullable=0+
    patternTypeFilter   int8    1+  default=3
    principalFilter     string  0+  nullable=0+
    hostFilter          string  0+  nullable=0+
    operation           int8    0+
    permissionType      int8    0+
"""))

DescribeAclsResponse = Message("DescribeAclsResponse", valid="0-3", flexible="2+", fields=fields("""
    throttleTimeMs      int32                   0+
    errorCode           int16                   0+
    errorMessage        string                  0+  nullable=0+
    resources           []DescribeAclsResource  0+
      resourceType      int8                    0+
      resourceName      string                  0+
      patternType       int8                    1+  default=3
      acls              []AclDescription        0+
        principal       string                  0+
        host            string                  0+
        operation       int8                    0+
        permissionType  int8                    0+
"""))

# -- CreateAcls (key 30) ----------------------------------------------------------------------

CreateAclsRequest = Message("CreateAclsRequest", valid="0-3", flexible="2+", fields=fields("""
    creations              []AclCreation  0+
      resourceType         int8           0+
      resourceName         string         0+
      resourcePatternType  int8           1+  default=3
      principal            string         0+
      host                 string         0+
      operation            int8           0+
      permissionType       int8           0+
"""))

CreateAclsResponse = Message("CreateAclsResponse", valid="0-3", flexible="2+", fields=fields("""
    throttleTimeMs  int32                 0+
    results         []AclCreationResult   0+
      errorCode     int16                 0+
      errorMessage  string                0+  nullable=0+
"""))

# -- DeleteAcls (key 31) ----------------------------------------------------------------------

DeleteAclsRequest = Message("DeleteAclsRequest", valid="0-3", flexible="2+", fields=fields("""
    filters               []DeleteAclsFilter  0+
      resourceTypeFilter  int8                0+
      resourceNameFilter  string              0+  nullable=0+
      patternTypeFilter   int8                1+  default=3
      principalFilter     string              0+  nullable=0+
      hostFilter          string              0+  nullable=0+
      operation           int8                0+
      permissionType      int8                0+
"""))

DeleteAclsResponse = Message("DeleteAclsResponse", valid="0-3", flexible="2+", fields=fields("""
    throttleTimeMs      int32                      0+
    filterResults       []DeleteAclsFilterResult   0+
      errorCode         int16                      0+
      errorMessage      string                     0+  nullable=0+
      matchingAcls      []DeleteAclsMatchingAcl    0+
        errorCode       int16                      0+
        errorMessage    string                     0+  nullable=0+
        resourceType    int8                       0+
        resourceName    string                     0+
        patternType     int8                       1+  default=3
        principal       string                     0+
        host            string                     0+
        operation       int8                       0+
        permissionType  int8                       0+
"""))

# -- DescribeUserScramCredentials (key 50) ----------------------------------------------------

DescribeUserScramCredentialsRequest = Message(
    "DescribeUserScramCredentialsRequest", valid="0", flexible="0+", fields=fields("""
    users   []UserName  0+  nullable=0+
      name  string      0+
"""))

DescribeUserScramCredentialsResponse = Message(
    "DescribeUserScramCredentialsResponse", valid="0", flexible="0+", fields=fields("""
    throttleTimeMs     int32                                 0+
    errorCode          int16                                 0+
    errorMessage       string                                0+  nullable=0+
    results            []DescribeUserScramCredentialsResult  0+
      user             string                                0+
      errorCode        int16                                 0+
      errorMessage     string                                0+  nullable=0+
      credentialInfos  []CredentialInfo                      0+
        mechanism      int8                                  0+
        iterations     int32                                 0+
"""))

# -- AlterUserScramCredentials (key 51) -------------------------------------------------------

AlterUserScramCredentialsRequest = Message(
    "AlterUserScramCredentialsRequest", valid="0", flexible="0+", fields=fields("""
    deletions         []ScramCredentialDeletion   0+
      name            string                      0+
      mechanism       int8                        0+
    upsertions        []ScramCredentialUpsertion  0+
      name            string                      0+
      mechanism       int8                        0+
      iterations      int32                       0+
      salt            bytes                       0+
      saltedPassword  bytes                       0+
"""))

AlterUserScramCredentialsResponse = Message(
    "AlterUserScramCredentialsResponse", valid="0", flexible="0+", fields=fields("""
    throttleTimeMs    int32                               0+
    results           []AlterUserScramCredentialsResult   0+
      user            string                              0+
      errorCode       int16                               0+
      errorMessage    string                              0+  nullable=0+
"""))

