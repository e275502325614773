"""serve's security: listeners, TLS, SASL authentication, the authorizer and the ACL and
SCRAM admin APIs, as a broker configures and runs them (docs/serve.md, "Security").

* :mod:`.listeners` - ``listeners`` / ``listener.security.protocol.map`` /
  ``advertised.listeners`` and each listener's own configs (``EndPoint``,
  ``KafkaConfig``'s listener parsing, ``listener.name.<l>.`` prefixes);
* :mod:`.ssl_factory` - ``DefaultSslEngineFactory`` (PEM keystores and truststores as
  an :class:`ssl.SSLContext`) and the principal of a client certificate
  (``SslPrincipalMapper``);
* :mod:`.jaas` - ``JaasConfig`` (``sasl.jaas.config`` values);
* :mod:`.plain`, :mod:`.scram`, :mod:`.oauthbearer` - the SASL servers;
* :mod:`.authenticator` - ``SaslServerAuthenticator``: a connection's SASL exchange,
  its principal and re-authentication;
* :mod:`.acls` - the ACL model (``AclBinding``, filters, ``StandardAcl``, ``AclEntry``);
* :mod:`.authorizer` - ``StandardAuthorizer`` and ``AuthHelper``;
* :mod:`.metadata_log` - ACL and SCRAM records in ``__cluster_metadata``;
* :mod:`.acl_apis`, :mod:`.scram_apis` - CreateAcls / DescribeAcls / DeleteAcls and
  DescribeUserScramCredentials / AlterUserScramCredentials (``AclControlManager``,
  ``ScramControlManager``).
"""
