class IdConverter:
    """A database id in a URL: at most 18 digits, so it always fits a 64-bit column.

    Django's `int` converter accepts any length, and an id past 2**63 crashes the database driver (a 500);
    with this one such a path simply does not match (a 404).
    """

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value) -> str:
        return str(value)
