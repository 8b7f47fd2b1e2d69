from rest_framework.pagination import LimitOffsetPagination


class CursorlessPagination(LimitOffsetPagination):
    """Limit/offset pages with a hard ceiling so no request can ask for the whole table."""

    default_limit = 50
    max_limit = 500
