"""moto's server (DynamoDB, S3, Step Functions) with one request handled at a time.

moto's DynamoDB transactions are not atomic under concurrent requests: a cancelled
TransactWriteItems restores a copy of the whole table taken before it ran, erasing writes
that other requests committed meanwhile. Real DynamoDB never loses a committed write, so the
tests that race writers against each other need the server to apply requests one by one.
Connections are still accepted concurrently.

Usage: python moto_server.py HOST PORT
"""

import sys
import threading

from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    app = DomainDispatcherApplication(create_backend_app)
    lock = threading.Lock()

    def one_at_a_time(environ, start_response):
        with lock:
            # Consume the response inside the lock: moto builds it lazily.
            return list(app(environ, start_response))

    run_simple(
        host,
        port,
        one_at_a_time,
        threaded=True,
        request_handler=MotoRequestHandler,
    )


if __name__ == "__main__":
    main()
