"""moto's server (DynamoDB, S3, Step Functions) with one request handled at a time.

moto's DynamoDB transactions are not atomic under concurrent requests: a cancelled
TransactWriteItems restores a copy of the whole table taken before it ran, erasing writes
that other requests committed meanwhile. Real DynamoDB never loses a committed write, so the
tests that race writers against each other need the server to apply requests one by one.
Connections are still accepted concurrently.

A transaction's rollback keeps the items it names, not whole tables: moto deep-copies every
table a TransactWriteItems names before applying it (once per item), and over the test suite
that copy was half of moto's CPU time (cProfile, the moto-backed tests of safety_attacks,
session_attacks and recipe_admin_api: 123 of 249 s in `copy.deepcopy`). With one request at a
time, the items a transaction names are the only ones it can change, so restoring them on
failure leaves the tables as moto's own rollback does (the store conformance suite's racing
writers and cancelled transactions check it on moto).

moto also lists its own package directory (a `listdir` and a `stat` per entry) twice for
every request, to tell a service's host from another: 22 of 185 s of moto's CPU under cProfile
over a whole `scripts/test` run (2026-11-30; its response serialiser took 60 s, its DynamoDB
operations most of the rest). The list does not change while the server runs: it is read once.

Usage: python moto_server.py HOST PORT
"""

import copy
import sys
import threading

from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)


def roll_back_only_the_named_items() -> None:
    """Makes a cancelled transaction restore the items it names instead of whole tables."""
    from moto.dynamodb import models
    from moto.dynamodb.models.table import Table

    class TablesUncopied:
        """`copy` as moto's DynamoDB backend sees it: a table is not copied (the backend
        copies one only to keep it for a transaction's rollback, which `transact` does)."""

        copy = staticmethod(copy.copy)

        @staticmethod
        def deepcopy(x, memo=None):
            return x if isinstance(x, Table) else copy.deepcopy(x, memo)

    models.copy = TablesUncopied
    apply = models.DynamoDBBackend.transact_write_items

    def transact(self, transact_items):
        kept = []
        for entry in transact_items:
            try:
                kind, op = next(iter(entry.items()))
                table = self.tables[op["TableName"]]
                hash_key, range_key = self.get_keys_value(table, op["Item" if kind == "Put" else "Key"])
                kept.append((table, hash_key, range_key, copy.deepcopy(table.get_item(hash_key, range_key))))
            except Exception:
                continue  # malformed: moto refuses the transaction before writing anything
        try:
            return apply(self, transact_items)
        except Exception:
            for table, hash_key, range_key, item in reversed(kept):
                if item is None:
                    table.delete_item(hash_key, range_key)
                elif range_key is not None:
                    table.items[hash_key][range_key] = item
                else:
                    table.items[hash_key] = item
            raise

    models.DynamoDBBackend.transact_write_items = transact


def list_modules_once() -> None:
    """Makes moto read the list of its service modules once instead of on every request."""
    from moto import backends

    modules = tuple(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: modules


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    roll_back_only_the_named_items()
    list_modules_once()
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
