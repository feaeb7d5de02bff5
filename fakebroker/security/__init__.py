"""Security: listeners per security protocol, TLS, SASL, principals, the authorizer.

Nothing here is imported unless the cluster's settings ask for it (the plain request path
stays as fast as it is): ``authorizer`` (Kafka's StandardAuthorizer over the cluster's ACLs)
and ``enforcement`` (the authorization seam of the request pipeline) with ``authorizer=True``.
"""
