"""Apache Kafka itself, as the users' second broker: installed from Maven Central by a pinned
lock list (``install``), run as one KRaft node or a cluster of N (``launch``, and ``serve``
behind ``fakebroker kafka serve``)."""
