"""SCRAM credentials as RFC 5802 defines them and Kafka keeps them (no password kept)."""

import base64
import hashlib
import hmac

from fakebroker.state.credentials import Credentials, ScramCredential


def test_a_credential_matches_rfc_7677s_example():
    # RFC 7677 section 3: user "user", password "pencil", salt W22ZaJ0SNY7soEsUEjb6gQ==,
    # 4096 iterations; the server signature v= of its exchange follows from ServerKey.
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    credential = ScramCredential.from_password("SCRAM-SHA-256", "pencil", salt, 4096)
    auth_message = (b"n=user,r=rOprNGfwEbeRWgbNEkqO,"
                    b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                    b"s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,"
                    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")
    signature = hmac.digest(credential.server_key, auth_message, "sha256")
    assert base64.b64encode(signature) == b"6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def test_every_sasl_user_is_a_plain_user_with_both_scram_credentials():
    users = Credentials(("alice:alice-secret", "bob:b:with:colons"))
    assert users.plain_password("alice") == "alice-secret"
    assert users.plain_password("bob") == "b:with:colons"
    assert users.plain_password("carol") is None
    alice = users.scram("SCRAM-SHA-512", "alice")
    assert alice is not None and alice.iterations == 4096
    salted = hashlib.pbkdf2_hmac("sha512", b"alice-secret", alice.salt, 4096)
    client_key = hmac.digest(salted, b"Client Key", "sha512")
    assert hashlib.sha512(client_key).digest() == alice.stored_key
    assert set(users.scram_users()) == {"alice", "bob"}


def test_a_scram_credential_is_replaced_and_deleted_per_mechanism():
    users = Credentials(("alice:one",))
    users.set_scram("alice", ScramCredential.from_password("SCRAM-SHA-256", "two"))
    assert users.delete_scram("alice", "SCRAM-SHA-512")
    assert not users.delete_scram("alice", "SCRAM-SHA-512")
    assert set(users.scram_users()["alice"]) == {"SCRAM-SHA-256"}
    assert users.delete_scram("alice", "SCRAM-SHA-256")
    assert users.scram_users() == {}
    assert users.plain_password("alice") == "one"  # PLAIN users are the setting's
