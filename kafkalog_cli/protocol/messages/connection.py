"""What a connection speaks before and around every API: the request and response headers
(Kafka's ``RequestHeaderData`` / ``ResponseHeaderData``, read by ``RequestHeader.parse``)
and ApiVersions (``ApiVersionsRequestData`` / ``ApiVersionsResponseData``), the request a
client sends before it knows which versions the broker speaks.

The header's v2 tagged-field section is read after the declaration by
:mod:`kafkalog_cli.protocol.wire`. Declared with the DSL of :mod:`kafkalog_cli.schema.messages`
as :mod:`kafkalog_cli.protocol.messages` says.
"""

from __future__ import annotations

from ...schema.messages import Message, fields

# -- RequestHeader ----------------------------------------------------------------------------

#: RequestHeader v0-v2. ``clientId`` has flexibleVersions "none" in Kafka's JSON (an int16
#: string even in v2), so the declaration is never flexible and :mod:`..wire` reads the
#: v2 tagged-field section after it.
RequestHeader = Message("RequestHeader", valid="0-2", flexible="none", fields=fields("""
    requestApiKey      int16   0+
    requestApiVersion  int16   0+
    correlationId      int32   0+
    clientId           string  1+  nullable=1+
"""))

ResponseHeader = Message("ResponseHeader", valid="0-1", flexible="1+", fields=fields("""
    correlationId  int32  0+
"""))

# -- ApiVersions (key 18) ---------------------------------------------------------------------

ApiVersionsRequest = Message("ApiVersionsRequest", valid="0-5", flexible="3+", fields=fields("""
    clientSoftwareName     string  3+
    clientSoftwareVersion  string  3+
    clusterId              string  5+  nullable=5+ default=null
    nodeId                 int32   5+  default=-1
"""))

ApiVersionsResponse = Message("ApiVersionsResponse", valid="0-5", flexible="3+", fields=fields("""
    errorCode               int16                  0+
    apiKeys                 []ApiVersion           0+
      apiKey                int16                  0+
      minVersion            int16                  0+
      maxVersion            int16                  0+
    throttleTimeMs          int32                  1+
    supportedFeatures       []SupportedFeatureKey  3+  tagged=3+ tag=0
      name                  string                 3+
      minVersion            int16                  3+
      maxVersion            int16                  3+
    finalizedFeaturesEpoch  int64                  3+  tagged=3+ tag=1 default=-1
    finalizedFeatures       []FinalizedFeatureKey  3+  tagged=3+ tag=2
      name                  string                 3+
      maxVersionLevel       int16                  3+
      minVersionLevel       int16                  3+
    zkMigrationReady        bool                   3+  tagged=3+ tag=3 default=false
"""))

