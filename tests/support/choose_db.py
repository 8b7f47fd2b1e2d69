"""Print the DATABASE_URL the test suite should use: $DATABASE_URL, else local PostgreSQL, else SQLite."""

import os
import socket


def choose() -> str:
    if os.environ.get("DATABASE_URL"):
        return os.environ["DATABASE_URL"]
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=0.5):
            return "postgres://postgres@127.0.0.1:5432/lomote"
    except OSError:
        return ""  # settings fall back to SQLite under var/


if __name__ == "__main__":
    print(choose())
