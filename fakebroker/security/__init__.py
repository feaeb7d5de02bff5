"""Security: listeners per security protocol and their TLS contexts, with the certificates
a cluster makes for itself (``tls``, ``certificates``); the SASL exchange; principals; the
authorizer.

Nothing here is imported unless the cluster's settings ask for it (the plain request path
stays as fast as it is): ``tls`` and ``certificates`` with a TLS listener, ``authorizer``
(Kafka's StandardAuthorizer over the cluster's ACLs) and ``enforcement`` (the authorization
seam of the request pipeline) with ``authorizer=True``.
"""
