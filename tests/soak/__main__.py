"""`make soak`: the chaos soak on a database of its own, created, migrated and dropped by this command.

    python -m tests.soak --seconds 300 [--tasks 100] [--workspaces 4] [--seed 17] [--keep]

DATABASE_URL names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/); the database used is
`lomote_soak`. REDIS_URL (default redis://127.0.0.1:6379/0) is the channel layer the cluster uses; pass
`--no-redis` to run without one. Exit status 0 only if every invariant held.
"""

import argparse
import os
import sys
import tempfile
from urllib.parse import urlsplit, urlunsplit

SOAK_DB = "lomote_soak"


def _database_url() -> str:
    parts = urlsplit(os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres")
    if parts.scheme not in {"postgres", "postgresql"}:
        sys.exit("the soak needs PostgreSQL: set DATABASE_URL to a postgres:// server")
    return urlunsplit(parts._replace(path=f"/{SOAK_DB}"))


def _recreate(url: str) -> None:
    import psycopg
    from psycopg import sql

    admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(SOAK_DB)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(SOAK_DB)))


def _drop(url: str) -> None:
    import psycopg
    from psycopg import sql

    admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(SOAK_DB)))


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.soak", description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--workspaces", type=int, default=4)
    parser.add_argument("--kill-every", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--no-redis", action="store_true")
    parser.add_argument("--no-chaos", action="store_true", help="no kills nor restarts: the load alone")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards, to look at it")
    args = parser.parse_args()

    url = _database_url()
    redis_url = "" if args.no_redis else os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    _recreate(url)
    os.environ.update(
        DATABASE_URL=url,
        REDIS_URL=redis_url,
        DJANGO_SETTINGS_MODULE="lomote.settings",
        CONN_MAX_AGE="0",
        LOG_LEVEL=os.environ.get("LOG_LEVEL", "WARNING"),
        LOMOTE_VAR_DIR=os.environ.get("LOMOTE_VAR_DIR") or tempfile.mkdtemp(prefix="lomote-soak-"),
    )
    if not redis_url:
        os.environ.pop("REDIS_URL")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)

    from tests.soak.run import SoakConfig, soak

    config = SoakConfig(
        database_url=url,
        redis_url=redis_url,
        seconds=args.seconds,
        tasks=args.tasks,
        workspaces=args.workspaces,
        kill_every=args.kill_every,
        seed=args.seed,
        chaos=not args.no_chaos,
    )
    try:
        report = soak(config)
    finally:
        from django.db import connections

        connections.close_all()
    print(report.text())
    if not report.passed:
        print(report.logs[-6000:])
    if not args.keep:
        _drop(url)
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
