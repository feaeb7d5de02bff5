"""Control of a running cluster from outside Python: named actions, scenario files, the HTTP
API and ``fakebroker ctl``."""
