"""Ids in the form Kafka gives them: a ``Uuid`` as its ``toString`` prints it.

``kafka_uuid_text`` is what ``Uuid.randomUuid().toString()`` makes: the URL-safe base64 of 16
random bytes without padding (22 characters), never one that starts with a dash (Kafka draws
again, so the id cannot be read as a command-line option). Cluster ids (as
``kafka-storage random-uuid`` prints them) and delegation token ids take this form.
"""

from __future__ import annotations

import base64
import uuid


def kafka_uuid_text() -> str:
    """A fresh random id in Kafka's ``Uuid.toString`` form (22 characters)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text
