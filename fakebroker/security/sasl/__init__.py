"""The SASL exchange of a connection, as Kafka's broker speaks it, with no I/O in it.

* ``connection``: ``SaslConnection``, one per connection of a SASL listener: Kafka's
  SaslServerAuthenticator and the session rules of its KafkaChannel and SocketServer (what
  may come before authentication, the unframed v0 tokens, session lifetimes, KIP-368
  re-authentication, expired sessions).
* ``mechanisms``: what a mechanism's server answers a client's token with, and the failures
  Kafka tells apart; ``plain``, ``scram`` and ``oauthbearer``: Kafka's PlainSaslServer,
  ScramSaslServer and OAuthBearerSaslServer with its unsecured JWT validator.
* ``logins``: where the mechanisms find credentials (the cluster's users' store).

Imported for a connection of a SASL listener only.
"""
