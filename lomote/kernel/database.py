from urllib.parse import quote

from django.db import connection


def current_database_url() -> str:
    """A DATABASE_URL naming the database this process uses right now (a test database during tests), so a
    child process (a qcluster started by a command) works on the same data."""
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"
    credentials = quote(db["USER"] or "", safe="")
    if db.get("PASSWORD"):
        credentials += ":" + quote(db["PASSWORD"], safe="")
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{credentials}@{host}:{port}/{quote(db['NAME'], safe='')}"
