"""Prepared statements for the runtime's hot SQL (issue 17): planned once per connection, not at every step.

Django binds parameters on the client and turns psycopg's prepared statements off (for transaction-mode
poolers), so the server plans every statement anew. For the step's few large statements (the snapshot's nine
correlated subqueries, the decision's data-modifying CTEs) planning cost more than running: 0.47 ms of
planning beside 0.25 ms of execution for the snapshot. `prepared_cursor()` is Django's cursor (connection
checks, error wrapping, query logging and execute wrappers all still apply) over a server-binding psycopg
cursor that prepares what it executes on first use.

settings.py sets the connection's `prepare_threshold` so high that nothing else is ever prepared by count;
`LOMOTE_DB_PREPARED=0` leaves preparation off everywhere (behind a pooler that cannot keep them).
"""

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

import psycopg
from django.db import connection
from psycopg._queries import PostgresQuery, _query2pg_nocache

# psycopg converts a statement's `%(name)s` placeholders to `$n` with a regex at every execution unless the
# text is at most 4 KB (psycopg._queries.MAX_CACHED_STATEMENT_LENGTH); the decision statement that also reads the
# next snapshot is 7.5 KB, a regex pass at every step. These statements are a few fixed texts: convert each once,
# sharing the result as psycopg's own cache does. (psycopg internals, pinned in requirements.txt;
# tests/lomote/kernel/test_prepared.py checks the cache.)
_converted = lru_cache(maxsize=64)(_query2pg_nocache)


class _ConvertedOnce(PostgresQuery):
    def convert(self, query, vars) -> None:
        if vars is None or not isinstance(query, str | bytes):
            return super().convert(query, vars)
        query = query.encode(self._tx.encoding) if isinstance(query, str) else query
        self.query, self._want_formats, self._order, self._parts = _converted(query, self._tx.encoding)
        self.dump(vars)


class AlwaysPrepared(psycopg.Cursor):
    """Server-side binding, prepared from the first execution (psycopg keeps the statements per connection, at
    most `prepared_max`, and forgets them on a rollback or a schema change)."""

    _query_cls = _ConvertedOnce

    def execute(self, query, params=None, *, prepare=None, binary=None):
        super().execute(query, params, prepare=True, binary=binary)
        if self._query is None:
            # psycopg leaves `_query` unset on a prepared execution, and it is what Django's query log reads
            # (DatabaseOperations.last_executed_query): give it the statement as written.
            self._query = _Written(query, params)
        return self


class _Written:
    def __init__(self, query: str, params):
        self.query, self.params = query.encode(), params


def prepared_enabled() -> bool:
    return (
        connection.vendor == "postgresql" and connection.settings_dict["OPTIONS"].get("prepare_threshold") is not None
    )


@contextmanager
def prepared_cursor() -> Iterator:
    """A cursor whose statements are prepared (PostgreSQL with preparation on), else Django's own cursor."""
    cursor = connection.cursor()
    if prepared_enabled():
        cursor.cursor.close()
        cursor.cursor = AlwaysPrepared(connection.connection)
    with cursor:
        yield cursor
