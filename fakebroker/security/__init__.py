"""Security per listener: TLS contexts and the certificates a cluster makes for itself
(``tls``, ``certificates``); the SASL exchange and the authorizer live beside them.

Nothing here is imported by a cluster without a TLS listener."""
